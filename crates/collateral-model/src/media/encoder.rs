//! A synthetic live video encoder after RFC 8593 §4 (the statistical model of RMCAT's
//! evaluations): frames at a reference rate (FPS, 30) whose sizes follow the target rate
//! the congestion controller last set, after the encoder's reaction latency τ_v (0.2 s),
//! clipped to the encoder's [R_min, R_max]; frame sizes and frame intervals deviate from
//! their reference values (R_v/FPS, 1/FPS) by zero-mean Laplacian noise of scale 0.15
//! (SCALE_B, SCALE_t), as cisco/syncodecs and Pion's `syncodec` implement the model.
//! Each frame is cut into RTP packets of at most [`MAX_PAYLOAD`] bytes.
//!
//! Not modelled: the RFC's transient burst after a rate change (K_B frames of a larger
//! size), audio beside the video. The key frame at the start (4 × a reference frame) is
//! this model's choice, as is reading τ_v as a delay before a target takes effect (Pion
//! instead ignores targets within τ_v of the last one it took).

use std::collections::VecDeque;

use collateral_queue::Nanos;
use rand::RngExt;
use rand_pcg::Pcg64Mcg;

use crate::traffic::UDP_HEADERS;

/// RTP payload per packet at most (the usual WebRTC packetisation, below any MTU).
pub const MAX_PAYLOAD: u32 = 1200;
/// The RTP header (RFC 3550 §5.1, no CSRC or extensions).
pub const RTP_HEADER: u32 = 12;

/// The encoder's parameters (RFC 8593 §4.1's: FPS, τ_v, R_min, R_max, key frames).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EncoderConfig {
    pub fps: f64,
    /// How long after a new target the encoder's output follows it (τ_v).
    pub reaction_lag_ns: Nanos,
    pub min_bps: f64,
    pub max_bps: f64,
    /// I-frame size as a multiple of the nominal frame.
    pub i_frame_ratio: f64,
    /// Key frames after the first (0: none).
    pub key_interval_ns: Nanos,
    /// Scale b of the Laplacian noise on P-frame sizes, relative to the nominal size.
    pub noise_scale: f64,
    /// Scale of the Laplacian noise on frame intervals, relative to 1/fps.
    pub interval_noise: f64,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            fps: 30.0,
            reaction_lag_ns: 200_000_000,
            min_bps: 150_000.0,
            max_bps: 1_500_000.0,
            i_frame_ratio: 4.0,
            key_interval_ns: 0,
            noise_scale: 0.15,
            interval_noise: 0.15,
        }
    }
}

/// One encoded frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub index: u64,
    /// When it was captured (and encoded: no encoding time is modelled).
    pub captured: Nanos,
    pub bytes: u32,
    pub key: bool,
}

/// The encoder: ask it for each frame at its capture time.
#[derive(Debug, Clone)]
pub struct Encoder {
    pub cfg: EncoderConfig,
    /// The next capture, in (fractional) ns: intervals are drawn, not rounded, so
    /// frames do not drift from the reference rate.
    next_at: f64,
    /// Targets not yet in effect: (when set, rate).
    pending: VecDeque<(Nanos, f64)>,
    /// The rate the encoder produces now (R_v).
    pub rate_bps: f64,
    next_index: u64,
    last_key: Nanos,
    rng: Pcg64Mcg,
}

impl Encoder {
    pub fn new(cfg: EncoderConfig, start: Nanos, start_bps: f64, rng: Pcg64Mcg) -> Self {
        Encoder {
            rate_bps: start_bps.clamp(cfg.min_bps, cfg.max_bps),
            cfg,
            next_at: start as f64,
            pending: VecDeque::new(),
            next_index: 0,
            last_key: start,
            rng,
        }
    }

    /// The controller sets a new target at `now`; the output follows it τ_v later.
    pub fn set_target(&mut self, now: Nanos, bps: f64) {
        self.pending.push_back((now, bps));
    }

    /// When the next frame is captured.
    pub fn next_capture(&self) -> Nanos {
        self.next_at.round() as Nanos
    }

    /// The frame due at [`next_capture`](Self::next_capture).
    pub fn next_frame(&mut self) -> Frame {
        let now = self.next_capture();
        while let Some(&(t, r)) = self.pending.front() {
            if t + self.cfg.reaction_lag_ns > now {
                break;
            }
            self.rate_bps = r.clamp(self.cfg.min_bps, self.cfg.max_bps);
            self.pending.pop_front();
        }
        let nominal = self.rate_bps / 8.0 / self.cfg.fps;
        let key = self.next_index == 0
            || (self.cfg.key_interval_ns > 0 && now >= self.last_key + self.cfg.key_interval_ns);
        let bytes = if key {
            self.last_key = now;
            nominal * self.cfg.i_frame_ratio
        } else {
            nominal * (1.0 + laplace(&mut self.rng, self.cfg.noise_scale))
        };
        let f = Frame {
            index: self.next_index,
            captured: now,
            bytes: bytes.round().max(1.0) as u32,
            key,
        };
        self.next_index += 1;
        let t0 = 1e9 / self.cfg.fps;
        let jitter = if self.cfg.interval_noise > 0.0 {
            laplace(&mut self.rng, self.cfg.interval_noise)
        } else {
            0.0
        };
        self.next_at += (t0 * (1.0 + jitter)).max(1.0);
        f
    }
}

/// A zero-mean Laplacian draw of scale `b` (inverse transform).
fn laplace(rng: &mut Pcg64Mcg, b: f64) -> f64 {
    let u: f64 = rng.random_range(-0.5..0.5);
    -b * u.signum() * (1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE).ln()
}

/// The IP lengths of the RTP packets of a frame of `bytes`: as few packets as carry it
/// in [`MAX_PAYLOAD`]-byte payloads, the bytes spread evenly over them (the first ones
/// one byte larger where it does not divide), each with RTP, UDP and IP headers.
pub fn packetize(bytes: u32) -> impl Iterator<Item = u32> {
    let n = bytes.div_ceil(MAX_PAYLOAD).max(1);
    let (q, r) = (bytes / n, bytes % n);
    (0..n).map(move |i| q + (i < r) as u32 + RTP_HEADER + UDP_HEADERS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn frames_split_into_rtp_packets_of_at_most_1200_bytes_of_payload() {
        assert_eq!(packetize(1200).collect::<Vec<_>>(), [1240]);
        assert_eq!(packetize(1201).collect::<Vec<_>>(), [641, 640]);
        assert_eq!(packetize(3000).collect::<Vec<_>>(), [1040, 1040, 1040]);
        assert_eq!(packetize(1).collect::<Vec<_>>(), [41]);
    }

    /// 30 fps at 600 kbit/s: 2500-byte frames; the first a key frame 4 × that; the
    /// target set at 100 ms takes effect τ_v = 200 ms later, from the frame at 300 ms
    /// (frame 9), clipped to the 1.5 Mbit/s maximum.
    #[test]
    fn sizes_follow_the_target_after_the_reaction_lag() {
        let cfg = EncoderConfig {
            noise_scale: 1e-12,
            interval_noise: 0.0,
            ..Default::default()
        };
        let mut e = Encoder::new(cfg, 0, 600_000.0, Pcg64Mcg::seed_from_u64(1));
        e.set_target(100_000_000, 3_000_000.0);
        let frames: Vec<Frame> = (0..12).map(|_| e.next_frame()).collect();
        assert!(frames[0].key && frames[0].bytes == 10_000);
        assert_eq!(frames[1].captured, 33_333_333);
        assert_eq!(frames[3].captured, 100_000_000);
        for f in &frames[1..9] {
            assert_eq!((f.key, f.bytes), (false, 2500), "{f:?}");
        }
        assert_eq!(frames[9].captured, 300_000_000);
        for f in &frames[9..] {
            assert_eq!(f.bytes, 6250, "{f:?}"); // 1.5 Mbit/s / 8 / 30
        }
    }

    /// Over many frames the P-frames' mean is the nominal size (zero-mean noise) and
    /// their mean absolute deviation the scale b (a Laplacian's), 0.15 of 5000 B; the
    /// frame intervals likewise: mean 1/30 s, mean absolute deviation 0.15 of it.
    #[test]
    fn p_frame_noise_is_laplacian_of_scale_b() {
        let mut e = Encoder::new(
            EncoderConfig::default(),
            0,
            1_200_000.0,
            Pcg64Mcg::seed_from_u64(7),
        );
        e.next_frame();
        let n = 100_000;
        let mut gaps = Vec::with_capacity(n);
        let sizes: Vec<f64> = (0..n)
            .map(|_| {
                let f = e.next_frame();
                gaps.push((e.next_capture() - f.captured) as f64);
                f.bytes as f64
            })
            .collect();
        let mean = sizes.iter().sum::<f64>() / n as f64;
        let mad = sizes.iter().map(|s| (s - 5000.0).abs()).sum::<f64>() / n as f64;
        assert!((mean / 5000.0 - 1.0).abs() < 0.003, "{mean}");
        assert!((mad / 750.0 - 1.0).abs() < 0.02, "{mad}");
        let t0 = 1e9 / 30.0;
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let mad = gaps.iter().map(|g| (g - t0).abs()).sum::<f64>() / n as f64;
        assert!((mean / t0 - 1.0).abs() < 0.003, "{mean}");
        assert!((mad / (0.15 * t0) - 1.0).abs() < 0.02, "{mad}");
    }
}
