//! TCP Prague: a scalable congestion control for L4S (RFC 9330). DCTCP's estimate alpha of the
//! fraction of marked packets, fed by Accurate ECN, cuts a fractional window in proportion to
//! alpha at most once a round trip; the window moves toward that fractional window one segment
//! per ACK; additive increase counts unmarked segments only; a flow whose RTT is below a
//! reference RTT grows as if its RTT were that reference; a loss halves the window; segments
//! are paced.
//!
//! Read first: RFC 9331 §4 (the "Prague requirements" of an L4S sender), RFC 9330 §4,
//! draft-briscoe-iccrg-prague-congestion-control-04 §2, and the L4STeam Linux module
//! `net/ipv4/tcp_prague.c` (version 0.6, `L4STeam/linux`), which decides what the documents
//! leave open. Where the later version 0.7 (2024) differs, the comment says so.
//!
//! Units follow Linux: alpha in 2^-20 (`PRAGUE_ALPHA_BITS`), kept upscaled by 1/g; the fractional
//! window in 2^-20 segments (`CWND_UNIT`). ecnsim's window is bytes, a whole number of
//! segments here.
//!
//! The socket negotiates AccECN (RFC 9768) for Prague; without it the connection runs as Reno
//! (Linux `prague_init()` switches to `prague_reno`), which the socket does by replacing the
//! algorithm at the end of the handshake (`tcp/socket.rs`).

use std::collections::VecDeque;

use super::pacing::{mul_div, Pacer};
use super::Window;
use crate::spec::PragueEcnFallback;
use crate::time::{SimDuration, SimTime};

/// Linux tcp_prague.c `PRAGUE_ALPHA_BITS` 20: alpha's fixed point.
pub(crate) const ALPHA_BITS: u32 = 20;
/// alpha = 1.
pub(crate) const ALPHA_ONE: u64 = 1 << ALPHA_BITS;
/// Linux tcp_prague.c `CWND_UNIT` 20: the fractional window's fixed point (segments).
const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
/// Linux tcp_prague.c `PRAGUE_SHIFT_G` 4: the EWMA gain g = 1/16 (as DCTCP, RFC 8257 §4.2).
const SHIFT_G: u32 = 4;
/// Linux tcp_prague.c `MIN_CWND` 2: the window never steps below two segments.
// DEVIATION(Linux): tcp_prague.c 0.7 goes below this in a rate-based mode under `prague_cwnd_transit` (4) packets (RFC 9331 §4.3 fractional windows, a SHOULD), pacing with a smaller MSS and a virtual RTT; a connection's segment size is fixed here, so the window stops at 2 segments (the pacing rate, MTU x frac_cwnd / SRTT, goes below; docs/models/prague.md, Deviations).
const MIN_CWND: u64 = 2;
/// Linux tcp_prague.c `MAX_SCALED_RTT` 100 ms: above it the increase is not scaled.
const MAX_SCALED_RTT: SimDuration = SimDuration::from_millis(100);
const NANOS: u64 = 1_000_000_000;

// The Classic-ECN-bottleneck detection of tcp_prague.c 0.6 (`prague_classic_ecn_detection()`;
// Briscoe & Ahmed, "TCP Prague Fall-back on Detection of a Classic ECN AQM", arXiv:1911.00710).
// Its score is kept in alpha's fixed point (2^-20): 1.0 = `ALPHA_ONE`.
/// tcp_prague.c `L_STICKY` (8.0): at or below it the flow behaves as pure L4S.
const L_STICKY: u64 = 8 << ALPHA_BITS;
/// tcp_prague.c `CLASSIC_ECN` (`L_STICKY` + 1.0): at or above it the fallback is whole.
const CLASSIC_ECN: u64 = L_STICKY + ALPHA_ONE;
/// tcp_prague.c `C_STICKY` (`CLASSIC_ECN` + `L_STICKY`, 17.0): the score's ceiling.
const C_STICKY: u64 = CLASSIC_ECN + L_STICKY;
/// tcp_prague.c `V0_LG`: the reference RTT variation V0, about 750 µs (here in ns).
const V0: u64 = 750_000;
/// tcp_prague.c `D0_LG`: the reference queue delay D0, about 2 ms (here in ns).
const D0: u64 = 2_000_000;
/// The least delay variation and queue delay the score counts: 1 µs, Linux's unit.
const ONE_MICRO: u64 = 1_000;
/// tcp_prague.c `PRAGUE_MAX_SRTT_BITS` 18: the detection's smoothed RTT gain is at least 2^-18.
const MAX_SRTT_SHIFT: u32 = 18;

/// Prague's parameters (the Linux module's parameters of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PragueParams {
    /// `prague_rtt_target`: the reference RTT below which the flow behaves as if it had it
    /// (Linux 25 ms); zero turns RTT independence off (`RTT_CONTROL_NONE`).
    pub rtt_target: SimDuration,
    /// `prague_rtt_transition`: rounds after slow start before RTT independence applies
    /// (Linux 0.6: 500; 0.7: 4).
    pub rtt_transition: u32,
    /// Bytes a segment of `mss` payload takes on the wire (its MTU, for the pacing rate).
    pub mtu: u64,
    /// `prague_ecn_fallback`: the Classic-ECN-bottleneck detection, and whether it acts
    /// (tcp_prague.c 0.6: 0 none, the default; 1 detection and fallback; 2 detection only).
    pub ecn_fallback: PragueEcnFallback,
}

/// What one ACK tells Prague, after the socket has processed it (Linux's `rate_sample` and the
/// socket state `prague_cong_control()` reads).
#[derive(Clone, Copy, Debug)]
pub struct PragueAck {
    /// When it arrived.
    pub now: SimTime,
    /// Segments it delivered, each counted once: newly SACKed, or cumulatively acknowledged and not
    /// SACKed before (without SACK, Linux's emulation: one per duplicate ACK); Linux `rs->acked_sacked`.
    pub acked_segments: u64,
    /// SND.UNA and SND.NXT after it.
    pub snd_una: u64,
    /// SND.NXT after it.
    pub snd_nxt: u64,
    /// The smoothed RTT, if sampled.
    pub srtt: Option<SimDuration>,
    /// The socket is in fast recovery.
    pub in_recovery: bool,
}

/// Prague's per-connection state (behind [`super::CcState`]'s pointer).
#[derive(Clone, Debug)]
pub struct Prague {
    p: PragueParams,
    /// alpha / g, in 2^-20 (Linux `upscaled_alpha`).
    upscaled_alpha: u64,
    /// The window the reductions and increases act on, 2^-20 segments (Linux `frac_cwnd`).
    frac_cwnd: u64,
    /// Increase per unmarked segment acknowledged, times the window, 2^-20 (`ai_ack_increase`).
    ai_ack_increase: u64,
    /// SND.NXT at the start of the round (`next_seq`).
    next_seq: u64,
    /// Segments delivered and delivered CE-marked, in all (`tp->delivered`, `tp->delivered_ce`).
    delivered: u64,
    delivered_ce: u64,
    /// Their values at the start of the round.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// Without SACK, the segments the duplicate ACKs report held by the receiver (Linux's SACK
    /// emulation, `sacked_out` of a Reno connection).
    reno_sacked: u64,
    /// Rounds since slow start ended (`round`).
    round: u32,
    /// A CE mark was fed back: there is an AQM on the path (`saw_ce`).
    saw_ce: bool,
    /// In a reduction for loss: no increase (`in_loss`), until SND.UNA reaches `loss_until` out
    /// of recovery.
    in_loss: bool,
    loss_until: u64,
    /// The last alpha update and the last reduction (`alpha_stamp`, `cwr_stamp`).
    alpha_stamp: SimTime,
    cwr_stamp: Option<SimTime>,
    /// CE marks newly fed back by the ACK being processed (AccECN's r.cep delta).
    pending_ce: u64,
    /// The pacing rate, bytes/s (0 until the first RTT sample: Linux starts unpaced).
    pacing_rate: u64,
    pacer: Pacer,
    segs_out: u64,
    /// The Classic-ECN-bottleneck detection's state (only kept when it is on).
    classic: ClassicEcn,
}

/// tcp_prague.c 0.6's Classic-ECN-bottleneck detection: an RTT estimator of its own (slow gain,
/// per-ACK samples), and a score that rises with RTT variation and queue delay.
#[derive(Clone, Debug, Default)]
struct ClassicEcn {
    /// The score, 2^-20 (Linux `tp->classic_ecn`): 0 to `C_STICKY`; above `L_STICKY` Classic.
    score: u64,
    /// Smoothed RTT, ns, upscaled by 2^`srtt_shift` (Linux `srtt_pace_us`); 0 before a sample.
    srtt: u64,
    /// Smoothed mean deviation, ns, upscaled by 2^(`srtt_shift` + 1) (Linux `mdev_pace_us`).
    mdev: u64,
    /// The estimator's gain 2^-srtt_shift (Linux `g_srtt_shift`; the deviation's is one more).
    srtt_shift: u32,
    /// The least RTT sampled (Linux `tcp_min_rtt()`).
    min_rtt: Option<SimDuration>,
    /// Data segments sent and not cumulatively acknowledged: (end, sent, retransmitted).
    sent: VecDeque<(u64, SimTime, bool)>,
    /// One past the highest byte sent.
    sent_max: u64,
}

impl Prague {
    /// Prague at connection start with an initial window of `iw` bytes of `mss` (Linux
    /// `prague_init()`); `snd_nxt` ends the first round.
    #[must_use]
    pub fn new(p: PragueParams, iw: u64, mss: u64, snd_nxt: u64) -> Self {
        Prague {
            p,
            // Linux 0.6 prague_init(): upscaled_alpha = PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G (alpha = 1,
            // as RFC 8257 §3.3's initial alpha).
            upscaled_alpha: ALPHA_ONE << SHIFT_G,
            frac_cwnd: (iw / mss.max(1)) << CWND_UNIT,
            ai_ack_increase: ONE_CWND,
            next_seq: snd_nxt,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            reno_sacked: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            loss_until: 0,
            alpha_stamp: SimTime::ZERO,
            cwr_stamp: None,
            pending_ce: 0,
            pacing_rate: 0,
            pacer: Pacer::default(),
            segs_out: 0,
            // Linux prague_init(): the gains start at their slowest (2^-18, 2^-19).
            classic: ClassicEcn { srtt_shift: MAX_SRTT_SHIFT, ..ClassicEcn::default() },
        }
    }

    /// alpha in 2^-20 (Linux `upscaled_alpha >> PRAGUE_SHIFT_G`).
    #[must_use]
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }
    /// The fractional window, in 2^-20 segments.
    #[must_use]
    pub fn frac_cwnd(&self) -> u64 {
        self.frac_cwnd
    }
    /// Segments counted as delivered so far (Linux `tp->delivered`).
    #[must_use]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// Set alpha (2^-20), for tests that start from a given estimate.
    #[cfg(test)]
    pub(crate) fn set_alpha(&mut self, alpha: u64) {
        self.upscaled_alpha = alpha.min(ALPHA_ONE) << SHIFT_G;
    }
    /// Rounds since slow start ended.
    #[must_use]
    pub fn round(&self) -> u32 {
        self.round
    }
    /// The pacing rate, bytes/s (0: not paced yet).
    #[must_use]
    pub fn pacing_rate(&self) -> u64 {
        self.pacing_rate
    }
    /// The Classic-ECN-bottleneck score in 2^-20 (Linux `tp->classic_ecn`; 0 to 17.0): above
    /// 8.0 the path looks like a Classic ECN bottleneck; 0 while the detection is off.
    #[must_use]
    pub fn classic_ecn(&self) -> u64 {
        self.classic.score
    }
    /// Whether the detection finds a Classic ECN bottleneck now (score above `L_STICKY`).
    #[must_use]
    pub fn classic_ecn_detected(&self) -> bool {
        self.classic.score > L_STICKY
    }
    /// Whether RTT independence applies now (Linux `prague_is_rtt_indep()`).
    #[must_use]
    pub fn rtt_independent(&self, w: &Window) -> bool {
        self.p.rtt_target > SimDuration::ZERO && !w.in_slow_start() && self.round >= self.p.rtt_transition
    }

    /// AccECN feedback of the ACK about to be processed: `ce_packets` newly CE-marked
    /// (RFC 9768 §3.2.2.3's r.cep delta; Linux `rs->ece_delta`).
    pub(crate) fn on_accecn_feedback(&mut self, ce_packets: u64) {
        self.pending_ce += ce_packets;
    }

    /// The segments an ACK delivered on a connection without SACK, by Linux's SACK emulation
    /// (`tcp_add_reno_sack()`, `tcp_remove_reno_sacks()`): a duplicate ACK reports one segment held
    /// by the receiver, unless that would leave no hole among the `packets_out` segments
    /// outstanding (`tcp_limit_reno_sacked()`); an ACK of `acked` segments delivers those not
    /// reported before, at least one (the hole). `in_recovery`: the socket is still in fast
    /// recovery after the ACK.
    pub(crate) fn reno_delivered(&mut self, acked: u64, dupack: bool, packets_out: u64, in_recovery: bool) -> u64 {
        if acked > 0 {
            // Linux tcp_remove_reno_sacks(): delivered += max(acked - sacked_out, 1); "one ACK acked hole. The rest eat duplicate ACKs".
            let delivered = acked.saturating_sub(self.reno_sacked).max(1);
            self.reno_sacked -= (acked - 1).min(self.reno_sacked);
            if !in_recovery {
                // Linux tcp_fastretrans_alert(): tcp_reset_reno_sack() on an ACK of new data out of Recovery, and at its end.
                self.reno_sacked = 0;
            }
            delivered
        } else if dupack && self.reno_sacked + 1 < packets_out {
            // Linux tcp_add_reno_sack(): sacked_out += 1, held below packets_out by tcp_limit_reno_sacked() (one hole at least); delivered += the increase.
            self.reno_sacked += 1;
            1
        } else {
            0
        }
    }

    /// An ACK of new data or a duplicate ACK, after the socket has processed it and answered any
    /// ECN-Echo (Linux `prague_cong_control()`, which runs after `tcp_enter_cwr()`).
    pub(crate) fn on_ack(&mut self, w: &mut Window, a: &PragueAck) {
        if self.p.ecn_fallback != PragueEcnFallback::None {
            self.classic.on_ack(a.now, a.snd_una);
        }
        self.update_cwnd(w, a);
        if self.should_update_ewma(w, a) {
            self.update_alpha(w, a);
        }
        self.update_pacing_rate(w, a.srtt);
    }

    /// Linux `prague_update_cwnd()`.
    fn update_cwnd(&mut self, w: &mut Window, a: &PragueAck) {
        let mss = w.mss.max(1);
        let ce = std::mem::take(&mut self.pending_ce);
        self.delivered += a.acked_segments;
        self.delivered_ce += ce;
        if self.in_loss && !a.in_recovery && a.snd_una >= self.loss_until {
            // Linux prague_ca_open(): back in the Open state, the loss reduction is over.
            self.in_loss = false;
        }
        // draft-briscoe-iccrg-prague-congestion-control §2.4.1 / tcp_prague.c note 4: additive
        // increase counts the unmarked segments only, so it is proportional to (1 - p).
        let mut acked = a.acked_segments.saturating_sub(ce);
        if ce > 0 {
            // Linux prague_update_cwnd(): a CE mark fed back proves an AQM on the path.
            self.saw_ce = true;
        }
        if acked > 0 && !self.in_loss {
            if w.in_slow_start() {
                // Linux tcp_slow_start(): cwnd += acked up to ssthresh, the rest goes to
                // congestion avoidance; 0.7 keeps frac_cwnd equal to it (0.6 left it behind).
                let cwnd = w.cwnd / mss;
                let grown = (cwnd + acked).min((w.ssthresh / mss).max(cwnd)).min(w.max_cwnd / mss);
                acked -= (grown - cwnd).min(acked);
                w.cwnd = grown * mss;
                self.frac_cwnd = grown << CWND_UNIT;
                if acked == 0 {
                    self.ai_ack_increase = self.ai_ack_increase(w, a.srtt);
                    return;
                }
            }
            // tcp_prague.c prague_update_cwnd(): frac_cwnd += acked * ai_ack_increase / cwnd, with
            // the quotient rounded to nearest and at least `acked` units (RFC 5681's 1/cwnd per
            // segment when ai_ack_increase is one).
            // tcp_prague.c 0.6 prague_update_cwnd(): the divisor is prague_frac_cwnd_to_snd_cwnd(), max(ceil(frac_cwnd), 1), not floored at MIN_CWND.
            let cwnd = self.frac_cwnd_segments().max(1);
            let increase = (acked * self.ai_ack_increase + cwnd / 2) / cwnd;
            self.frac_cwnd += increase.max(acked);
        }
        // tcp_prague.c prague_update_cwnd() "adjust": the socket's window moves one segment per ACK
        // toward the fractional window rounded up (so a reduction spreads over the ACKs of a round);
        // stepping down sets ssthresh too.
        let target = self.snd_cwnd_target(w);
        let cwnd = w.cwnd / mss;
        if cwnd > target && cwnd > MIN_CWND {
            w.cwnd = (cwnd - 1) * mss;
            w.ssthresh = w.cwnd;
            self.ai_ack_increase = self.ai_ack_increase(w, a.srtt);
        } else if cwnd < target && w.cwnd + mss <= w.max_cwnd {
            w.cwnd = (cwnd + 1) * mss;
            self.ai_ack_increase = self.ai_ack_increase(w, a.srtt);
        }
    }

    /// tcp_prague.c prague_frac_cwnd_to_snd_cwnd()'s rounding: the fractional window in whole
    /// segments, rounded up (before any floor).
    fn frac_cwnd_segments(&self) -> u64 {
        (self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT
    }

    /// Linux `prague_frac_cwnd_to_snd_cwnd()`: the fractional window rounded up, at least
    /// `MIN_CWND` (0.7) and at most the largest window, in segments.
    fn snd_cwnd_target(&self, w: &Window) -> u64 {
        self.frac_cwnd_segments().max(MIN_CWND).min((w.max_cwnd / w.mss.max(1)).max(MIN_CWND))
    }

    /// Linux `prague_should_update_ewma()`: once a round; with RTT independence, also not before
    /// the reference RTT has passed since the last update.
    fn should_update_ewma(&self, w: &Window, a: &PragueAck) -> bool {
        a.snd_una >= self.next_seq
            && (!self.rtt_independent(w) || a.now.saturating_since(self.alpha_stamp) >= self.p.rtt_target)
    }

    /// Linux `prague_update_alpha()`, then `prague_new_round()`.
    fn update_alpha(&mut self, w: &Window, a: &PragueAck) {
        // tcp_prague.c: alpha is not updated before a CE mark proves an AQM on the path.
        if self.saw_ce {
            if self.p.ecn_fallback != PragueEcnFallback::None {
                // tcp_prague.c prague_update_alpha(): with prague_ecn_fallback > 0, the detection
                // scores each round in which alpha is updated.
                self.classic.score_round();
            }
            let ce = self.delivered_ce - self.old_delivered_ce;
            let delivered = (self.delivered - self.old_delivered).max(1);
            // RFC 8257 §3.3 step 5-6 (RFC 9331 §4.3 "DCTCP-like"): F = marked / delivered;
            // alpha = (1 - g) alpha + g F, kept as alpha / g so that no remainder is lost:
            // upscaled = upscaled - upscaled * g + F.
            let f = if ce > 0 { (ce << ALPHA_BITS) / delivered } else { 0 };
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + f;
            self.upscaled_alpha = alpha.min(ALPHA_ONE << SHIFT_G);
            self.alpha_stamp = a.now;
        }
        // Linux prague_new_round(): the next round ends at SND.NXT; rounds count after slow start.
        self.next_seq = a.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !w.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.ai_ack_increase = self.ai_ack_increase(w, a.srtt);
    }

    /// Linux `prague_ai_ack_increase()` with `RTT_CONTROL_RATE` (the default heuristic).
    fn ai_ack_increase(&self, w: &Window, srtt: Option<SimDuration>) -> u64 {
        let _ = w;
        let target = self.p.rtt_target;
        match srtt {
            // RFC 9331 §4.3 (reduce RTT dependence) / tcp_prague.c prague_rate_scaled_ai_ack_increase():
            // after the transition rounds, a flow with an RTT R below the reference RTT T grows by
            // (R/T)^2 segments per round trip, so that its rate grows as a flow at T would (one
            // segment per T, at a window R/T as large).
            Some(r)
                if target > SimDuration::ZERO
                    && self.round >= self.p.rtt_transition
                    && r > SimDuration::ZERO
                    && r <= MAX_SCALED_RTT
                    && r < target =>
            {
                let (r, t) = (u128::from(r.as_nanos()), u128::from(target.as_nanos()));
                let scaled = ((r * r) << CWND_UNIT) + t * t / 2;
                u64::try_from(scaled / (t * t)).unwrap_or(ONE_CWND)
            }
            _ => ONE_CWND,
        }
    }

    /// An ECN-Echo that starts a congestion window reduction (Linux `prague_enter_cwr()`, on the
    /// socket's once-per-round-trip rule, RFC 3168 §6.1.2): frac_cwnd -= frac_cwnd * alpha / 2.
    /// The socket's window follows one segment per ACK ([`Prague::on_ack`]).
    pub(crate) fn on_enter_cwr(&mut self, w: &Window, now: SimTime) {
        // tcp_prague.c prague_ssthresh() (called as the socket enters CWR): the detection's gains
        // follow ssthresh.
        self.classic.update_gain(w);
        // tcp_prague.c prague_enter_cwr(): with RTT independence, at most one reduction per
        // reference RTT.
        if self.rtt_independent(w) && self.cwr_stamp.is_some_and(|t| now.saturating_since(t) < self.p.rtt_target) {
            return;
        }
        self.cwr_stamp = Some(now);
        let alpha = self.reduction_alpha();
        // RFC 9331 §4.3 / RFC 8257 §3.3 step 8: cwnd = cwnd * (1 - alpha / 2), rounded to nearest
        // (tcp_prague.c: "unbias the rounding by adding 1/2").
        let reduction = (u128::from(alpha) * u128::from(self.frac_cwnd) + u128::from(ALPHA_ONE)) >> (ALPHA_BITS + 1);
        self.frac_cwnd -= u64::try_from(reduction).expect("at most half of frac_cwnd");
    }

    /// The alpha a reduction uses (Linux prague_enter_cwr() and prague_classic_ecn_fallback()).
    /// RFC 9331 §4.3 (fall back to Reno-friendly congestion control on Classic ECN bottlenecks):
    /// with `prague_ecn_fallback = 1` and a score above `L_STICKY`, alpha is raised to at least
    /// (min(score, CLASSIC_ECN) - L_STICKY) * 5/8 (tcp_prague.c "c * ~0.6", "to compete fair
    /// with classic AQMs"): at a score of 9 or more, every reduction cuts at least 5/16 of the
    /// window, near CUBIC's 0.3 (RFC 9438 §4.6).
    fn reduction_alpha(&self) -> u64 {
        let alpha = self.alpha();
        if self.p.ecn_fallback != PragueEcnFallback::Fallback || self.classic.score <= L_STICKY {
            return alpha;
        }
        let c = self.classic.score.min(CLASSIC_ECN) - L_STICKY;
        alpha.max((c >> 1) + (c >> 3))
    }

    /// Fast retransmit (Linux `prague_enter_loss()` on entering Recovery): RFC 9331 §4.3 requires
    /// a Reno-friendly response to loss: the window halves, and does not grow until recovery ends.
    pub(crate) fn on_enter_recovery(&mut self, w: &Window) {
        // tcp_prague.c prague_ssthresh(), called on entering Recovery: the detection's gains.
        self.classic.update_gain(w);
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.loss_until = 0;
    }

    /// Fast retransmit inside the round trip of an ECN reduction (Linux's CWR state): Linux
    /// `tcp_enter_recovery()` keeps the reduction's high_seq and does not call the `ssthresh` hook
    /// (`tcp_init_cwnd_reduction()` only below CWR), but the state changes from CWR to Recovery, so
    /// `prague_state()` calls `prague_enter_loss()`: the fractional window halves on top of the
    /// ECN cut, and does not grow until recovery ends.
    pub(crate) fn on_enter_recovery_in_cwr(&mut self) {
        // tcp_prague.c prague_enter_loss(): frac_cwnd -= frac_cwnd / 2; in_loss.
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.loss_until = 0;
    }

    /// A retransmission timeout (Linux `CA_EVENT_LOSS` -> `prague_enter_loss()`): the fractional
    /// window halves; the socket's window restarts at one segment (RFC 5681 §3.1's loss window,
    /// Linux `tcp_enter_loss()`) and climbs back one segment per ACK; no increase until SND.UNA
    /// passes `snd_max`.
    pub(crate) fn on_rto(&mut self, w: &mut Window, first: bool, snd_max: u64) {
        // tcp_prague.c prague_ssthresh(), called by tcp_enter_loss(): the detection's gains.
        self.classic.update_gain(w);
        if first {
            self.frac_cwnd -= self.frac_cwnd >> 1;
        }
        self.in_loss = true;
        self.loss_until = snd_max;
        w.cwnd = w.mss;
    }

    /// Linux 0.6 `prague_update_pacing_rate()`: MTU * frac_cwnd / SRTT, doubled while cwnd is below
    /// half of ssthresh (slow start sends two segments per ACK).
    fn update_pacing_rate(&mut self, w: &Window, srtt: Option<SimDuration>) {
        let Some(srtt) = srtt.filter(|r| *r > SimDuration::ZERO) else { return };
        let per_segment = mul_div(self.p.mtu, NANOS, srtt.as_nanos());
        let mut rate = u64::try_from(
            (u128::from(per_segment) * u128::from(self.frac_cwnd) + u128::from(ONE_CWND >> 1)) >> CWND_UNIT,
        )
        .unwrap_or(u64::MAX / 4);
        if w.cwnd < w.ssthresh / 2 {
            rate = rate.saturating_mul(2);
        }
        self.pacing_rate = rate.max(1);
    }

    /// If a data segment may not leave before a later instant, that instant.
    #[inline]
    pub(crate) fn pacing_blocks(&self, now: SimTime) -> Option<SimTime> {
        self.pacer.blocks(now)
    }

    /// A data segment `[seq, end)` left at `now`.
    pub(crate) fn on_data_sent(&mut self, now: SimTime, seq: u64, end: u64) {
        let len = end - seq;
        if self.p.ecn_fallback != PragueEcnFallback::None {
            self.classic.on_data_sent(now, seq, end);
        }
        self.segs_out += 1;
        // RFC 9331 §4.3 (not a requirement; draft-briscoe-iccrg-prague §2.6): Prague paces
        // (Linux prague_init(): SK_PACING_NEEDED).
        self.pacer.on_sent(now, len, self.pacing_rate, self.segs_out);
    }
}

impl ClassicEcn {
    /// A data segment `[seq, end)` left at `now`: remembered for its RTT sample; a retransmission
    /// marks what it resends, which then gives none (Karn; Linux `FLAG_RETRANS_DATA_ACKED`).
    fn on_data_sent(&mut self, now: SimTime, seq: u64, end: u64) {
        if end <= self.sent_max {
            let from = self.sent.partition_point(|s| s.0 <= seq);
            for s in self.sent.iter_mut().skip(from).take_while(|s| s.0 <= end) {
                s.2 = true;
            }
            return;
        }
        self.sent_max = end;
        self.sent.push_back((end, now, false));
    }

    /// An ACK with SND.UNA `snd_una` at `now`: the RTT of the newest segment it acknowledges
    /// updates the estimator, unless a segment it acknowledges was retransmitted (Linux
    /// tcp_clean_rtx_queue()'s `ca_rtt_us`, none with `FLAG_RETRANS_DATA_ACKED`, which
    /// prague_pkts_acked() feeds to prague_rtt_estimator()).
    fn on_ack(&mut self, now: SimTime, snd_una: u64) {
        let mut newest = None;
        let mut retransmitted = false;
        while let Some(&(end, sent, rexmit)) = self.sent.front() {
            if end > snd_una {
                break;
            }
            newest = Some(sent);
            retransmitted |= rexmit;
            self.sent.pop_front();
        }
        if let (Some(sent), false) = (newest, retransmitted) {
            let r = now.saturating_since(sent);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.sample(r.as_nanos());
        }
    }

    /// tcp_prague.c prague_rtt_estimator(): RFC 6298's estimator with gains 2^-srtt_shift (mean)
    /// and 2^-(srtt_shift + 1) (mean deviation), kept upscaled; the first sample sets the mean
    /// and a deviation of 1 µs.
    fn sample(&mut self, m: u64) {
        let mdev_shift = self.srtt_shift + 1;
        if self.srtt == 0 {
            self.srtt = (m << self.srtt_shift).max(1);
            self.mdev = ONE_MICRO << mdev_shift;
            return;
        }
        let err = i128::from(m) - i128::from(self.srtt >> self.srtt_shift);
        let srtt = i128::from(self.srtt) + err;
        self.srtt = u64::try_from(srtt.max(1)).unwrap_or(u64::MAX);
        let dev = err.abs() - i128::from(self.mdev >> mdev_shift);
        self.mdev = u64::try_from((i128::from(self.mdev) + dev).max(0)).unwrap_or(u64::MAX);
    }

    /// tcp_prague.c prague_update_rtt_scaling(ssthresh): the gain's shift is
    /// lg + lg / 2 + 1 for lg = floor(log2(ssthresh in segments)), at most 18 (about
    /// ssthresh^1.5 samples, i.e. ssthresh^0.5 rounds, of memory); the stored sums are rescaled.
    fn update_gain(&mut self, w: &Window) {
        let ssthresh = (w.ssthresh / w.mss.max(1)).max(1);
        let lg = ssthresh.ilog2();
        let shift = (lg + lg / 2 + 1).min(MAX_SRTT_SHIFT);
        let old = self.srtt_shift;
        if shift > old {
            self.srtt <<= shift - old;
            self.mdev <<= shift - old;
        } else {
            self.srtt >>= old - shift;
            self.mdev >>= old - shift;
        }
        self.srtt_shift = shift;
    }

    /// tcp_prague.c prague_classic_ecn_detection(), once per alpha update: the score moves by
    /// V lg(mdev / V0) (V = 1/2, V0 = 750 µs; down when the RTT varies less than V0) plus, when
    /// the smoothed RTT exceeds the least RTT by a queue delay d above D0 = 2 ms,
    /// D lg(d / D0) (D = 1/2; queue build-up only pushes toward Classic); then it is held to
    /// 0..=C_STICKY. A Classic AQM (RFC 3168 RED, PIE, CoDel) keeps a queue of several ms that
    /// varies by ms; an L4S AQM keeps it under a ms (Briscoe & Ahmed 2019 §2).
    fn score_round(&mut self) {
        let (Some(min_rtt), true) = (self.min_rtt, self.srtt > 0) else { return };
        let srtt = self.srtt >> self.srtt_shift;
        let mdev = (self.mdev >> (self.srtt_shift + 1)).max(ONE_MICRO);
        let mut score = i128::from(self.score);
        // "V*lg(mdev_us/V0)"
        score += (i128::from(log2_q20(mdev)) - i128::from(log2_q20(V0))) / 2;
        let min_rtt = min_rtt.as_nanos();
        if srtt > min_rtt {
            // "+ D*lg(max(d/D0, 1))"
            let depth = (srtt - min_rtt).max(ONE_MICRO);
            score += (i128::from(log2_q20(depth)) - i128::from(log2_q20(D0))).max(0) / 2;
        }
        self.score = u64::try_from(score.clamp(0, i128::from(C_STICKY))).unwrap_or(0);
    }
}

/// log2(x) in 2^-20, rounded down, for x >= 1 (the integer part from the leading bit, the
/// fraction by repeated squaring of the mantissa).
///
/// DEVIATION(Linux): tcp_prague.c takes the integer ilog2() and carries the remainder of each
/// round's value into the next round's ("geometric carry"), so its sum over rounds is unbiased;
/// here each logarithm is exact to 2^-20, which gives the same sums without the carry.
fn log2_q20(x: u64) -> u64 {
    let int = x.max(1).ilog2();
    // The mantissa x / 2^int in [1, 2), in 2^-63.
    let mut m = u128::from(x.max(1)) << (63 - int);
    let mut frac = 0u64;
    for bit in (0..20).rev() {
        m = (m * m) >> 63;
        if m >= 1 << 64 {
            m >>= 1;
            frac |= 1 << bit;
        }
    }
    (u64::from(int) << 20) | frac
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    const MSS: u64 = 1000;

    fn params() -> PragueParams {
        PragueParams {
            rtt_target: SimDuration::from_millis(25),
            rtt_transition: 500,
            mtu: MSS + 40,
            ecn_fallback: PragueEcnFallback::None,
        }
    }

    /// Prague in congestion avoidance at `segs` segments (ssthresh at the window).
    fn at(segs: u64) -> (Prague, Window) {
        let w = Window::new(segs * MSS, segs * MSS, MSS, 1_000_000 * MSS, CaIncrease::PerAck);
        (Prague::new(params(), segs * MSS, MSS, 0), w)
    }

    fn ack(now_ms: u64, segs: u64, snd_una: u64, snd_nxt: u64, rtt_ms: u64) -> PragueAck {
        PragueAck {
            now: SimTime::from_millis(now_ms),
            acked_segments: segs,
            snd_una,
            snd_nxt,
            srtt: Some(SimDuration::from_millis(rtt_ms)),
            in_recovery: false,
        }
    }

    fn with_fallback(mode: PragueEcnFallback, segs: u64) -> (Prague, Window) {
        let (mut p, w) = at(segs);
        p.p.ecn_fallback = mode;
        (p, w)
    }

    const Q: f64 = ALPHA_ONE as f64;

    /// The fixed-point logarithm the detection's score uses: exact to 2^-20 (rounded down).
    #[test]
    fn log2_q20_is_exact_to_its_last_bit() {
        assert_eq!(log2_q20(1), 0);
        assert_eq!(log2_q20(2), ONE_CWND);
        assert_eq!(log2_q20(1 << 40), 40 << 20);
        for x in [3_u64, 5, 750, 1_000, 750_000, 2_000_000, 123_456_789, u64::MAX] {
            let want = ((x as f64).log2() * Q).floor();
            let got = log2_q20(x) as f64;
            assert!((got - want).abs() <= 1.0, "log2({x}): {got} against {want}");
        }
    }

    /// tcp_prague.c prague_classic_ecn_detection(): per scored round the score moves by
    /// V lg(mdev / 750 µs) + D lg(max(queue delay / 2 ms, 1)), V = D = 1/2, held to 0..=17.
    #[test]
    fn the_classic_ecn_score_moves_by_half_the_log_ratios_each_round() {
        let ms = SimDuration::from_millis;
        let mut c = ClassicEcn { srtt_shift: 4, min_rtt: Some(ms(22)), ..ClassicEcn::default() };
        let set = |c: &mut ClassicEcn, srtt_us: u64, mdev_us: u64| {
            c.srtt = (srtt_us * 1_000) << c.srtt_shift;
            c.mdev = (mdev_us * 1_000) << (c.srtt_shift + 1);
        };
        // A Classic queue: the RTT varies by 3 ms (4 V0: +1) over a queue of 8 ms (4 D0: +1).
        set(&mut c, 30_000, 3_000);
        c.score_round();
        assert!((c.score as f64 / Q - 2.0).abs() < 3.0 / Q, "{}", c.score as f64 / Q);
        // An L4S queue: 375 µs of variation (V0 / 2: -1/2), 1 ms of queue (below D0: nothing).
        let before = c.score;
        set(&mut c, 23_000, 375);
        c.score_round();
        assert!(((before - c.score) as f64 / Q - 0.5).abs() < 3.0 / Q);
        // Held to 0 ..= C_STICKY (17).
        for _ in 0..20 {
            c.score_round();
        }
        assert_eq!(c.score, 0);
        set(&mut c, 200_000, 100_000);
        for _ in 0..20 {
            c.score_round();
        }
        assert_eq!(c.score, C_STICKY);
        assert_eq!(C_STICKY, 17 << ALPHA_BITS);
        // No RTT sample yet: nothing to score.
        let mut empty = ClassicEcn::default();
        empty.score_round();
        assert_eq!(empty.score, 0);
    }

    /// tcp_prague.c prague_rtt_estimator() and tcp_clean_rtx_queue()'s ca_rtt: a sample per ACK,
    /// from the newest segment it acknowledges, none from a retransmitted one (Karn); the first
    /// sets the mean, and a deviation of 1 µs; then gains 2^-s and 2^-(s+1).
    #[test]
    fn the_detection_samples_the_newest_segment_acknowledged_and_not_retransmissions() {
        let t = SimTime::from_millis;
        let mut c = ClassicEcn { srtt_shift: 2, ..ClassicEcn::default() };
        c.on_data_sent(t(0), 0, 1000);
        c.on_data_sent(t(1), 1000, 2000);
        c.on_ack(t(51), 2000);
        assert_eq!(c.srtt >> 2, 50_000_000, "the newer of the two segments: 50 ms");
        assert_eq!(c.mdev >> 3, 1_000);
        assert_eq!(c.min_rtt, Some(SimDuration::from_millis(50)));
        c.on_data_sent(t(60), 2000, 3000);
        c.on_ack(t(120), 3000);
        // 60 ms: the mean moves a quarter of the 10 ms error, the deviation an eighth of 10 ms - 1 µs.
        assert_eq!(c.srtt >> 2, 52_500_000);
        assert_eq!(c.mdev >> 3, 1_000 + (10_000_000 - 1_000) / 8);
        // A retransmitted segment gives no sample.
        let (srtt, mdev) = (c.srtt, c.mdev);
        c.on_data_sent(t(130), 3000, 4000);
        c.on_data_sent(t(300), 3000, 4000);
        c.on_ack(t(310), 4000);
        assert_eq!((c.srtt, c.mdev), (srtt, mdev));
        // Nor an ACK that covers a retransmitted segment and a fresh one after it.
        c.on_data_sent(t(320), 4000, 5000);
        c.on_data_sent(t(321), 5000, 6000);
        c.on_data_sent(t(400), 4000, 5000);
        c.on_ack(t(420), 6000);
        assert_eq!((c.srtt, c.mdev), (srtt, mdev));
        assert!(c.sent.is_empty());
    }

    /// tcp_prague.c prague_update_rtt_scaling(): the gain's shift is lg + lg/2 + 1 for
    /// lg = floor(log2(ssthresh)), at most 18; the mean and deviation keep their values.
    #[test]
    fn the_detection_gain_follows_ssthresh() {
        let mut c = ClassicEcn { srtt_shift: MAX_SRTT_SHIFT, ..ClassicEcn::default() };
        c.sample(40_000_000);
        let w = |segs: u64| Window::new(segs * MSS, segs * MSS, MSS, 1_000_000 * MSS, CaIncrease::PerAck);
        for (ssthresh, shift) in [(64, 10), (100, 10), (2, 2), (1, 1), (3, 2), (16, 7), (1 << 20, 18)] {
            c.update_gain(&w(ssthresh));
            assert_eq!(c.srtt_shift, shift, "ssthresh {ssthresh}");
            assert_eq!(c.srtt >> c.srtt_shift, 40_000_000);
            assert_eq!(c.mdev >> (c.srtt_shift + 1), 1_000);
        }
    }

    /// tcp_prague.c prague_enter_cwr() / prague_classic_ecn_fallback() (RFC 9331 §4.3, fall back on
    /// Classic ECN bottlenecks): with `prague_ecn_fallback = 1` and a score above 8, a reduction
    /// uses max(alpha, (min(score, 9) - 8) * 5/8); detection only, or no detection, leaves it alpha.
    #[test]
    fn the_fallback_raises_alpha_in_reductions_above_the_sticky_score() {
        let cut = |mode, score: u64| {
            let (mut p, w) = with_fallback(mode, 64);
            p.upscaled_alpha = (ALPHA_ONE / 16) << SHIFT_G;
            p.classic.score = score;
            p.on_enter_cwr(&w, SimTime::from_millis(1));
            (64 << CWND_UNIT) - p.frac_cwnd()
        };
        let alpha_cut = (64 << CWND_UNIT) / 32;
        for mode in [PragueEcnFallback::None, PragueEcnFallback::Detection] {
            assert_eq!(cut(mode, C_STICKY), alpha_cut, "{mode:?}");
        }
        // Whole fallback: alpha 5/8, a cut of 5/16 (20 segments of 64).
        assert_eq!(cut(PragueEcnFallback::Fallback, 9 << ALPHA_BITS), 20 << CWND_UNIT);
        assert_eq!(cut(PragueEcnFallback::Fallback, C_STICKY), 20 << CWND_UNIT);
        // Half way: alpha 5/16, a cut of 5/32 (10 segments).
        assert_eq!(cut(PragueEcnFallback::Fallback, L_STICKY + ALPHA_ONE / 2), 10 << CWND_UNIT);
        // At the sticky score or below: alpha.
        assert_eq!(cut(PragueEcnFallback::Fallback, L_STICKY), alpha_cut);
        // A larger alpha is kept.
        let (mut p, w) = with_fallback(PragueEcnFallback::Fallback, 64);
        p.classic.score = C_STICKY;
        p.on_enter_cwr(&w, SimTime::from_millis(1));
        assert_eq!(p.frac_cwnd(), 32 << CWND_UNIT, "alpha 1 halves");
    }

    /// tcp_prague.c prague_update_alpha(): the detection scores only rounds after the first CE
    /// mark (proof of an AQM), and only when `prague_ecn_fallback` is on; a path whose RTT swings
    /// by 10 ms over a 20 ms base then scores toward Classic, and the flow recovers the pure L4S
    /// response once the RTT is steady and near its least again.
    #[test]
    fn the_detection_scores_rounds_after_the_first_mark_and_recovers() {
        // One 10-segment round per call, each segment acknowledged `rtt` after it was sent.
        fn round(p: &mut Prague, w: &mut Window, start_ms: u64, rtt: impl Fn(u64) -> u64, ce: u64) {
            let base = p.next_seq;
            for i in 0..10 {
                let seq = base + i * MSS;
                p.on_data_sent(SimTime::from_millis(start_ms), seq, seq + MSS);
            }
            for i in 0..10 {
                let now = SimTime::from_millis(start_ms) + SimDuration::from_millis(rtt(i));
                if i == 0 {
                    p.on_accecn_feedback(ce);
                }
                let mut a = ack(0, 1, base + (i + 1) * MSS, base + 10 * MSS, 30);
                a.now = now;
                p.on_ack(w, &a);
            }
        }
        let swinging = |i: u64| 20 + 10 * (i % 2);
        let steady = |_| 20;
        for mode in [PragueEcnFallback::None, PragueEcnFallback::Detection] {
            let (mut p, mut w) = with_fallback(mode, 10);
            p.classic.update_gain(&w);
            for r in 0..5 {
                round(&mut p, &mut w, r * 100, swinging, 0);
            }
            assert_eq!(p.classic_ecn(), 0, "{mode:?}: no mark yet, no score");
            for r in 5..40 {
                round(&mut p, &mut w, r * 100, swinging, 1);
            }
            match mode {
                PragueEcnFallback::None => assert_eq!(p.classic_ecn(), 0),
                _ => assert!(p.classic_ecn_detected(), "score {}", p.classic_ecn() as f64 / Q),
            }
            if mode == PragueEcnFallback::Detection {
                for r in 40..200 {
                    round(&mut p, &mut w, r * 100, steady, 1);
                }
                assert!(!p.classic_ecn_detected(), "score {}", p.classic_ecn() as f64 / Q);
            }
        }
    }

    /// RFC 9331 §4.3 / RFC 8257 §3.3 step 8: a reduction cuts frac_cwnd by alpha / 2; with the
    /// initial alpha of 1 (tcp_prague.c 0.6), the first one halves it. The socket's window follows
    /// one segment per ACK, not at once, and ssthresh with it (tcp_prague.c "adjust").
    #[test]
    fn a_reduction_cuts_the_fractional_window_by_alpha_over_two_and_cwnd_follows_per_ack() {
        let (mut p, mut w) = at(20);
        p.on_enter_cwr(&w, SimTime::from_millis(1));
        assert_eq!(p.frac_cwnd(), 10 << CWND_UNIT);
        assert_eq!(w.cwnd, 20 * MSS, "the window itself is not cut at once");
        // Marked ACKs: no increase (they acknowledge marked segments only), one step down each.
        for i in 1..=10 {
            p.on_accecn_feedback(1);
            p.on_ack(&mut w, &ack(2, 1, i * MSS, 40 * MSS, 50));
            assert_eq!(w.cwnd, (20 - i) * MSS, "ACK {i}");
            assert_eq!(w.ssthresh, w.cwnd);
        }
        p.on_accecn_feedback(1);
        p.on_ack(&mut w, &ack(2, 1, 11 * MSS, 40 * MSS, 50));
        assert_eq!(w.cwnd, 10 * MSS, "it stops at ceil(frac_cwnd)");
        // alpha = 1/4: frac_cwnd * (1 - 1/8), rounded to nearest: 10 - 1.25 = 8.75 segments.
        p.upscaled_alpha = (ALPHA_ONE / 4) << SHIFT_G;
        p.on_enter_cwr(&w, SimTime::from_millis(3));
        assert_eq!(p.frac_cwnd(), (35 << CWND_UNIT) / 4);
    }

    /// tcp_prague.c: alpha is not updated before the first CE mark; after it, once per round
    /// (SND.UNA past the round's SND.NXT): alpha = (1 - g) alpha + g F, g = 1/16, kept upscaled.
    #[test]
    fn alpha_moves_once_per_round_and_only_after_the_first_mark() {
        let (mut p, mut w) = at(10);
        // Round 1 ends at 10 segments; no mark: alpha stays 1.
        p.on_ack(&mut w, &ack(50, 10, 10 * MSS, 20 * MSS, 50));
        assert_eq!(p.alpha(), ALPHA_ONE);
        // Round 2: 10 segments, 5 marked, over two ACKs; mid-round alpha does not move.
        p.on_accecn_feedback(5);
        p.on_ack(&mut w, &ack(100, 5, 15 * MSS, 30 * MSS, 50));
        assert_eq!(p.alpha(), ALPHA_ONE);
        p.on_ack(&mut w, &ack(100, 5, 20 * MSS, 30 * MSS, 50));
        // F = 5/10: the round's 10 segments, 5 of them marked.
        let f = ALPHA_ONE / 2;
        let want = ((ALPHA_ONE << SHIFT_G) - ALPHA_ONE + f) >> SHIFT_G;
        assert_eq!(p.alpha(), want);
        // Round 3, no marks: alpha decays by g.
        p.on_ack(&mut w, &ack(150, 10, 30 * MSS, 40 * MSS, 50));
        let up = (want << SHIFT_G) - want;
        assert_eq!(p.alpha(), up >> SHIFT_G);
    }

    /// draft-briscoe-iccrg-prague §2.4.1 / tcp_prague.c note 4: the additive increase counts
    /// unmarked segments only: 1/cwnd segment per unmarked segment acknowledged, none for a
    /// marked one, on every ACK, within a reduction too.
    #[test]
    fn additive_increase_counts_unmarked_segments_only() {
        let (mut p, mut w) = at(10);
        let before = p.frac_cwnd();
        p.on_ack(&mut w, &ack(10, 2, 2 * MSS, 10 * MSS, 50));
        // 2 segments * ONE_CWND / 10, rounded to nearest.
        assert_eq!(p.frac_cwnd() - before, (2 * ONE_CWND + 5) / 10);
        let before = p.frac_cwnd();
        p.on_accecn_feedback(1);
        p.on_ack(&mut w, &ack(11, 2, 4 * MSS, 10 * MSS, 50));
        // The divisor is the window the fraction rounds up to (tcp_prague.c
        // prague_frac_cwnd_to_snd_cwnd()): 10.2 segments -> 11.
        assert_eq!(w.cwnd, 11 * MSS);
        assert_eq!(p.frac_cwnd() - before, (ONE_CWND + 5) / 11, "one of the two was marked");
        let before = p.frac_cwnd();
        p.on_accecn_feedback(2);
        p.on_ack(&mut w, &ack(12, 2, 6 * MSS, 10 * MSS, 50));
        assert_eq!(p.frac_cwnd(), before, "both marked");
        // Over a whole window of unmarked ACKs the window grows by one segment (RFC 5681 §3.1).
        let (mut p, mut w) = at(100);
        for i in 1..=100 {
            p.on_ack(&mut w, &ack(10, 1, i * MSS, 200 * MSS, 50));
        }
        let grown = p.frac_cwnd() - (100 << CWND_UNIT);
        assert!(grown.abs_diff(ONE_CWND) < ONE_CWND / 100, "{grown}");
        assert_eq!(w.cwnd, 101 * MSS);
    }

    /// RFC 9331 §4.3 "reduce RTT dependence" / tcp_prague.c RTT_CONTROL_RATE: once `rtt_transition`
    /// rounds have passed after slow start, a flow with RTT R below the reference T grows by
    /// (R/T)^2 segments per round trip; at or above T (and above 100 ms) the increase is Reno's.
    #[test]
    fn rtt_independence_scales_the_increase_below_the_reference_rtt() {
        let (mut p, w) = at(10);
        let r = |ms| Some(SimDuration::from_millis(ms));
        assert_eq!(p.ai_ack_increase(&w, r(5)), ONE_CWND, "before the transition");
        p.round = 500;
        assert_eq!(p.ai_ack_increase(&w, r(5)), (ONE_CWND + 12) / 25, "(5/25)^2");
        assert_eq!(p.ai_ack_increase(&w, r(25)), ONE_CWND);
        assert_eq!(p.ai_ack_increase(&w, r(80)), ONE_CWND);
        assert_eq!(p.ai_ack_increase(&w, r(101)), ONE_CWND);
        // Zero reference: no RTT independence.
        p.p.rtt_target = SimDuration::ZERO;
        assert_eq!(p.ai_ack_increase(&w, r(5)), ONE_CWND);
        assert!(!p.rtt_independent(&w));
    }

    /// tcp_prague.c prague_enter_cwr() / prague_should_update_ewma(): once RTT-independent, at most
    /// one reduction and one alpha update per reference RTT, however short the flow's RTT.
    #[test]
    fn rtt_independent_flows_reduce_at_most_once_per_reference_rtt() {
        let (mut p, mut w) = at(40);
        p.round = 500;
        assert!(p.rtt_independent(&w));
        p.on_enter_cwr(&w, SimTime::from_millis(100));
        let once = p.frac_cwnd();
        assert_eq!(once, 20 << CWND_UNIT);
        p.on_enter_cwr(&w, SimTime::from_millis(110));
        assert_eq!(p.frac_cwnd(), once, "10 ms later: within the 25 ms reference");
        p.on_enter_cwr(&w, SimTime::from_millis(125));
        assert_eq!(p.frac_cwnd(), once / 2, "25 ms later");
        // The alpha update waits for the reference RTT too, though the round (5 ms RTT) ended.
        p.saw_ce = true;
        p.alpha_stamp = SimTime::from_millis(120);
        p.on_ack(&mut w, &ack(130, 1, MSS, 2 * MSS, 5));
        assert_eq!(p.alpha(), ALPHA_ONE, "10 ms after the last update");
        p.on_ack(&mut w, &ack(145, 1, 2 * MSS, 3 * MSS, 5));
        assert!(p.alpha() < ALPHA_ONE, "25 ms after it");
        // Before the transition a reduction may follow at once (once per round, the socket's rule).
        let (mut q, w) = at(40);
        q.on_enter_cwr(&w, SimTime::from_millis(100));
        q.on_enter_cwr(&w, SimTime::from_millis(101));
        assert_eq!(q.frac_cwnd(), 10 << CWND_UNIT);
    }

    /// RFC 9331 §4.3 (Reno-friendly response to loss) / tcp_prague.c prague_enter_loss(): a fast
    /// retransmit halves the fractional window, the window steps down to it per ACK, and there is
    /// no increase until recovery ends.
    #[test]
    fn a_loss_halves_the_window_and_stops_the_increase_until_recovery_ends() {
        let (mut p, mut w) = at(20);
        p.on_enter_recovery(&w);
        assert_eq!(p.frac_cwnd(), 10 << CWND_UNIT);
        let mut a = ack(10, 1, MSS, 30 * MSS, 50);
        a.in_recovery = true;
        for i in 1..=12 {
            a.snd_una = i * MSS;
            p.on_ack(&mut w, &a);
        }
        assert_eq!((w.cwnd, p.frac_cwnd()), (10 * MSS, 10 << CWND_UNIT), "no increase in recovery");
        a.in_recovery = false;
        p.on_ack(&mut w, &a);
        assert!(p.frac_cwnd() > 10 << CWND_UNIT, "recovery over: growth again");
    }

    /// RFC 5681 §3.1 / Linux tcp_enter_loss() and CA_EVENT_LOSS: a timeout sets the window to one
    /// segment and halves the fractional window; the window climbs back one segment per ACK to it,
    /// with no increase before SND.UNA passes what was sent before the timeout.
    #[test]
    fn a_timeout_restarts_at_one_segment_toward_half_the_window() {
        let (mut p, mut w) = at(20);
        p.on_rto(&mut w, true, 40 * MSS);
        assert_eq!((w.cwnd, p.frac_cwnd()), (MSS, 10 << CWND_UNIT));
        // A repeated timeout of the same segment does not halve again.
        p.on_rto(&mut w, false, 40 * MSS);
        assert_eq!(p.frac_cwnd(), 10 << CWND_UNIT);
        for i in 1..=12 {
            p.on_ack(&mut w, &ack(10, 1, i * MSS, 40 * MSS, 50));
        }
        assert_eq!((w.cwnd, p.frac_cwnd()), (10 * MSS, 10 << CWND_UNIT));
    }

    /// The window never steps below two segments (tcp_prague.c MIN_CWND).
    #[test]
    fn the_window_floor_is_two_segments() {
        let (mut p, mut w) = at(3);
        for i in 0..5 {
            p.on_enter_cwr(&w, SimTime::from_millis(i));
            p.on_accecn_feedback(1);
            p.on_ack(&mut w, &ack(i, 1, (i + 1) * MSS, 10 * MSS, 50));
        }
        assert_eq!(w.cwnd, 2 * MSS);
    }

    /// tcp_prague.c 0.6 prague_update_cwnd(): below two segments the additive increase divides by
    /// the fractional window rounded up, at least one (`prague_frac_cwnd_to_snd_cwnd()`), not by
    /// the 2-segment floor of the socket's window: at frac_cwnd 0.5 an unmarked segment adds a
    /// whole `ai_ack_increase`, at 1.5 half of it, so a flow paced below two segments per round
    /// trip still grows by about one segment per round trip (RFC 5681 §3.1's 1/cwnd per ACK).
    #[test]
    fn below_two_segments_the_increase_divides_by_the_fractional_window_rounded_up() {
        let (mut p, mut w) = at(2);
        p.frac_cwnd = ONE_CWND / 2;
        p.on_ack(&mut w, &ack(10, 1, MSS, 4 * MSS, 50));
        assert_eq!(p.frac_cwnd(), ONE_CWND / 2 + ONE_CWND, "0.5 rounds up to 1");
        assert_eq!(w.cwnd, 2 * MSS, "the window stays at its floor");
        p.frac_cwnd = ONE_CWND + ONE_CWND / 2;
        p.on_ack(&mut w, &ack(11, 1, 2 * MSS, 4 * MSS, 50));
        assert_eq!(p.frac_cwnd(), ONE_CWND + ONE_CWND / 2 + ONE_CWND / 2, "1.5 rounds up to 2");
    }

    /// tcp_prague.c prague_update_pacing_rate(): MTU * frac_cwnd / SRTT (twice that below half of
    /// ssthresh); the pacer spaces segments by their wire time at that rate after the tenth.
    #[test]
    fn the_pacing_rate_is_the_window_per_rtt_and_spaces_segments() {
        let (mut p, mut w) = at(10);
        assert_eq!(p.pacing_rate(), 0, "unpaced before an RTT sample");
        p.on_ack(&mut w, &ack(0, 1, MSS, 10 * MSS, 50));
        // frac_cwnd = 10.1 segments: 1040 B * 10.1 / 50 ms = 210 080 B/s.
        let frac = p.frac_cwnd();
        let want =
            (u128::from((MSS + 40) * NANOS / 50_000_000) * u128::from(frac) + u128::from(ONE_CWND / 2)) >> CWND_UNIT;
        assert_eq!(u128::from(p.pacing_rate()), want);
        let now = SimTime::from_millis(1);
        for _ in 0..9 {
            p.on_data_sent(now, 0, MSS);
            assert_eq!(p.pacing_blocks(now), None, "the first ten segments are not paced");
        }
        p.on_data_sent(now, 0, MSS);
        let gap = p.pacing_blocks(now).expect("paced").saturating_since(now);
        assert_eq!(gap.as_nanos(), MSS * NANOS / p.pacing_rate());
        // Slow start (cwnd below ssthresh / 2): twice the rate.
        w.ssthresh = 100 * MSS;
        p.update_pacing_rate(&w, Some(SimDuration::from_millis(50)));
        assert_eq!(u128::from(p.pacing_rate()), 2 * want);
    }
}
