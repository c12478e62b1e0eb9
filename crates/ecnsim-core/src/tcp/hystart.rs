//! Leaving slow start before the first loss: Linux's HyStart (`tcp.slow_start_exit = "hystart"`,
//! CUBIC only, as in Linux) and HyStart++ (`"hystart++"`, RFC 9406, any loss-based algorithm whose
//! slow start is RFC 5681's), both on per-ACK RTT samples from a record of send times.
//!
//! Read first: RFC 9406 §4.2 (the algorithm) and §4.3 (its constants); Linux 6.x
//! `net/ipv4/tcp_cubic.c` (`bictcp_hystart_reset()`, `hystart_update()`, `cubictcp_acked()`,
//! `hystart_ack_delay()`) and `tcp_input.c` (`tcp_clean_rtx_queue()`: which RTT the algorithm is
//! handed). Mainline Linux (6.18 included) has no HyStart++: CUBIC runs the 2008 HyStart with its
//! ack-train and delay detectors, and leaves slow start by ssthresh = cwnd, with no conservative
//! phase.
//!
//! A flow pays for this only when its configuration asks for it: the state sits behind the
//! connection's one out-of-line pointer (`CcState`, with CUBIC's or DCTCP's state), allocated once,
//! and the send-time record grows by doubling to the largest number of segments in flight, then
//! never again; under `"none"` nothing is allocated or recorded.

use std::collections::VecDeque;

use crate::spec::SlowStartExit as Kind;
use crate::tcp::cc::Window;
use crate::time::{SimDuration, SimTime};

/// The ssthresh a connection starts with (RFC 5681 §3.1: "arbitrarily high"; `TcpSocket::new`).
pub(crate) const INITIAL_SSTHRESH: u64 = u64::MAX / 2;

/// Send time of a segment that was retransmitted (Karn: it gives no sample).
const RETRANSMITTED: u64 = u64::MAX;

/// The send time of every data segment outstanding, oldest first: `(end sequence number, sent at
/// in ns)`, or [`RETRANSMITTED`] once any of its bytes were sent again.
#[derive(Clone, Debug, Default)]
pub(crate) struct SendTimes(VecDeque<(u64, u64)>);

impl SendTimes {
    /// A data segment `[seq, end)` left at `now`; `retransmit` if it resends sequence space.
    fn on_sent(&mut self, seq: u64, end: u64, now: SimTime, retransmit: bool) {
        let last = self.0.back().map_or(0, |&(e, _)| e);
        if !retransmit && end > last {
            self.0.push_back((end, now.as_nanos()));
            return;
        }
        // RFC 6298 §3 (Karn): a segment any of whose bytes were resent gives no RTT sample.
        let mut i = self.0.partition_point(|&(e, _)| e <= seq);
        while i < self.0.len() && (i == 0 || self.0[i - 1].0 < end) {
            self.0[i].1 = RETRANSMITTED;
            i += 1;
        }
    }

    /// A cumulative ACK up to `ack` at `now`: the RTT of the newest segment it acknowledges in full,
    /// none if any segment it acknowledges was retransmitted (Linux `tcp_clean_rtx_queue()`:
    /// `ca_rtt_us` from `last_ackt`, none under `FLAG_RETRANS_DATA_ACKED`).
    fn on_ack(&mut self, ack: u64, now: SimTime) -> Option<SimDuration> {
        let (mut newest, mut retransmitted) = (None, false);
        while let Some(&(end, sent)) = self.0.front() {
            if end > ack {
                break;
            }
            self.0.pop_front();
            retransmitted |= sent == RETRANSMITTED;
            newest = Some(sent);
        }
        let sent = newest.filter(|_| !retransmitted)?;
        Some(SimDuration::from_nanos(now.as_nanos().saturating_sub(sent)))
    }

    /// Segments recorded (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// What the socket tells the algorithm about one ACK of new data outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SsAck {
    pub now: SimTime,
    /// Bytes newly acknowledged (RFC 9406's N).
    pub acked: u64,
    /// SND.UNA after the ACK.
    pub snd_una: u64,
    /// SND.NXT.
    pub snd_nxt: u64,
    /// The RTT sample this ACK gave, if any ([`SendTimes::on_ack`]).
    pub rtt: Option<SimDuration>,
    /// SRTT, for Linux's pacing-rate estimate.
    pub srtt: Option<SimDuration>,
    /// CUBIC's t_epoch (Linux `epoch_start`), if a congestion-avoidance stage runs.
    pub ca_epoch: Option<SimTime>,
}

/// A slow-start exit algorithm and its send-time record (boxed in the socket; none under `"none"`).
#[derive(Clone, Debug)]
pub(crate) struct SlowStartExit {
    times: SendTimes,
    algo: Algo,
}

#[derive(Clone, Debug)]
enum Algo {
    Linux(LinuxHystart),
    Rfc9406(HystartPp),
}

impl SlowStartExit {
    /// The state `kind` needs, none for `"none"`; `snd_nxt` is the first sequence number to send.
    pub(crate) fn new(kind: Kind, snd_nxt: u64) -> Option<Self> {
        let algo = match kind {
            Kind::None => return None,
            Kind::Hystart => Algo::Linux(LinuxHystart::new(SimTime::ZERO, snd_nxt)),
            Kind::HystartPp => Algo::Rfc9406(HystartPp::new(snd_nxt)),
        };
        Some(SlowStartExit { times: SendTimes::default(), algo })
    }

    /// A data segment `[seq, end)` left at `now`.
    pub(crate) fn on_sent(&mut self, seq: u64, end: u64, now: SimTime, retransmit: bool) {
        self.times.on_sent(seq, end, now, retransmit);
    }

    /// A cumulative ACK up to `ack`: the per-ACK RTT sample (see [`SendTimes::on_ack`]).
    pub(crate) fn rtt_sample(&mut self, ack: u64, now: SimTime) -> Option<SimDuration> {
        self.times.on_ack(ack, now)
    }

    /// An ACK of new data outside recovery that may open the window, before the congestion control
    /// sees it. Returns true if the window grew here (HyStart++'s own slow start), in which case the
    /// algorithm's `on_ack` must not run.
    pub(crate) fn on_ack(&mut self, w: &mut Window, a: &SsAck) -> bool {
        match &mut self.algo {
            Algo::Linux(h) => {
                h.on_ack(w, a);
                false
            }
            Algo::Rfc9406(h) => h.on_ack(w, a),
        }
    }

    /// The retransmission timer expired (Linux `cubictcp_state(TCP_CA_Loss)`).
    pub(crate) fn on_rto(&mut self, now: SimTime, snd_nxt: u64) {
        if let Algo::Linux(h) = &mut self.algo {
            // Linux cubictcp_state(): on TCP_CA_Loss, bictcp_reset() (delay_min = 0, found = 0) and
            // bictcp_hystart_reset().
            *h = LinuxHystart::new(now, snd_nxt);
        }
        // RFC 9406 §4.2: HyStart++ runs in the initial slow start only; ssthresh is no longer the
        // initial one after a timeout, which ends it ([`HystartPp::on_ack`]).
    }

    /// The send-time record (for tests).
    #[cfg(test)]
    pub(crate) fn times(&self) -> &SendTimes {
        &self.times
    }

    /// Whether Linux HyStart has found its exit point, or HyStart++ is in CSS (for tests).
    #[cfg(test)]
    pub(crate) fn state(&self) -> (bool, bool) {
        match &self.algo {
            Algo::Linux(h) => (h.found, false),
            Algo::Rfc9406(h) => (false, h.phase == Phase::Css),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Linux HyStart (tcp_cubic.c)
// ---------------------------------------------------------------------------------------------

/// Linux tcp_cubic.c: hystart_low_window = 16 (segments).
const LINUX_LOW_WINDOW: u64 = 16;
/// Linux tcp_cubic.c: hystart_ack_delta_us = 2000.
const LINUX_ACK_DELTA_US: u64 = 2000;
/// Linux tcp_cubic.c: HYSTART_MIN_SAMPLES 8.
const LINUX_MIN_SAMPLES: u32 = 8;
/// Linux tcp_cubic.c: HYSTART_DELAY_MIN 4000 µs.
const LINUX_DELAY_MIN_US: u64 = 4000;
/// Linux tcp_cubic.c: HYSTART_DELAY_MAX 16000 µs.
const LINUX_DELAY_MAX_US: u64 = 16000;
/// Linux include/linux/netdevice.h: GSO_LEGACY_MAX_SIZE 65536, a device's default gso_max_size.
const LINUX_GSO_MAX_SIZE: u64 = 65536;

/// Linux HyStart's state (`struct bictcp`'s HyStart fields and `delay_min`), times in µs.
#[derive(Clone, Debug)]
struct LinuxHystart {
    /// The exit point was found (ssthresh = cwnd).
    found: bool,
    /// Start of the current round (the ACK that began it), µs.
    round_start: u64,
    /// The last ACK of the current ACK train, µs.
    last_ack: u64,
    /// The round ends when SND.UNA passes this.
    end_seq: u64,
    /// The smallest RTT of this round's first samples, µs.
    curr_rtt: u64,
    /// Samples taken this round (up to [`LINUX_MIN_SAMPLES`]).
    sample_cnt: u32,
    /// The smallest RTT seen (0: none yet), µs.
    delay_min: u64,
}

impl LinuxHystart {
    /// Linux bictcp_reset() + bictcp_hystart_reset() at `now` with SND.NXT `snd_nxt`.
    fn new(now: SimTime, snd_nxt: u64) -> Self {
        let now = micros(now);
        LinuxHystart {
            found: false,
            round_start: now,
            last_ack: now,
            end_seq: snd_nxt,
            curr_rtt: u64::MAX,
            sample_cnt: 0,
            delay_min: 0,
        }
    }

    /// Linux cubictcp_acked() and hystart_update(), run before the window grows (pkts_acked comes
    /// before cong_avoid in tcp_ack()).
    fn on_ack(&mut self, w: &mut Window, a: &SsAck) {
        // Linux cubictcp_acked(): "Some calls are for duplicates without timestamps" (no sample).
        let Some(rtt) = a.rtt else { return };
        let now = micros(a.now);
        // Linux cubictcp_acked(): discard delay samples within 1 s (HZ) of the epoch's start.
        if a.ca_epoch.is_some_and(|e| a.now.saturating_since(e) < SimDuration::from_secs(1)) {
            return;
        }
        // Linux cubictcp_acked(): delay = rtt_us, 0 counted as 1.
        let delay = (rtt.as_nanos() / 1000).max(1);
        // Linux cubictcp_acked(): first time call or link delay decreases.
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        // Linux cubictcp_acked(): hystart_update() only while !found and in slow start.
        if self.found || !w.in_slow_start() {
            return;
        }
        // Linux hystart_update(): a new round once snd_una passes end_seq.
        if a.snd_una > self.end_seq {
            self.round_start = now;
            self.last_ack = now;
            self.end_seq = a.snd_nxt;
            self.curr_rtt = u64::MAX;
            self.sample_cnt = 0;
        }
        // Linux hystart_update(): HyStart acts only once cwnd >= hystart_low_window.
        if w.cwnd < LINUX_LOW_WINDOW * w.mss {
            return;
        }
        // Linux hystart_update(), HYSTART_ACK_TRAIN: ACKs closely spaced (<= 2 ms apart) since the
        // round began for longer than delay_min / 2 (+ the TSO/GRO allowance, unpaced senders).
        if now.saturating_sub(self.last_ack) <= LINUX_ACK_DELTA_US {
            self.last_ack = now;
            let threshold = (self.delay_min + ack_delay_us(w, a.srtt)) >> 1;
            if now.saturating_sub(self.round_start) > threshold {
                self.found = true;
            }
        }
        // Linux hystart_update(), HYSTART_DELAY: the minimum of the round's first 8 samples above
        // delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < LINUX_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(LINUX_DELAY_MIN_US, LINUX_DELAY_MAX_US);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
            }
        }
        if self.found {
            // Linux hystart_update(): tp->snd_ssthresh = tcp_snd_cwnd(tp): congestion avoidance now.
            w.ssthresh = w.cwnd;
        }
    }
}

/// Linux hystart_ack_delay(): min(1 ms, 4 * gso_max_size / sk_pacing_rate), the pacing rate as
/// tcp_update_pacing_rate() sets it (200 % of cwnd / SRTT below ssthresh / 2, else 120 %); 0
/// before the first RTT sample. In µs.
fn ack_delay_us(w: &Window, srtt: Option<SimDuration>) -> u64 {
    let Some(srtt) = srtt.filter(|s| s.as_nanos() > 0) else { return 0 };
    // Linux tcp_update_pacing_rate(): sysctl_tcp_pacing_ss_ratio 200, sysctl_tcp_pacing_ca_ratio 120.
    let ratio: u128 = if w.cwnd < w.ssthresh / 2 { 200 } else { 120 };
    // 4 * gso / (cwnd * ratio / 100 / srtt) seconds, in µs: 4 * gso * srtt_ns * 100 / (cwnd * ratio * 1000).
    let us = u128::from(4 * LINUX_GSO_MAX_SIZE) * u128::from(srtt.as_nanos()) * 100
        / (u128::from(w.cwnd.max(1)) * ratio * 1000);
    u64::try_from(us.min(1000)).expect("at most 1000")
}

fn micros(t: SimTime) -> u64 {
    t.as_nanos() / 1000
}

// ---------------------------------------------------------------------------------------------
// HyStart++ (RFC 9406)
// ---------------------------------------------------------------------------------------------

/// RFC 9406 §4.3: MIN_RTT_THRESH = 4 msec.
const MIN_RTT_THRESH: SimDuration = SimDuration::from_millis(4);
/// RFC 9406 §4.3: MAX_RTT_THRESH = 16 msec.
const MAX_RTT_THRESH: SimDuration = SimDuration::from_millis(16);
/// RFC 9406 §4.3: MIN_RTT_DIVISOR = 8.
const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3: N_RTT_SAMPLE = 8.
const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS_GROWTH_DIVISOR = 4.
const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: CSS_ROUNDS = 5.
const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L = 8 for a non-paced sender (no algorithm HyStart++ runs under paces).
const L_NON_PACED: u64 = 8;

/// No RTT yet (RFC 9406's "infinity").
const INFINITY: SimDuration = SimDuration::from_nanos(u64::MAX);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Standard slow start (with RFC 9406's L).
    SlowStart,
    /// Conservative Slow Start.
    Css,
}

/// RFC 9406 §4.2's variables.
#[derive(Clone, Debug)]
struct HystartPp {
    phase: Phase,
    /// windowEnd: the round ends when this sequence number is acknowledged.
    window_end: u64,
    last_round_min_rtt: SimDuration,
    current_round_min_rtt: SimDuration,
    rtt_sample_count: u32,
    css_baseline_min_rtt: SimDuration,
    /// Rounds ended since CSS began.
    css_rounds: u32,
    /// CSS growth not yet added, bytes times [`CSS_GROWTH_DIVISOR`] (the division's remainder).
    css_carry: u64,
}

impl HystartPp {
    fn new(snd_nxt: u64) -> Self {
        HystartPp {
            phase: Phase::SlowStart,
            // RFC 9406 §4.2: windowEnd is initialized to SND.NXT.
            window_end: snd_nxt,
            // RFC 9406 §4.2: lastRoundMinRTT and currentRoundMinRTT are initialized to infinity.
            last_round_min_rtt: INFINITY,
            current_round_min_rtt: INFINITY,
            rtt_sample_count: 0,
            css_baseline_min_rtt: INFINITY,
            css_rounds: 0,
            css_carry: 0,
        }
    }

    /// One ACK that may open the window: true if HyStart++ grew it.
    fn on_ack(&mut self, w: &mut Window, a: &SsAck) -> bool {
        // RFC 9406 §4.2: HyStart++ SHOULD be used only for the initial slow start (ssthresh at its
        // initial, arbitrarily high value); a loss, ECN reduction or timeout, and CSS's end, set it.
        if w.ssthresh != INITIAL_SSTHRESH || !w.in_slow_start() {
            return false;
        }
        // RFC 9406 §4.2: when windowEnd is ACKed, the round ends and windowEnd is set to SND.NXT
        // (read here as: the ACK covers the byte numbered windowEnd).
        if a.snd_una > self.window_end {
            if self.phase == Phase::Css {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    // RFC 9406 §4.2: after CSS_ROUNDS rounds of CSS, enter congestion avoidance by
                    // setting ssthresh to the current cwnd.
                    w.ssthresh = w.cwnd;
                    return false;
                }
            }
            // RFC 9406 §4.2: at the start of each round, lastRoundMinRTT = currentRoundMinRTT,
            // currentRoundMinRTT = infinity, rttSampleCount = 0.
            self.window_end = a.snd_nxt;
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = INFINITY;
            self.rtt_sample_count = 0;
        }
        // RFC 9406 §4.2: cwnd = cwnd + min(N, L * SMSS), in CSS divided by CSS_GROWTH_DIVISOR.
        let increase = a.acked.min(L_NON_PACED * w.mss);
        match self.phase {
            Phase::SlowStart => w.cwnd += increase,
            Phase::Css => {
                self.css_carry += increase;
                w.cwnd += self.css_carry / CSS_GROWTH_DIVISOR;
                self.css_carry %= CSS_GROWTH_DIVISOR;
            }
        }
        w.cwnd = w.cwnd.min(w.max_cwnd);
        // RFC 9406 §4.2: keep track of the minimum observed RTT of the round.
        if let Some(rtt) = a.rtt {
            self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
            self.rtt_sample_count += 1;
        }
        // RFC 9406 §4.2: decide only in rounds with at least N_RTT_SAMPLE samples.
        if self.rtt_sample_count < N_RTT_SAMPLE || self.current_round_min_rtt == INFINITY {
            return true;
        }
        match self.phase {
            Phase::SlowStart if self.last_round_min_rtt != INFINITY => {
                // RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
                // MAX_RTT_THRESH)).
                let last = self.last_round_min_rtt;
                let thresh =
                    SimDuration::from_nanos(last.as_nanos() / MIN_RTT_DIVISOR).min(MAX_RTT_THRESH).max(MIN_RTT_THRESH);
                // RFC 9406 §4.2: if currentRoundMinRTT >= lastRoundMinRTT + RttThresh, set
                // cssBaselineMinRtt = currentRoundMinRTT and enter CSS.
                if self.current_round_min_rtt >= last + thresh {
                    self.css_baseline_min_rtt = self.current_round_min_rtt;
                    self.phase = Phase::Css;
                    self.css_rounds = 0;
                    self.css_carry = 0;
                }
            }
            Phase::Css if self.current_round_min_rtt < self.css_baseline_min_rtt => {
                // RFC 9406 §4.2: the RTT fell below the baseline: the exit was spurious; resume slow
                // start (cssBaselineMinRtt = infinity).
                self.css_baseline_min_rtt = INFINITY;
                self.phase = Phase::SlowStart;
            }
            _ => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    const MSS: u64 = 1000;

    fn win(cwnd_segments: u64) -> Window {
        Window::new(cwnd_segments * MSS, INITIAL_SSTHRESH, MSS, u64::MAX / 4, CaIncrease::ByteCounting)
    }
    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn send_times_sample_the_newest_segment_acked_and_follow_karn() {
        let mut t = SendTimes::default();
        for i in 0..4u64 {
            t.on_sent(1 + i * MSS, 1 + (i + 1) * MSS, SimTime::from_millis(i), false);
        }
        // An ACK of the first two segments at 100 ms: the newest, sent at 1 ms, gives 99 ms.
        assert_eq!(t.on_ack(1 + 2 * MSS, SimTime::from_millis(100)), Some(ms(99)));
        assert_eq!(t.len(), 2);
        // A partial ACK inside the third segment acknowledges no segment in full: no sample.
        assert_eq!(t.on_ack(1 + 2 * MSS + 10, SimTime::from_millis(101)), None);
        // RFC 6298 §3 (Karn): the third segment is resent; an ACK covering it and the fourth gives none.
        t.on_sent(1 + 2 * MSS, 1 + 3 * MSS, SimTime::from_millis(150), true);
        assert_eq!(t.on_ack(1 + 4 * MSS, SimTime::from_millis(200)), None);
        assert_eq!(t.len(), 0);
        // A resend spanning two recorded segments marks both.
        for i in 4..7u64 {
            t.on_sent(1 + i * MSS, 1 + (i + 1) * MSS, SimTime::from_millis(300), false);
        }
        t.on_sent(1 + 4 * MSS + 500, 1 + 5 * MSS + 500, SimTime::from_millis(310), true);
        assert_eq!(t.on_ack(1 + 6 * MSS, SimTime::from_millis(400)), None);
        assert_eq!(t.on_ack(1 + 7 * MSS, SimTime::from_millis(400)), Some(ms(100)));
    }

    #[test]
    fn send_times_reuse_their_storage() {
        let mut t = SendTimes::default();
        for i in 0..64u64 {
            t.on_sent(i * MSS, (i + 1) * MSS, SimTime::ZERO, false);
        }
        let cap = t.0.capacity();
        for round in 1..100u64 {
            t.on_ack(round * 64 * MSS, SimTime::from_millis(round));
            for i in 0..64u64 {
                let s = (round * 64 + i) * MSS;
                t.on_sent(s, s + MSS, SimTime::from_millis(round), false);
            }
        }
        assert_eq!(t.0.capacity(), cap, "steady state: no allocation");
    }

    /// An ACK of one segment at `now` ms with RTT `rtt` ms, SND.UNA `una`, SND.NXT `nxt` (segments).
    fn ack(now_us: u64, rtt: Option<SimDuration>, una: u64, nxt: u64) -> SsAck {
        SsAck {
            now: SimTime::from_nanos(now_us * 1000),
            acked: MSS,
            snd_una: una * MSS,
            snd_nxt: nxt * MSS,
            rtt,
            srtt: None,
            ca_epoch: None,
        }
    }

    /// RFC 9406 §4.2: round N's minimum RTT at lastRoundMinRTT + RttThresh exits to CSS; below
    /// the threshold it does not.
    #[test]
    fn rfc9406_4_2_rtt_rise_in_a_round_enters_css() {
        for (rise_us, css) in [(12_499, false), (12_500, true)] {
            let mut h = HystartPp::new(0);
            let mut w = win(20);
            // Round 1 (ends at segment 20): 10 samples of 100 ms.
            for i in 1..=10 {
                assert!(h.on_ack(&mut w, &ack(i * 100, Some(ms(100)), i, 40)));
            }
            assert_eq!((h.last_round_min_rtt, h.current_round_min_rtt), (INFINITY, ms(100)));
            // Round 2 starts with the ACK past segment 40... (first ACK after windowEnd = 0 began round 1).
            for i in 41..=48 {
                let rtt = ms(100) + SimDuration::from_micros(rise_us);
                h.on_ack(&mut w, &ack(200_000 + i, Some(rtt), i, 80));
            }
            // RttThresh = max(4 ms, min(100 / 8 = 12.5 ms, 16 ms)) = 12.5 ms.
            assert_eq!(h.last_round_min_rtt, ms(100));
            assert_eq!(h.phase == Phase::Css, css, "rise {rise_us} µs");
            assert_eq!(w.ssthresh, INITIAL_SSTHRESH, "CSS leaves ssthresh alone");
        }
    }

    /// RFC 9406 §4.2: fewer than N_RTT_SAMPLE samples in the round decide nothing.
    #[test]
    fn rfc9406_4_2_needs_eight_samples() {
        let mut h = HystartPp::new(0);
        let mut w = win(20);
        for i in 1..=10 {
            h.on_ack(&mut w, &ack(i, Some(ms(100)), i, 40));
        }
        for i in 41..=47 {
            h.on_ack(&mut w, &ack(200_000 + i, Some(ms(200)), i, 80));
        }
        assert_eq!((h.rtt_sample_count, h.phase), (7, Phase::SlowStart));
        h.on_ack(&mut w, &ack(200_100, Some(ms(200)), 48, 80));
        assert_eq!(h.phase, Phase::Css);
    }

    /// RFC 9406 §4.2: growth is min(N, L * SMSS) per ACK (L = 8), a quarter of it in CSS; CSS
    /// ends after CSS_ROUNDS rounds with ssthresh = cwnd.
    #[test]
    fn rfc9406_4_2_css_grows_by_a_quarter_and_ends_after_five_rounds() {
        let mut h = HystartPp::new(0);
        let mut w = win(20);
        // An ACK of 20 segments grows cwnd by L = 8 segments only.
        let mut a = ack(1, None, 20, 40);
        a.acked = 20 * MSS;
        h.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 28 * MSS);
        h.phase = Phase::Css;
        h.css_baseline_min_rtt = ms(100);
        let mut a = ack(2, None, 21, 40);
        a.acked = 3 * MSS / 2;
        h.on_ack(&mut w, &a);
        h.on_ack(&mut w, &a);
        // 2 * 1500 / 4 = 750 bytes, the remainder carried.
        assert_eq!(w.cwnd, 28 * MSS + 750);
        // Five round ends in CSS: the fifth sets ssthresh = cwnd (congestion avoidance).
        let mut end = 40;
        for round in 1..=5 {
            let grew = h.on_ack(&mut w, &ack(round * 1000, None, end + 1, end + 40));
            end += 40;
            assert_eq!(grew, round < 5, "round {round}");
        }
        assert_eq!(w.ssthresh, w.cwnd);
        assert!(!h.on_ack(&mut w, &ack(9000, None, end + 1, end + 40)), "HyStart++ is over");
    }

    /// RFC 9406 §4.2: in CSS, a round whose minimum RTT falls below cssBaselineMinRtt resumes
    /// slow start.
    #[test]
    fn rfc9406_4_2_rtt_fall_in_css_resumes_slow_start() {
        let mut h = HystartPp::new(0);
        let mut w = win(20);
        h.phase = Phase::Css;
        h.css_baseline_min_rtt = ms(115);
        for i in 1..=8 {
            h.on_ack(&mut w, &ack(i, Some(ms(116)), i, 40));
        }
        assert_eq!(h.phase, Phase::Css, "at or above the baseline");
        for i in 41..=48 {
            h.on_ack(&mut w, &ack(100 + i, Some(ms(114)), i, 80));
        }
        assert_eq!((h.phase, h.css_baseline_min_rtt), (Phase::SlowStart, INFINITY));
    }

    /// RFC 9406 §4.2: only the initial slow start: with ssthresh set (a loss), HyStart++ leaves
    /// the window to the algorithm.
    #[test]
    fn rfc9406_4_2_only_the_initial_slow_start() {
        let mut h = HystartPp::new(0);
        let mut w = win(2);
        w.ssthresh = 50 * MSS;
        assert!(!h.on_ack(&mut w, &ack(1, Some(ms(10)), 1, 3)));
        assert_eq!(w.cwnd, 2 * MSS);
    }

    fn linux() -> LinuxHystart {
        LinuxHystart::new(SimTime::ZERO, 0)
    }

    /// Linux hystart_update() HYSTART_DELAY: after 8 samples, a round minimum above delay_min +
    /// clamp(delay_min >> 3, 4 ms, 16 ms) sets ssthresh = cwnd.
    #[test]
    fn linux_hystart_delay_detection() {
        for (rtt_us, found) in [(112_500, false), (112_501, true)] {
            let mut h = linux();
            let mut w = win(20);
            // Round 1: delay_min = 100 ms. ACKs 10 ms apart: no ack train.
            for i in 1..=10 {
                h.on_ack(&mut w, &ack(i * 10_000, Some(ms(100)), i, 40));
            }
            assert_eq!(h.delay_min, 100_000);
            // Round 2: 9 samples at `rtt_us` (the first 8 are only counted).
            for i in 41..=49 {
                h.on_ack(&mut w, &ack(1_000_000 + i * 10_000, Some(SimDuration::from_micros(rtt_us)), i, 80));
            }
            assert_eq!(h.found, found, "rtt {rtt_us} µs");
            assert_eq!(w.ssthresh == w.cwnd, found);
        }
    }

    /// Linux hystart_update() HYSTART_ACK_TRAIN: ACKs <= 2 ms apart spanning more than
    /// delay_min / 2 from the round's start set ssthresh = cwnd.
    #[test]
    fn linux_hystart_ack_train_detection() {
        let mut h = linux();
        let mut w = win(20);
        // The round starts at 1 s; ACKs every 1 ms, RTT 40 ms: the train passes 20 ms at the 22nd.
        let mut exit_at = None;
        for i in 1..=40u64 {
            h.on_ack(&mut w, &ack(1_000_000 + i * 1000, Some(ms(40)), i, 100));
            if h.found && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        // Round reset at i = 1 (round_start = 1.001 s); found when now - round_start > 20 ms: i = 22.
        assert_eq!(exit_at, Some(22));
        // A gap of more than 2 ms breaks the train: ACKs 3 ms apart never trigger it.
        let mut h = linux();
        let mut w = win(20);
        for i in 1..=40u64 {
            h.on_ack(&mut w, &ack(1_000_000 + i * 3000, Some(ms(40)), i, 100));
        }
        assert!(!h.found);
    }

    /// Linux hystart_update(): nothing below hystart_low_window = 16 segments.
    #[test]
    fn linux_hystart_waits_for_sixteen_segments() {
        let mut h = linux();
        let mut w = win(15);
        for i in 1..=40u64 {
            h.on_ack(&mut w, &ack(1_000_000 + i * 1000, Some(ms(40 + i)), i, 100));
        }
        assert!(!h.found);
        assert_eq!(h.delay_min, 41_000, "delay_min is tracked all the same");
    }

    #[test]
    fn linux_ack_delay_is_capped_at_one_millisecond() {
        let w = win(1000);
        assert_eq!(ack_delay_us(&w, None), 0);
        // 1000 segments at 100 ms: rate 2 * 1e6 B / 0.1 s = 20 MB/s; 262144 B / 20 MB/s = 13.1 ms -> 1 ms.
        assert_eq!(ack_delay_us(&w, Some(ms(100))), 1000);
        // 1000 segments at 100 µs: 20 GB/s -> 13 µs.
        assert_eq!(ack_delay_us(&w, Some(SimDuration::from_micros(100))), 13);
    }
}
