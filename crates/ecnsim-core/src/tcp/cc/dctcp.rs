//! DCTCP: the sender estimates the fraction of its data that met congestion (CE marks echoed
//! one for one by the receiver) and cuts its window in proportion, once per window.
//!
//! Read first: RFC 8257 §3.3 (the sender: alpha and the window), §4.2 (g); Alizadeh et al.,
//! "Data Center TCP", SIGCOMM 2010, §3.1; Linux `net/ipv4/tcp_dctcp.c`. The receiver's CE
//! state machine (RFC 8257 §3.2) lives in the socket (`tcp/socket.rs`), since it shapes ACKs.
//!
//! Alpha is a fixed-point fraction of 1024, as Linux's `dctcp_alpha` (DCTCP_MAX_ALPHA).

use super::Window;
use crate::spec::DctcpFraction;

/// alpha = 1 in Linux's fixed point (`DCTCP_MAX_ALPHA`).
pub(crate) const ALPHA_ONE: u32 = 1024;

/// DCTCP's parameters and per-connection state (held behind a pointer by [`super::AnyCc`]).
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// g = 2^-shift_g (RFC 8257 §4.2: 1/16).
    shift_g: u32,
    /// F counts packets or bytes.
    fraction: DctcpFraction,
    /// alpha, 1/1024 (RFC 8257 §3.3).
    alpha: u32,
    /// The end of the current observation window: alpha is updated once SND.UNA reaches it.
    next_seq: u64,
    /// Acknowledged, in the window (packets or bytes).
    acked: u64,
    /// Acknowledged by ACKs with ECE, in the window.
    acked_ece: u64,
    /// No window growth until SND.UNA passes this point (the window of the last reduction).
    hold_until: u64,
    /// The marks come from AccECN's counters (RFC 9768) through [`Dctcp::on_accecn_feedback`],
    /// not from the ECE flag of each ACK.
    exact: bool,
    /// Receiver (RFC 8257 §3.2): the delayed ACK outstanding when the CE state changed, of this
    /// RCV.NXT, is due with the previous state's ECE.
    pub(crate) prior_ack: Option<u64>,
}

impl Dctcp {
    /// DCTCP with gain 2^-`shift_g`; `snd_nxt` is where the first observation window ends.
    #[must_use]
    pub fn new(shift_g: u32, fraction: DctcpFraction, snd_nxt: u64) -> Self {
        Dctcp {
            shift_g,
            fraction,
            // RFC 8257 §3.3: alpha SHOULD be initialised to 1 (Linux dctcp_alpha_on_init = DCTCP_MAX_ALPHA).
            alpha: ALPHA_ONE,
            next_seq: snd_nxt,
            acked: 0,
            acked_ece: 0,
            hold_until: 0,
            exact: false,
            prior_ack: None,
        }
    }

    /// alpha, in 1/1024.
    #[must_use]
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// Every ACK (of new data or a duplicate), before the window reacts to it: `acked` bytes newly
    /// acknowledged (0 for a duplicate ACK), `ece` its ECN-Echo, `snd_una` / `snd_nxt` after it.
    pub(crate) fn on_ack_event(&mut self, acked: u64, ece: bool, mss: u64, snd_una: u64, snd_nxt: u64) {
        let units = match self.fraction {
            // SIGCOMM 2010 §3.1: F is the fraction of packets marked; current Linux counts delivered
            // packets (tcp_dctcp.c: delivered, delivered_ce); a duplicate ACK reports one packet.
            DctcpFraction::Packets => acked.div_ceil(mss.max(1)).max(1),
            // RFC 8257 §3.3 step 2: bytes acknowledged; earlier Linux (acked_bytes_total) counts a
            // duplicate ACK as one MSS.
            DctcpFraction::Bytes => {
                if acked == 0 {
                    mss
                } else {
                    acked
                }
            }
        };
        // RFC 8257 §3.3 step 2-3: count bytes acknowledged, and those with ECE (with AccECN, the
        // marked ones were counted exactly by `on_accecn_feedback`).
        self.acked += units;
        if ece && !self.exact {
            self.acked_ece += units;
        }
        // RFC 8257 §3.3 step 4: once SND.UNA passes the window end, update alpha.
        if snd_una >= self.next_seq {
            // RFC 8257 §3.3 step 5-6: F = marked / acknowledged; alpha = (1 - g) alpha + g F
            // (Linux: alpha -= min_not_zero(alpha, alpha >> g), then + (F << (10 - g))).
            let decay = self.alpha >> self.shift_g;
            self.alpha -= if decay == 0 { self.alpha } else { decay };
            if self.acked_ece > 0 {
                let gf = (self.acked_ece << (10 - self.shift_g)) / self.acked.max(1);
                self.alpha = (self.alpha + u32::try_from(gf).unwrap_or(ALPHA_ONE)).min(ALPHA_ONE);
            }
            // RFC 8257 §3.3 step 7: a new observation window, to SND.NXT.
            self.acked = 0;
            self.acked_ece = 0;
            self.next_seq = snd_nxt;
        }
    }

    /// AccECN was negotiated: from now on the marks are counted by [`Dctcp::on_accecn_feedback`].
    pub(crate) fn use_accecn(&mut self) {
        self.exact = true;
    }

    /// An ACK's AccECN feedback (RFC 9768), before [`Dctcp::on_ack_event`] for the same ACK:
    /// `packets` and `bytes` newly reported CE-marked. RFC 8257 §3.3 step 3 counts the bytes
    /// acknowledged with ECE as marked, an approximation of the bytes that met congestion that
    /// classic feedback forces (one flag per ACK, which may stand for two segments); AccECN
    /// reports them one for one (RFC 9768 §1: "whenever more than one marking is received in
    /// one RTT").
    pub(crate) fn on_accecn_feedback(&mut self, packets: u64, bytes: u64) {
        debug_assert!(self.exact);
        self.acked_ece += match self.fraction {
            DctcpFraction::Packets => packets,
            DctcpFraction::Bytes => bytes,
        };
    }

    /// An ECN-Echo that starts a reduction (at most once per window, the socket's rule): RFC 8257
    /// §3.3 step 8, cwnd = cwnd * (1 - alpha / 2); `snd_max` ends the window of the reduction.
    pub(crate) fn on_ecn_echo(&mut self, w: &mut Window, basis: u64, snd_max: u64) -> bool {
        // RFC 8257 §3.3 step 8: cwnd = cwnd * (1 - alpha / 2) (Linux dctcp_ssthresh(): cwnd - (cwnd *
        // alpha >> 11), at least 2 segments).
        let cut = u64::try_from((u128::from(basis) * u128::from(self.alpha)) >> 11).expect("below basis");
        let reduced = basis - cut;
        w.ssthresh = reduced.max(2 * w.mss);
        w.cwnd = w.ssthresh;
        // Linux tcp_cong_control(): in the CWR state (until snd_una passes high_seq = snd_nxt) cwnd is
        // reduced, not raised.
        self.hold_until = snd_max;
        reduced < w.mss
    }

    /// Whether an ACK up to `snd_una` may open the window (not within the reduced window).
    pub(crate) fn may_grow(&self, snd_una: u64) -> bool {
        snd_una > self.hold_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    const MSS: u64 = 1000;

    #[test]
    fn alpha_moves_by_g_towards_the_marked_fraction_once_per_window() {
        // RFC 8257 §3.3: alpha starts at 1; a window with nothing marked gives alpha = 15/16.
        let mut d = Dctcp::new(4, DctcpFraction::Packets, 10 * MSS);
        for i in 1..=10 {
            d.on_ack_event(MSS, false, MSS, i * MSS, 20 * MSS);
        }
        assert_eq!(d.alpha(), 1024 - 64);
        // The next window: 5 of 10 packets marked: alpha = 960 - 60 + (5 << 6) / 10 = 932.
        for i in 11..=20 {
            d.on_ack_event(MSS, i % 2 == 0, MSS, i * MSS, 30 * MSS);
        }
        assert_eq!(d.alpha(), 960 - 60 + 32);
        // Not before the window ends: alpha unchanged mid-window.
        d.on_ack_event(MSS, true, MSS, 21 * MSS, 31 * MSS);
        assert_eq!(d.alpha(), 932);
    }

    #[test]
    fn bytes_and_packets_differ_on_partial_segments() {
        // One window: a marked 1000-byte segment and an unmarked 100-byte one. Packets: F = 1/2;
        // bytes: F = 1000/1100.
        let mut p = Dctcp::new(4, DctcpFraction::Packets, 1100);
        let mut b = Dctcp::new(4, DctcpFraction::Bytes, 1100);
        for d in [&mut p, &mut b] {
            d.alpha = 0;
            d.on_ack_event(1000, true, MSS, 1000, 5000);
            d.on_ack_event(100, false, MSS, 1100, 5000);
        }
        assert_eq!(p.alpha(), (1 << 6) / 2);
        assert_eq!(b.alpha(), (1000 << 6) / 1100);
    }

    /// With AccECN the marked count is exact: two segments on one (delayed) ACK of which one is
    /// marked count one, where classic ECE would count both (RFC 8257 §3.3 step 3).
    #[test]
    fn accecn_counts_each_mark_where_ece_counts_the_whole_ack() {
        let mut classic = Dctcp::new(4, DctcpFraction::Packets, 10 * MSS);
        let mut exact = Dctcp::new(4, DctcpFraction::Packets, 10 * MSS);
        exact.use_accecn();
        for d in [&mut classic, &mut exact] {
            d.alpha = 0;
        }
        for i in 1..=5 {
            // Five delayed ACKs of two segments; the first segment of each is marked.
            classic.on_ack_event(2 * MSS, true, MSS, 2 * i * MSS, 20 * MSS);
            exact.on_accecn_feedback(1, MSS);
            exact.on_ack_event(2 * MSS, true, MSS, 2 * i * MSS, 20 * MSS);
        }
        // F = 10/10 with ECE, 5/10 with AccECN: alpha = F / 16.
        assert_eq!(classic.alpha(), 64);
        assert_eq!(exact.alpha(), 32);
        // Bytes: the option's CE bytes.
        let mut b = Dctcp::new(4, DctcpFraction::Bytes, 2 * MSS);
        b.use_accecn();
        b.alpha = 0;
        b.on_accecn_feedback(1, 500);
        b.on_ack_event(2 * MSS, true, MSS, 2 * MSS, 4 * MSS);
        assert_eq!(b.alpha(), (500 << 6) / 2000);
    }

    #[test]
    fn small_alpha_decays_to_zero() {
        // Linux: alpha -= min_not_zero(alpha, alpha >> g): below 16 (g = 1/16) alpha drops to 0.
        let mut d = Dctcp::new(4, DctcpFraction::Packets, MSS);
        d.alpha = 15;
        d.on_ack_event(MSS, false, MSS, MSS, 2 * MSS);
        assert_eq!(d.alpha(), 0);
    }

    #[test]
    fn reduction_is_proportional_to_alpha() {
        let mut d = Dctcp::new(4, DctcpFraction::Packets, MSS);
        let mut w = Window::new(100 * MSS, u64::MAX / 2, MSS, u64::MAX / 4, CaIncrease::ByteCounting);
        // RFC 8257 §3.3 step 8 with alpha = 1: halve.
        d.on_ecn_echo(&mut w, 100 * MSS, 200 * MSS);
        assert_eq!((w.cwnd, w.ssthresh), (50 * MSS, 50 * MSS));
        // alpha = 1/4: cwnd * (1 - 1/8).
        d.alpha = 256;
        d.on_ecn_echo(&mut w, 80 * MSS, 200 * MSS);
        assert_eq!(w.cwnd, 70 * MSS);
        // alpha = 0: no reduction; never below 2 segments.
        d.alpha = 0;
        d.on_ecn_echo(&mut w, 70 * MSS, 200 * MSS);
        assert_eq!(w.cwnd, 70 * MSS);
        d.alpha = 1024;
        d.on_ecn_echo(&mut w, 2 * MSS, 200 * MSS);
        assert_eq!(w.cwnd, 2 * MSS);
        // No growth within the reduced window.
        assert!(!d.may_grow(200 * MSS) && d.may_grow(200 * MSS + 1));
    }
}
