//! The bufferbloat grade of DSLReports' speed test (FAQ 17930): the average of the
//! download and upload latency increase over idle, graded A+ below 5 ms, A below 30,
//! B below 60, C below 200, D below 400, F from 400 ms. Waveform's test shows grades
//! too but does not publish its rule.

/// The grade's upper bounds (ms, exclusive), best first; beyond the last: F.
pub const BOUNDS_MS: [(f64, &str); 5] = [
    (5.0, "A+"),
    (30.0, "A"),
    (60.0, "B"),
    (200.0, "C"),
    (400.0, "D"),
];

/// The grades, best first: those [`BOUNDS_MS`] names, then F.
pub fn grades_best_first() -> impl Iterator<Item = &'static str> {
    BOUNDS_MS.iter().map(|g| g.1).chain(["F"])
}

/// The grade of a latency increase of `increase_ms` ("" when unknown). A negative
/// increase (loaded below idle, possible with few samples) grades as none: A+.
pub fn bufferbloat_grade(increase_ms: f64) -> &'static str {
    if increase_ms.is_nan() {
        return "";
    }
    BOUNDS_MS
        .iter()
        .find(|(b, _)| increase_ms < *b)
        .map_or("F", |g| g.1)
}

/// The increase DSLReports grades: the mean of the download and upload phases'
/// increases; a test loading both directions at once (RRUL) has one phase, passed as both.
pub fn graded_increase_ms(down_increase_ms: f64, up_increase_ms: f64) -> f64 {
    (down_increase_ms + up_increase_ms) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_grade_boundary() {
        for (ms, g) in [
            (0.0, "A+"),
            (4.999, "A+"),
            (5.0, "A"),
            (29.999, "A"),
            (30.0, "B"),
            (59.999, "B"),
            (60.0, "C"),
            (199.999, "C"),
            (200.0, "D"),
            (399.999, "D"),
            (400.0, "F"),
            (5000.0, "F"),
            (-3.0, "A+"),
        ] {
            assert_eq!(bufferbloat_grade(ms), g, "{ms} ms");
        }
        assert_eq!(bufferbloat_grade(f64::NAN), "");
        // Down +50 ms, up +150 ms: average 100 → C.
        assert_eq!(bufferbloat_grade(graded_increase_ms(50.0, 150.0)), "C");
    }

    #[test]
    fn the_grades_best_first_are_every_grade_the_rule_gives() {
        let order: Vec<&str> = grades_best_first().collect();
        assert_eq!(order, ["A+", "A", "B", "C", "D", "F"]);
        // Rising increases never grade better (the order the advisor's goals compare by).
        let mut last = 0;
        for ms in 0..1000 {
            let k = order
                .iter()
                .position(|&g| g == bufferbloat_grade(ms as f64));
            let k = k.expect("a grade in the order");
            assert!(k >= last, "{ms} ms");
            last = k;
        }
    }
}
