//! Real-time quality from delay and loss: the ITU-T G.107 E-model's rating R and its
//! MOS, and the share of packets over the delay budgets of games (SPEC §6).
//!
//! The E-model (G.107, 06/2015 edition) rates a call `R = Ro − Is − Id − Ie,eff + A`:
//! `Ro` and `Is` from the default loudness, noise and sidetone values (93.2 in all with
//! no delay and no loss); `Id = Idte + Idle + Idd` from the talker-echo delay `T`, the
//! listener-echo round trip `Tr` and the absolute mouth-to-ear delay `Ta`;
//! `Ie,eff = Ie + (95 − Ie)·Ppl/(Ppl/BurstR + Bpl)` from the packet-loss percentage.
//! `MOS = 1 + 0.035R + R(R − 60)(100 − R)·7·10⁻⁶` (1 below R = 0, 4.5 above 100).
//!
//! Every formula is G.107's with its default parameters (SLR 8, RLR 2, STMR 15,
//! LSTR 18, Ds = Dr = 3, TELR 65, WEPL 110, Nc −70, Nfor −64, Ps = Pr = 35, qdu 1,
//! A 0); the codec is G.711 with packet-loss concealment (Ie 0, Bpl 25.1: G.113
//! Appendix I) unless given. As is usual when only the one-way delay is known,
//! `T = Ta` and `Tr = 2·Ta`.

use serde::Serialize;

const SLR: f64 = 8.0;
const RLR: f64 = 2.0;
const STMR: f64 = 15.0;
const LSTR: f64 = 18.0;
const DS: f64 = 3.0;
const TELR: f64 = 65.0;
const WEPL: f64 = 110.0;
const NC: f64 = -70.0;
const NFOR: f64 = -64.0;
const PS: f64 = 35.0;
const PR: f64 = 35.0;
const QDU: f64 = 1.0;

/// A codec's equipment impairment `Ie` and packet-loss robustness `Bpl` (G.113).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Codec {
    pub ie: f64,
    pub bpl: f64,
}

impl Codec {
    /// G.711 with packet-loss concealment.
    pub const G711_PLC: Codec = Codec { ie: 0.0, bpl: 25.1 };
    /// G.711 without concealment.
    pub const G711: Codec = Codec { ie: 0.0, bpl: 4.3 };
}

fn log10(x: f64) -> f64 {
    x.log10()
}

/// Total noise `No` (dBm0p), G.107 eq. (7-3) to (7-7).
fn no() -> f64 {
    let olr = SLR + RLR;
    let nos = PS - SLR - DS - 100.0 + 0.004 * (PS - olr - DS - 14.0).powi(2);
    let pre = PR + 10.0 * log10(1.0 + 10f64.powf((10.0 - LSTR) / 10.0));
    let nor = RLR - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
    let nfo = NFOR + RLR;
    10.0 * log10(
        10f64.powf(NC / 10.0)
            + 10f64.powf(nos / 10.0)
            + 10f64.powf(nor / 10.0)
            + 10f64.powf(nfo / 10.0),
    )
}

/// Basic signal-to-noise ratio `Ro`.
pub fn ro() -> f64 {
    15.0 - 1.5 * (SLR + no())
}

/// Simultaneous impairments `Is = Iolr + Ist + Iq` at talker-echo delay `t_ms`.
pub fn is(t_ms: f64) -> f64 {
    let no = no();
    let olr = SLR + RLR;
    let xolr = olr + 0.2 * (64.0 + no - RLR);
    let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
    let stmro =
        -10.0 * log10(10f64.powf(-STMR / 10.0) + (-t_ms / 4.0).exp() * 10f64.powf(-TELR / 10.0));
    let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
        - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
        - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
        + 29.0;
    let q = 37.0 - 15.0 * log10(QDU);
    let g = 1.07 + 0.258 * q + 0.0602 * q * q;
    let z = 46.0 / 30.0 - g / 40.0;
    let y = (ro() - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
    let iq = 15.0 * log10(1.0 + 10f64.powf(y) + 10f64.powf(z));
    iolr + ist + iq
}

/// Talker-echo impairment `Idte` at mean one-way delay `t_ms` (0 below 1 ms).
pub fn idte(t_ms: f64) -> f64 {
    if t_ms < 1.0 {
        return 0.0;
    }
    let roe = -1.5 * (no() - RLR);
    let terv = TELR - 40.0 * log10((1.0 + t_ms / 10.0) / (1.0 + t_ms / 150.0))
        + 6.0 * (-0.3 * t_ms * t_ms).exp();
    let re = 80.0 + 2.5 * (terv - 14.0);
    let d = roe - re;
    (d / 2.0 + (d * d / 4.0 + 100.0).sqrt() - 1.0) * (1.0 - (-t_ms).exp())
}

/// Listener-echo impairment `Idle` at round-trip delay `tr_ms`.
pub fn idle(tr_ms: f64) -> f64 {
    let rle = 10.5 * (WEPL + 7.0) * (tr_ms + 1.0).powf(-0.25);
    let d = ro() - rle;
    d / 2.0 + (d * d / 4.0 + 169.0).sqrt()
}

/// Pure-delay impairment `Idd` at absolute delay `ta_ms` (0 up to 100 ms).
pub fn idd(ta_ms: f64) -> f64 {
    if ta_ms <= 100.0 {
        return 0.0;
    }
    let x = (ta_ms / 100.0).log2();
    25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0)
        + 2.0)
}

/// Effective equipment impairment at `ppl` percent random loss.
pub fn ie_eff(codec: Codec, ppl: f64, burst_r: f64) -> f64 {
    codec.ie + (95.0 - codec.ie) * ppl / (ppl / burst_r + codec.bpl)
}

/// The rating R for mouth-to-ear delay `ta_ms` (with `T = Ta`, `Tr = 2·Ta`) and `ppl`
/// percent random loss.
pub fn r_factor(ta_ms: f64, ppl: f64, codec: Codec) -> f64 {
    ro() - is(ta_ms) - (idte(ta_ms) + idle(2.0 * ta_ms) + idd(ta_ms)) - ie_eff(codec, ppl, 1.0)
}

/// Mean opinion score from R (G.107 Annex B).
pub fn mos(r: f64) -> f64 {
    if r < 0.0 {
        1.0
    } else if r > 100.0 {
        4.5
    } else {
        1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
    }
}

/// The E-model's verdict on a stream.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct VoipQuality {
    pub r_factor: f64,
    pub mos: f64,
}

/// R and MOS of a G.711 (PLC) stream with mean one-way delay `owd_s` and loss rate
/// `loss` (fraction). Network delay only: codec and jitter-buffer delays are not added.
pub fn voip_quality(owd_s: f64, loss: f64) -> VoipQuality {
    if !(owd_s.is_finite() && loss.is_finite()) {
        return VoipQuality {
            r_factor: f64::NAN,
            mos: f64::NAN,
        };
    }
    let r = r_factor(owd_s * 1e3, loss * 100.0, Codec::G711_PLC);
    VoipQuality {
        r_factor: r,
        mos: mos(r),
    }
}

/// Delay budgets of games (one-way): first-person shooters, MMOs, real-time strategy.
pub const GAME_BUDGETS_S: [f64; 3] = [0.100, 0.500, 1.000];

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    /// The components at G.107's defaults and at three delays, against the values the
    /// formulas give (as tabulated by an independent implementation, bgrewell/loom's
    /// golden tests: No −61.179214, Ro 94.768822, Is 1.413568, R 93.206208).
    #[test]
    fn default_rating_is_93_2() {
        assert!(close(no(), -61.179214, 1e-5), "{}", no());
        assert!(close(ro(), 94.768822, 1e-5), "{}", ro());
        assert!(close(is(0.0), 1.413568, 1e-5), "{}", is(0.0));
        assert!(close(idle(0.0), 0.149046, 1e-5), "{}", idle(0.0));
        let r = r_factor(0.0, 0.0, Codec::G711_PLC);
        assert!(close(r, 93.206208, 1e-5), "{r}");
        assert!(close(mos(r), 4.4094, 1e-4), "{}", mos(r));
    }

    #[test]
    fn delay_impairments_by_hand() {
        // Ta = 150 ms: X = log2 1.5 = 0.5849625; Idd = 25·((1 + X⁶)^(1/6)
        // − 3·(1 + (X/3)⁶)^(1/6) + 2) = 0.163531.
        assert!(close(idd(150.0), 0.163531, 1e-6), "{}", idd(150.0));
        assert!(close(idd(200.0), 3.044414, 1e-6));
        assert!(close(idd(250.0), 8.916710, 1e-6));
        assert_eq!(idd(100.0), 0.0);
        for (ta, idte_, idle_, r) in [
            (100.0, 1.963791, 0.727733, 90.663730),
            (150.0, 2.811844, 0.840747, 89.539132),
            (250.0, 4.242856, 1.018587, 79.177101),
        ] {
            assert!(close(idte(ta), idte_, 1e-5), "Idte({ta}) = {}", idte(ta));
            assert!(
                close(idle(2.0 * ta), idle_, 1e-5),
                "Idle = {}",
                idle(2.0 * ta)
            );
            let got = r_factor(ta, 0.0, Codec::G711_PLC);
            assert!(close(got, r, 1e-5), "R({ta}) = {got}");
        }
        assert!(close(mos(79.177101), 3.992519, 1e-6));
    }

    #[test]
    fn loss_impairment_by_hand() {
        // Ie,eff = 95·Ppl/(Ppl + 25.1): 1 % → 3.639847, 5 % → 15.780731.
        assert!(close(ie_eff(Codec::G711_PLC, 1.0, 1.0), 95.0 / 26.1, 1e-12));
        assert!(close(ie_eff(Codec::G711_PLC, 5.0, 1.0), 15.780731, 1e-6));
        assert!(close(r_factor(0.0, 1.0, Codec::G711_PLC), 89.566361, 1e-5));
        // Without concealment 1 % costs far more: 95/5.3 = 17.92.
        assert!(close(ie_eff(Codec::G711, 1.0, 1.0), 95.0 / 5.3, 1e-12));
        // MOS clamps.
        assert_eq!(mos(-3.0), 1.0);
        assert_eq!(mos(120.0), 4.5);
        let q = voip_quality(0.150, 0.01);
        assert!(
            close(q.r_factor, 89.539132 - 3.639847, 1e-5),
            "{}",
            q.r_factor
        );
    }
}
