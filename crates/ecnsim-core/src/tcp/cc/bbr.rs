//! BBR v1: the sender models the path by its bottleneck bandwidth (a windowed maximum of
//! delivery-rate samples) and its round-trip propagation time (a windowed minimum of RTT
//! samples), paces at a gain times the bandwidth, and caps what is in flight at a gain times
//! their product.
//!
//! Read first: draft-cardwell-iccrg-bbr-congestion-control-00 (§4.1 the model, §4.2 the
//! delivery-rate samples, §4.3 the state machine: Startup §4.3.2, Drain §4.3.3, ProbeBW
//! §4.3.4, ProbeRTT §4.3.5), draft-cheng-iccrg-delivery-rate-estimation-00 (§3 the per-packet
//! and per-connection state), and Linux `net/ipv4/tcp_bbr.c` with `tcp_rate.c` and
//! `lib/minmax.c`, which is what the kernel here runs. Where the two differ this file follows
//! Linux and says so.
//!
//! Units: gains are fractions of [`BBR_UNIT`] (Linux's `BBR_SCALE` = 8 bits); the bandwidth is
//! in bytes per second and times are in ns.
//! DEVIATION(Linux): Linux keeps the bandwidth in packets per µs << 24 and RTTs in µs; ecnsim
//! counts bytes and ns, so a sample is finer but the same quantity for full-sized segments.
//!
//! Not modelled (docs/models/bbr.md): the long-term bandwidth (policer) estimator of Linux
//! (`bbr_lt_bw_sampling`), BBR v2/v3's ECN response and loss bounds (`inflight_hi`); BBR v1
//! ignores ECN-Echo for its window (Linux `tcp_cong_control()` hands the window to BBR's
//! `cong_control` hook, which never reads ECE).

use std::ops::{Index, IndexMut};

use super::pacing::{mul_div, Pacer};
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};

/// Linux tcp_bbr.c `BBR_SCALE` 8: gains are in units of 1/256.
pub(crate) const BBR_UNIT: u64 = 1 << 8;
/// Linux tcp_bbr.c `bbr_high_gain` = BBR_UNIT * 2885 / 1000 + 1 (2/ln 2, draft §4.3.2.1).
pub(crate) const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
/// Linux tcp_bbr.c `bbr_drain_gain` = BBR_UNIT * 1000 / 2885 (ln 2 / 2, draft §4.3.3).
pub(crate) const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
/// Linux tcp_bbr.c `bbr_cwnd_gain` = BBR_UNIT * 2 (draft §4.3.4.2: cwnd_gain 2 in ProbeBW).
pub(crate) const CWND_GAIN: u64 = BBR_UNIT * 2;
/// Linux tcp_bbr.c `CYCLE_LEN` 8: phases of the ProbeBW gain cycle.
pub(crate) const CYCLE_LEN: usize = 8;
/// Linux tcp_bbr.c `bbr_pacing_gain[]`: 5/4, 3/4, then six phases of 1 (draft §4.3.4.3).
pub(crate) const PACING_GAIN: [u64; CYCLE_LEN] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// Linux tcp_bbr.c `bbr_cycle_rand` 7: the first phase is drawn among 7 (never the 3/4 one).
const CYCLE_RAND: u64 = 7;
/// Linux tcp_bbr.c `bbr_bw_rtts` = CYCLE_LEN + 2: the max-bandwidth filter spans 10 round trips.
const BW_FILTER_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// Linux tcp_bbr.c `bbr_min_rtt_win_sec` 10: the min-RTT filter spans 10 s (draft §4.1.2.3).
const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(10);
/// Linux tcp_bbr.c `bbr_probe_rtt_mode_ms` 200: time held at the minimum window in ProbeRTT.
const PROBE_RTT_TIME: SimDuration = SimDuration::from_millis(200);
/// Linux tcp_bbr.c `bbr_cwnd_min_target` 4 packets (draft §4.3.5: ProbeRTT's 4 packets).
const CWND_MIN_TARGET: u64 = 4;
/// Linux tcp_bbr.c `bbr_full_bw_thresh` = BBR_UNIT * 5 / 4: growth that means more bandwidth.
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
/// Linux tcp_bbr.c `bbr_full_bw_cnt` 3: rounds without that growth before the pipe is full.
const FULL_BW_COUNT: u32 = 3;
/// Linux tcp_bbr.c `bbr_pacing_margin_percent` 1: pace 1 % below the gain times the bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// Linux tcp_bbr.c `bbr_min_tso_rate` 1200000 bit/s: below it, one segment per quantum.
const MIN_TSO_RATE_BYTES: u64 = 1_200_000 / 8;
/// Linux `sk_pacing_shift` default 10: a quantum is about 1 ms (2^-10 s) of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// Linux tcp_bbr.c `bbr_tso_segs_goal()`: at most 0x7F segments per quantum.
const MAX_TSO_SEGS: u64 = 0x7F;
/// Linux `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (65536 - 1 - 320 on x86-64): a quantum's bytes.
const MAX_QUANTUM_BYTES: u64 = 65_536 - 1 - 320;
/// Linux `GSO_LEGACY_MAX_SIZE` 65536: the sending device's `sk_gso_max_size` (veth's default, the
/// emulated hosts' device), bytes.
const GSO_MAX_SIZE: u64 = 65_536;
/// Linux `sysctl_tcp_tso_rtt_log` default 9: short paths (min RTT below 2^(9+5) µs) get larger frames.
const TSO_RTT_LOG: u32 = 9;
/// Linux `TCP_INIT_CWND` 10: the window before any RTT sample, and the slow start allowance.
const INIT_CWND: u64 = 10;
/// Linux tcp_bbr.c `bbr_extra_acked_gain` = BBR_UNIT: the ACK-aggregation allowance's gain.
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
/// Linux tcp_bbr.c `bbr_extra_acked_win_rtts` 5: each half of the aggregation filter, in rounds.
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Linux tcp_bbr.c `bbr_extra_acked_max_us` 100 ms: the aggregation allowance is at most bw * 100 ms.
const EXTRA_ACKED_MAX: SimDuration = SimDuration::from_millis(100);
/// Linux tcp_bbr.c `bbr_ack_epoch_acked_reset_thresh` 2^20 packets: an aggregation epoch restarts.
const ACK_EPOCH_RESET_PACKETS: u64 = 1 << 20;
/// Linux tcp_bbr.c `bbr_init_pacing_rate_from_rtt()`: 1 ms (`USEC_PER_MSEC`) before an RTT sample.
const NOMINAL_RTT: SimDuration = SimDuration::from_millis(1);
const NANOS: u64 = 1_000_000_000;

/// BBR's state machine (draft §4.3, Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up to fill the pipe (draft §4.3.2).
    Startup,
    /// Drain the queue Startup built (draft §4.3.3).
    Drain,
    /// Cycle the pacing gain around 1 (draft §4.3.4).
    ProbeBw,
    /// Cut in-flight to 4 packets to measure the propagation RTT (draft §4.3.5).
    ProbeRtt,
}

/// The loss state the socket is in, as Linux's `icsk_ca_state` (ordered as its values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaState {
    /// `TCP_CA_Open`: no recovery.
    Open,
    /// `TCP_CA_Recovery`: fast recovery.
    Recovery,
    /// `TCP_CA_Loss`: after a retransmission timeout, until what was outstanding is acknowledged.
    Loss,
}

/// What the delivery-rate estimator keeps per data segment sent (draft-cheng §3.2: P.delivered,
/// P.delivered_time, P.first_sent_time, P.is_app_limited; Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug)]
struct Sent {
    /// One past the segment's last byte.
    end: u64,
    /// When it was (last) sent.
    sent: SimTime,
    /// C.first_sent_time when it was sent.
    first_sent: SimTime,
    /// C.delivered when it was sent.
    delivered: u64,
    /// C.delivered_time when it was sent.
    delivered_time: SimTime,
    /// C.app_limited was set when it was sent.
    app_limited: bool,
    /// It was retransmitted (no RTT sample from it: Karn, Linux `FLAG_RETRANS_DATA_ACKED`).
    retransmitted: bool,
    /// Delivered by SACK already (Linux `TCPCB_SACKED_ACKED`, and `tx.delivered_mstamp` cleared:
    /// its cumulative ACK neither counts it again nor samples it again).
    sacked: bool,
}

impl Sent {
    /// A free slot of [`Records`].
    const EMPTY: Sent = Sent {
        end: 0,
        sent: SimTime::ZERO,
        first_sent: SimTime::ZERO,
        delivered: 0,
        delivered_time: SimTime::ZERO,
        app_limited: false,
        retransmitted: false,
        sacked: false,
    };
}

/// The records of the data segments in flight, in sequence order: a ring of a power-of-two number
/// of slots, each record at the slot of its number (records taken from the front keep counting), so
/// that the front is taken by moving a counter and a record is found by a mask.
#[derive(Clone, Debug)]
struct Records {
    slots: Vec<Sent>,
    /// The number of the front record (the records taken from the front so far).
    head: u64,
    /// One past the number of the last record.
    tail: u64,
}

impl Records {
    fn with_capacity(n: usize) -> Self {
        Records { slots: vec![Sent::EMPTY; n.next_power_of_two().max(1)], head: 0, tail: 0 }
    }
    /// The slot of record number `k`.
    #[inline]
    fn slot(&self, k: u64) -> usize {
        // (The slot count is a power of two that fits a usize: the mask keeps the low bits.)
        #[allow(clippy::cast_possible_truncation)]
        let k = k as usize;
        k & (self.slots.len() - 1)
    }
    #[inline]
    fn len(&self) -> usize {
        usize::try_from(self.tail - self.head).expect("records fit in memory")
    }
    /// The `i`-th record from the front.
    #[inline]
    fn get(&self, i: usize) -> Option<&Sent> {
        (i < self.len()).then(|| &self.slots[self.slot(self.head + i as u64)])
    }
    #[inline]
    fn get_mut(&mut self, i: usize) -> Option<&mut Sent> {
        if i < self.len() {
            let k = self.slot(self.head + i as u64);
            Some(&mut self.slots[k])
        } else {
            None
        }
    }
    /// The record of number `k`, if it is held.
    #[inline]
    fn numbered(&self, k: u64) -> Option<&Sent> {
        (self.head <= k && k < self.tail).then(|| &self.slots[self.slot(k)])
    }
    #[inline]
    fn back(&self) -> Option<&Sent> {
        (self.tail > self.head).then(|| &self.slots[self.slot(self.tail - 1)])
    }
    #[inline]
    fn push_back(&mut self, s: Sent) {
        if self.len() == self.slots.len() {
            self.grow();
        }
        let k = self.slot(self.tail);
        self.slots[k] = s;
        self.tail += 1;
    }
    /// Twice the slots, each record moved to its slot there (as `VecDeque` grows: once the window
    /// outgrows the ring, not per segment).
    #[cold]
    fn grow(&mut self) {
        let mut bigger = Records { slots: vec![Sent::EMPTY; 2 * self.slots.len()], head: self.head, tail: self.tail };
        for k in self.head..self.tail {
            let to = bigger.slot(k);
            bigger.slots[to] = self.slots[self.slot(k)];
        }
        *self = bigger;
    }
    /// The number of leading records for which `pred` holds (it holds for a prefix).
    fn partition_point(&self, pred: impl Fn(&Sent) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl Index<usize> for Records {
    type Output = Sent;
    fn index(&self, i: usize) -> &Sent {
        self.get(i).expect("a record in flight")
    }
}

impl IndexMut<usize> for Records {
    fn index_mut(&mut self, i: usize) -> &mut Sent {
        self.get_mut(i).expect("a record in flight")
    }
}

/// One delivery-rate sample (draft-cheng §3.3, Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RateSample {
    /// Bytes delivered over the interval (`rs->delivered`); meaningful if `interval` is some.
    pub(crate) delivered: u64,
    /// The interval, max(send elapsed, ACK elapsed); none for an invalid sample.
    pub(crate) interval: Option<SimDuration>,
    /// C.delivered when the sampled segment was sent (`rs->prior_delivered`).
    pub(crate) prior_delivered: u64,
    /// Bytes this ACK newly acknowledged or reported (`rs->acked_sacked`).
    pub(crate) acked: u64,
    /// Bytes this ACK found lost (`rs->losses`).
    pub(crate) losses: u64,
    /// The sampled segment was sent while application-limited.
    pub(crate) app_limited: bool,
    /// The RTT of the most recently sent segment acknowledged, if not retransmitted.
    pub(crate) rtt: Option<SimDuration>,
    /// Bytes in flight before the ACK (`rs->prior_in_flight`).
    pub(crate) prior_in_flight: u64,
}

/// What the socket tells BBR about an ACK, once it has processed it (Linux `tcp_cong_control()`).
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// The arrival time.
    pub now: SimTime,
    /// SND.UNA after the ACK.
    pub snd_una: u64,
    /// Bytes it newly acknowledged cumulatively (0 for a duplicate ACK).
    pub(crate) acked: u64,
    /// It was a duplicate ACK (RFC 5681 §2 / RFC 6675 §2).
    pub dupack: bool,
    /// The connection uses SACK: deliveries are counted by [`Bbr::on_sacked`] and the cumulative
    /// ACK, not one segment per duplicate ACK (Linux counts Reno "SACKs" only without SACK).
    pub sack: bool,
    /// Octets the scoreboard holds SACKed above SND.UNA (Linux `sacked_out`); 0 without SACK.
    pub sacked: u64,
    /// The socket is in fast recovery after it.
    pub in_recovery: bool,
    /// RFC 6675's pipe, in SACK recovery (the socket's in-flight estimate there).
    pub sack_pipe: Option<u64>,
    /// SND.NXT - SND.UNA after the ACK (RFC 5681 §2 FlightSize).
    pub flight: u64,
    /// SND.MAX - SND.UNA after the ACK (sent and not acknowledged, resent or not).
    pub outstanding: u64,
    /// A fast retransmission is due and not yet sent (its segment is counted lost).
    pub retransmit_due: bool,
    /// The smoothed RTT, if any sample was taken.
    pub srtt: Option<SimDuration>,
    /// The sender's MSS.
    pub mss: u64,
    /// The largest window allowed (`snd_cwnd_clamp`), bytes.
    pub max_cwnd: u64,
}

/// What the socket tells BBR as the application writes (Linux `tcp_rate_check_app_limited()`'s
/// inputs), before the written data is queued.
#[derive(Clone, Copy, Debug)]
pub struct AppWrite {
    /// The window state, as on an ACK (`acked` 0, not a duplicate; only what sets in flight is read).
    pub state: AckInfo,
    /// Less than one MSS written and not yet sent (Linux `write_seq - snd_nxt < mss_cache`).
    pub unsent_below_mss: bool,
    /// A segment of this connection waits in, or is being serialised by, the sending host's egress
    /// port (Linux `sk_wmem_alloc_get(sk) >= SKB_TRUESIZE(1)`: an skb in the qdisc or NIC ring).
    pub queued_at_host: bool,
    /// Every segment marked lost has been retransmitted (Linux `lost_out <= retrans_out`).
    pub lost_retransmitted: bool,
}

/// Linux lib/minmax.c: a windowed running maximum kept as its best three samples from
/// successive parts of the window (Kathleen Nichols' algorithm), here over round counts.
#[derive(Clone, Copy, Debug, Default)]
struct MaxFilter {
    /// (round, value), best first.
    s: [(u64, u64); 3],
}

impl MaxFilter {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    /// lib/minmax.c `minmax_running_max()`.
    fn update(&mut self, win: u64, t: u64, v: u64) {
        // A new maximum, or nothing left in the window: forget earlier samples.
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // lib/minmax.c `minmax_subwin_update()`: age the choices through the window's quarters.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s = [self.s[1], self.s[2], (t, v)];
            if t - self.s[0].0 > win {
                self.s = [self.s[1], self.s[2], (t, v)];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
    }
}

/// What [`Bbr::set_cwnd`]'s window target is computed from (see [`Bbr::cwnd_target`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TargetInputs {
    bw: u64,
    min_rtt: Option<SimDuration>,
    cwnd_gain: u64,
    mss: u64,
    extra_acked: u64,
    full_bw_reached: bool,
    pacing_rate: u64,
    /// ProbeBW's probing phase (`quantization_budget`'s 2 more packets).
    probing: bool,
}

/// BBR's per-connection state (held behind a pointer by [`super::AnyCc`]).
#[derive(Clone, Debug)]
pub struct Bbr {
    // --- delivery-rate estimation (draft-cheng §3, Linux tcp_rate.c) ---
    /// C.delivered: bytes delivered so far (cumulatively or by duplicate ACKs).
    delivered: u64,
    /// C.delivered_time.
    delivered_time: SimTime,
    /// C.first_sent_time.
    first_sent: SimTime,
    /// C.app_limited: 0, or the C.delivered value past which samples are no longer app-limited.
    app_limited: u64,
    /// The data segments in flight, in sequence order (their send-time state); `sent[i]` is record
    /// number `sent.head + i`.
    sent: Records,
    /// The number of the record after the one last retransmitted (a go-back-N after a timeout
    /// resends the records in order).
    rtx_next: u64,
    /// Bytes reported by duplicate ACKs and not yet acknowledged cumulatively (Linux's Reno
    /// `sacked_out`, `tcp_add_reno_sack()` / `tcp_remove_reno_sacks()`).
    dup_credit: u64,
    /// Bytes duplicate ACKs reported before a timeout and not yet acknowledged cumulatively: no
    /// longer in `dup_credit` (the window's count), still counted delivered (see [`Bbr::on_rto`]).
    rto_credit: u64,
    /// On a SACK connection: bytes newly SACKed by the ACK being processed (Linux
    /// `tcp_sacktag_one()`: `tp->delivered` counts them as they are SACKed).
    sack_delivered: u64,
    /// The most recently sent record newly SACKed by the ACK being processed (Linux
    /// `tcp_rate_skb_delivered()` is called for each SACKed segment too).
    sack_newest: Option<Sent>,
    /// One past the last record taken from the front of `sent` (where the front record starts).
    popped_end: u64,
    /// Data segments sent (Linux `data_segs_out`).
    segs_out: u64,
    /// Bytes marked lost so far on ACKs (Linux `tp->lost`).
    lost: u64,
    /// Bytes marked lost while the socket processes the current ACK, for its rate sample (Linux
    /// tcp_ack(): `lost = tp->lost - lost`, `rs->losses`).
    lost_on_ack: u64,
    /// RFC 6675 recovery without RACK: octets below this were counted lost in this recovery.
    lost_mark: u64,
    /// The smallest RTT of the connection (Linux `tcp_min_rtt()`, a 5-minute window).
    conn_min_rtt: Option<SimDuration>,

    // --- the model (draft §4.1) ---
    mode: Mode,
    /// The windowed max of bandwidth samples, bytes/s.
    bw: MaxFilter,
    /// BBR.min_rtt; none before the first sample.
    min_rtt: Option<SimDuration>,
    /// When min_rtt was last set (or refreshed by ProbeRTT).
    min_rtt_stamp: SimTime,
    /// Round trips counted (draft §4.1.1.3).
    round_count: u64,
    /// C.delivered at which the next round starts.
    next_round_delivered: u64,
    round_start: bool,
    /// Startup's full-pipe detection (draft §4.3.2.2).
    full_bw: u64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_index: usize,
    /// C.delivered_time when the current gain phase began.
    cycle_stamp: SimTime,
    pacing_gain: u64,
    cwnd_gain: u64,
    /// The window to restore after recovery or ProbeRTT.
    prior_cwnd: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    /// None until ProbeRTT has reached its window.
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// Ends the loss state entered at a timeout: SND.MAX then.
    loss_until: u64,
    /// ACK aggregation (Linux `bbr_update_ack_aggregation()`).
    ack_epoch_start: SimTime,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_rounds: u32,
    extra_acked_index: usize,

    // --- what BBR sets ---
    /// BBR's cwnd in Linux's terms (what may be in flight, bytes).
    cwnd: u64,
    /// Pacing rate, bytes/s.
    pacing_rate: u64,
    has_seen_rtt: bool,
    /// The departure clock of the next data segment.
    pacer: Pacer,
    /// When the current offload frame's segments leave (they all leave at one instant).
    frame_at: SimTime,
    /// Segments that may still join the current frame at `frame_at`.
    frame_left: u64,
    /// The sender's MSS (Linux `tp->mss_cache`), from the last ACK; 0 before one.
    mss: u64,
    /// `tcp.tso_segments`: the largest offload frame (Linux `sk_gso_max_size` / MSS); 1, no
    /// offload, sends one segment per departure.
    max_frame_segs: u64,
    rng: SimRng,
    /// The last window target and its inputs: most ACKs change none of them.
    target_cache: (TargetInputs, u64),
}

impl Bbr {
    /// BBR at connection start (Linux `bbr_init()`): Startup, `cwnd` the initial window.
    #[must_use]
    pub fn new(cwnd: u64, rng: SimRng) -> Self {
        let mut b = Bbr {
            delivered: 0,
            delivered_time: SimTime::ZERO,
            first_sent: SimTime::ZERO,
            app_limited: 0,
            sent: Records::with_capacity(64),
            rtx_next: 0,
            dup_credit: 0,
            rto_credit: 0,
            sack_delivered: 0,
            sack_newest: None,
            popped_end: 0,
            segs_out: 0,
            lost: 0,
            lost_on_ack: 0,
            lost_mark: 0,
            conn_min_rtt: None,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            loss_until: 0,
            ack_epoch_start: SimTime::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_rounds: 0,
            extra_acked_index: 0,
            cwnd,
            pacing_rate: 0,
            has_seen_rtt: false,
            pacer: Pacer::default(),
            frame_at: SimTime::ZERO,
            frame_left: 0,
            mss: 0,
            max_frame_segs: 1,
            rng,
            target_cache: (TargetInputs::default(), 0),
        };
        b.init_pacing_rate(None);
        b
    }

    /// Draw the gain cycle's phases from `rng` (the connection's own stream).
    pub(crate) fn set_rng(&mut self, rng: SimRng) {
        self.rng = rng;
    }

    /// The state machine's state.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The bottleneck bandwidth estimate (the filter's max), bytes/s.
    #[must_use]
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }
    /// BBR.min_rtt.
    #[must_use]
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }
    /// The pacing rate, bytes/s.
    #[must_use]
    pub fn pacing_rate(&self) -> u64 {
        self.pacing_rate
    }
    /// The current pacing gain, in 1/[`BBR_UNIT`].
    #[must_use]
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }
    /// The ProbeBW phase.
    #[must_use]
    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }
    /// Startup found the pipe full.
    #[must_use]
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Bytes marked lost on ACKs so far (Linux `tp->lost`; not those a timer marked).
    #[must_use]
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }

    // ------------------------------------------------------------------
    // Pacing
    // ------------------------------------------------------------------

    /// If a data segment may not leave before a later instant, that instant.
    #[inline]
    pub(crate) fn pacing_blocks(&self, now: SimTime) -> Option<SimTime> {
        // Linux tcp_write_xmit(): one pacing check per skb; the segments of an skb of up to
        // tcp_tso_segs() leave together (GSO splits it at the device, back to back).
        if self.frame_left > 0 && self.frame_at == now {
            return None;
        }
        self.pacer.blocks(now)
    }

    /// With segmentation offload (`tcp.tso_segments` = M > 1), each paced departure is a frame of
    /// up to M segments, autosized from the pacing rate; with M = 1 (the default) one segment.
    pub(crate) fn set_max_frame_segs(&mut self, m: u64) {
        self.max_frame_segs = m.max(1);
        if self.max_frame_segs == 1 {
            self.frame_left = 0;
        }
    }

    /// Linux `tcp_tso_segs()` -> `tcp_tso_autosize(sk, mss, bbr_min_tso_segs())`, capped by
    /// `tcp_cwnd_test()`'s half window: the segments of one departure (offload frame).
    fn frame_segs(&self, mss: u64) -> u64 {
        if self.max_frame_segs <= 1 {
            return 1;
        }
        let mut bytes = self.pacing_rate >> PACING_SHIFT;
        // Linux tcp_tso_autosize(): + gso_max_size >> (tcp_min_rtt() >> tcp_tso_rtt_log) on short paths.
        if let Some(r) = self.conn_min_rtt.map(|r| (r.as_nanos() / 1000) >> TSO_RTT_LOG) {
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        // Linux tcp_tso_autosize(): at most sk_gso_max_size (here M segments).
        let bytes = bytes.min(GSO_MAX_SIZE).min(self.max_frame_segs * mss.max(1));
        // Linux bbr_min_tso_segs(): 1 below bbr_min_tso_rate, else 2.
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BYTES { 1 } else { 2 };
        let segs = (bytes / mss.max(1)).max(min_segs);
        // Linux tcp_cwnd_test(): at most half the window in one skb ("at least 2 GSO packets in flight").
        segs.min((self.cwnd / mss.max(1) / 2).max(1))
    }

    /// A data segment `[seq, end)` left at `now`; `outstanding` is false if nothing was
    /// outstanding before it (SND.UNA = SND.MAX).
    pub(crate) fn on_data_sent(&mut self, now: SimTime, seq: u64, end: u64, outstanding: bool) {
        // (The rare cases are out of line, so that a bulk sender's segment, new data sent with data
        // outstanding and without offload, runs only the record, the count and the pacer.)
        if self.segs_out == 0 {
            self.on_first_sent(now, seq);
        }
        if !outstanding {
            self.on_sent_from_idle(now);
        }
        let rec = Sent {
            end,
            sent: now,
            first_sent: self.first_sent,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            app_limited: self.app_limited != 0,
            retransmitted: false,
            sacked: false,
        };
        let back_end = self.sent.back().map(|b| b.end);
        if back_end.is_none_or(|b| b < end) && seq >= back_end.unwrap_or(0) {
            self.sent.push_back(rec);
        } else {
            self.on_resent(seq, rec);
        }
        self.segs_out += 1;
        if self.max_frame_segs > 1 {
            self.on_frame_sent(now, seq, end);
        } else {
            // Without offload every departure is one segment (`frame_segs` 1): no frame is open.
            debug_assert_eq!(self.frame_left, 0);
        }
        // Linux tcp_update_skb_after_send(): the frame's length over the pacing rate, segment by
        // segment (the sum is the skb's). DEVIATION(Linux): the lateness credit is capped at half
        // the frame's first segment's time, not half the frame's.
        self.pacer.on_sent(now, end - seq, self.pacing_rate, self.segs_out);
    }

    /// The connection's first data segment left at `now` (see [`Bbr::on_data_sent`]).
    #[cold]
    #[inline(never)]
    fn on_first_sent(&mut self, now: SimTime, seq: u64) {
        // Linux bbr_init() at the start of the transfer: the min-RTT filter and the
        // aggregation epoch start now.
        self.min_rtt_stamp = now;
        self.ack_epoch_start = now;
        self.popped_end = seq;
    }

    /// A data segment left at `now` with nothing outstanding (see [`Bbr::on_data_sent`]).
    #[inline(never)]
    fn on_sent_from_idle(&mut self, now: SimTime) {
        // draft-cheng §3.2 / Linux tcp_rate_skb_sent(): with nothing in flight, the sending and
        // delivery clocks restart now.
        self.first_sent = now;
        self.delivered_time = now;
        if self.app_limited != 0 {
            // Linux bbr_cwnd_event(CA_EVENT_TX_START) while app-limited: restarting from idle.
            self.idle_restart = true;
            self.ack_epoch_start = now;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                // Pace at the estimated bandwidth: no need for more speed after idle.
                self.set_pacing_rate(self.bw.get(), BBR_UNIT, None);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(now);
            }
        }
    }

    /// The segment at `seq` was sent again, `rec` its new stamps (see [`Bbr::on_data_sent`]).
    #[inline(never)]
    fn on_resent(&mut self, seq: u64, rec: Sent) {
        // A retransmission: Linux tcp_rate_skb_sent() stamps the segment again.
        let i = self.record_of(seq);
        if let Some(s) = self.sent.get_mut(i) {
            *s = Sent { end: s.end, retransmitted: true, sacked: s.sacked, ..rec };
        }
        self.rtx_next = self.sent.head + i as u64 + 1;
    }

    /// With offload (`tcp.tso_segments` > 1): `[seq, end)` joins the frame leaving at `now`, or
    /// starts the next (see [`Bbr::on_data_sent`]).
    #[inline(never)]
    fn on_frame_sent(&mut self, now: SimTime, seq: u64, end: u64) {
        if self.frame_left > 0 && self.frame_at == now {
            self.frame_left -= 1;
        } else {
            // Linux tcp_write_xmit(): a new skb of up to tcp_tso_segs() segments leaves now.
            // DEVIATION(Linux): a frame ends where the socket stops sending at this instant (window,
            // data); Linux builds the skb to that size first. Without tcp_tso_should_defer().
            let mss = if self.mss > 0 { self.mss } else { end - seq };
            self.frame_at = now;
            self.frame_left = self.frame_segs(mss) - 1;
        }
    }

    /// On a SACK connection, before [`Bbr::on_ack`]: `[left, right)` was newly SACKed. Each record
    /// wholly inside is delivered now (Linux `tcp_sacktag_one()`: `tcp_count_delivered()` and
    /// `tcp_rate_skb_delivered()` for each newly SACKed segment), once: its cumulative ACK later
    /// counts and samples nothing.
    pub(crate) fn on_sacked(&mut self, left: u64, right: u64) {
        let mut i = self.sent.partition_point(|s| s.end <= left);
        while let Some(s) = self.sent.get(i).copied() {
            if s.end > right {
                break;
            }
            let start = if i == 0 { self.popped_end } else { self.sent[i - 1].end };
            // DEVIATION(Linux): only a segment a block covers whole is SACKed (Linux splits a partly SACKed
            // one), and the mark stays at a timeout that clears the scoreboard (Linux clears it on reneging).
            if !s.sacked && start >= left {
                let len = s.end - start;
                self.sent[i].sacked = true;
                self.sack_delivered += len;
                // Linux tcp_rate_skb_delivered(): the most recently sent segment delivered gives the sample.
                if self.sack_newest.is_none_or(|n| (s.sent, s.end) > (n.sent, n.end)) {
                    self.sack_newest = Some(s);
                }
            }
            i += 1;
        }
    }

    /// While the socket processes an ACK, before [`Bbr::on_ack`]: `bytes` were newly marked lost (Linux
    /// tcp_mark_skb_lost() -> tcp_sum_lost(): `tp->lost`, a lost retransmission again), by RACK, RFC
    /// 6675's IsLost, or NewReno's head on entering recovery and on each partial ACK.
    pub(crate) fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
        self.lost_on_ack += bytes;
    }

    /// RFC 6675 recovery without RACK: the octets below which losses were counted (the socket counts
    /// the unSACKed octets IsLost() newly covers above it).
    pub(crate) fn lost_mark(&self) -> u64 {
        self.lost_mark
    }
    /// See [`Bbr::lost_mark`].
    pub(crate) fn set_lost_mark(&mut self, mark: u64) {
        self.lost_mark = mark;
    }

    /// The index in `sent` of the first record ending after `seq` (`sent.len()` if none): the
    /// binary search's answer, tried first where a retransmission usually is: the first record
    /// (a fast retransmission resends SND.UNA) or the one after the last retransmitted (a
    /// go-back-N after a timeout). The records' ends increase, so record `h` is the answer
    /// exactly when it ends after `seq` and the one before it does not.
    fn record_of(&self, seq: u64) -> usize {
        let ends_after = |h: usize| self.sent.get(h).is_some_and(|s| s.end > seq);
        if ends_after(0) {
            return 0;
        }
        if let Ok(h) = usize::try_from(self.rtx_next.wrapping_sub(self.sent.head)) {
            if h > 0 && ends_after(h) && !ends_after(h - 1) {
                return h;
            }
        }
        self.sent.partition_point(|s| s.end <= seq)
    }

    // ------------------------------------------------------------------
    // ACKs
    // ------------------------------------------------------------------

    /// Linux `tcp_rate_skb_delivered()` over the segments this ACK acknowledges, then
    /// `tcp_rate_gen()`: the rate sample of the ACK. Updates C.delivered.
    fn rate_sample(&mut self, a: &AckInfo, prior_in_flight: u64, losses: u64) -> RateSample {
        // (Only `on_sacked` sets `sack_newest`, on a SACK connection.)
        debug_assert!(a.sack || self.sack_newest.is_none());
        let mut newest: Option<Sent> = if a.sack { self.sack_newest.take() } else { None };
        let mut sacked_acked = 0;
        // The acknowledged records are read where they are, the newest one copied out, then taken
        // from the front together.
        let mut newest_key = newest.map(|n| (n.sent, n.end));
        let mut newest_at = None;
        let mut start = self.popped_end;
        let mut k = self.sent.head;
        while let Some(front) = self.sent.numbered(k) {
            if front.end > a.snd_una {
                break;
            }
            if front.sacked {
                // Linux tcp_clean_rtx_queue(): a SACKed segment was counted delivered when SACKed.
                sacked_acked += front.end.saturating_sub(start);
            } else if newest_key.is_none_or(|n| (front.sent, front.end) > n) {
                // Linux tcp_rate_skb_delivered(): the most recently sent segment delivered gives the sample.
                newest_key = Some((front.sent, front.end));
                newest_at = Some(k);
            }
            start = front.end;
            k += 1;
        }
        if let Some(at) = newest_at {
            newest = self.sent.numbered(at).copied();
        }
        self.sent.head = k;
        self.popped_end = start;
        // Linux tcp_remove_reno_sacks() / tcp_add_reno_sack(): a duplicate ACK reports one segment;
        // a cumulative ACK delivers what was not reported so (at least one segment: the hole).
        let delivered = if a.sack {
            // Linux tcp_count_delivered() on a SACK connection: what was newly SACKed, and what the
            // cumulative ACK covered that had not been SACKed (RFC 6937 §2's DeliveredData).
            a.acked.saturating_sub(sacked_acked) + std::mem::take(&mut self.sack_delivered)
        } else if a.dupack {
            self.dup_credit += a.mss;
            a.mss
        } else if a.acked > 0 {
            let hole = a.acked.min(a.mss);
            let fresh = a.acked.saturating_sub(self.dup_credit + self.rto_credit).max(hole);
            // What was reported before the last timeout is the older data: it is acknowledged first.
            let mut covered = a.acked - hole;
            let old = covered.min(self.rto_credit);
            self.rto_credit -= old;
            covered -= old;
            self.dup_credit -= self.dup_credit.min(covered);
            fresh
        } else {
            0
        };
        let mut rs = RateSample { acked: delivered, losses, prior_in_flight, ..RateSample::default() };
        self.delivered += delivered;
        if let Some(p) = newest {
            rs.prior_delivered = p.delivered;
            rs.app_limited = p.app_limited;
            // Linux tcp_rate_skb_delivered(): the send clock moves to this segment's send time.
            self.first_sent = p.sent;
            if !p.retransmitted {
                rs.rtt = Some(a.now.saturating_since(p.sent));
            }
        }
        // draft-cheng §3.3 / Linux tcp_rate_gen(): the app-limited bubble ends once it is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_time = a.now;
        }
        if let Some(r) = rs.rtt {
            self.conn_min_rtt = Some(self.conn_min_rtt.map_or(r, |m| m.min(r)));
        }
        let Some(p) = newest else { return rs };
        rs.delivered = self.delivered - p.delivered;
        // draft-cheng §3.3: interval = max(send_elapsed, ack_elapsed), against ACK compression.
        let send_elapsed = p.sent.saturating_since(p.first_sent);
        let ack_elapsed = a.now.saturating_since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // Linux tcp_rate_gen(): an interval below the connection's min RTT is unreliable.
        if self.conn_min_rtt.is_none_or(|m| interval >= m) && interval > SimDuration::ZERO {
            rs.interval = Some(interval);
        }
        rs
    }

    /// Everything BBR does on an ACK, after the socket processed it (Linux `tcp_cong_control()` ->
    /// `bbr_main()`); returns the window for the socket (`tcp_snd_cwnd`), in its terms.
    pub(crate) fn on_ack(&mut self, a: &AckInfo) -> u64 {
        self.mss = a.mss;
        let ca_state = if a.in_recovery {
            CaState::Recovery
        } else if a.snd_una < self.loss_until {
            CaState::Loss
        } else {
            CaState::Open
        };
        // Linux tcp_ack(): `lost = tp->lost - lost`, what this ACK's processing marked lost (rs->losses).
        let losses = std::mem::take(&mut self.lost_on_ack);
        // Linux tcp_timeout_mark_lost(): what was outstanding at a timeout stays marked lost until
        // acknowledged (lost_out), also through a fast recovery the socket's RFC 6582 rules begin then.
        let lost_marks = a.snd_una < self.loss_until;
        let snd_nxt = a.snd_una + a.flight;
        // Linux tcp_process_loss(): in the loss state a Reno duplicate ACK counts (tcp_add_reno_sack())
        // only once snd_nxt has passed high_seq; before, it reports a segment sent before the timeout.
        let mut a = *a;
        if lost_marks && snd_nxt <= self.loss_until {
            a.dupack = false;
        }
        let a = &a;
        let inflight_after = self.inflight(a);
        let delivered_now = if a.dupack { a.mss } else { a.acked };
        let mut rs = self.rate_sample(a, inflight_after + delivered_now, losses);
        if a.sack {
            // Linux tcp_ack(): prior_in_flight, before this ACK's deliveries (SACKed ones included).
            rs.prior_in_flight = inflight_after + rs.acked;
        }
        if ca_state == CaState::Open && (self.prev_ca_state != CaState::Open || a.acked > 0) {
            // Linux tcp_reset_reno_sack() as recovery or the loss state ends: no segment is counted
            // as reported any more.
            // DEVIATION(Linux): also on any ACK of new data outside recovery (duplicate ACKs below the
            // threshold, from reordering or duplicated segments, are forgotten once SND.UNA moves).
            self.dup_credit = 0;
            self.rto_credit = 0;
        }
        // Linux tcp_limit_reno_sacked(): never more reported than outstanding and not marked lost (after a
        // timeout, what was sent beyond high_seq).
        let reportable = if lost_marks { snd_nxt.saturating_sub(self.loss_until) } else { a.outstanding };
        self.dup_credit = self.dup_credit.min(reportable);
        self.rto_credit = self.rto_credit.min(a.outstanding - self.dup_credit);
        let inflight = self.inflight(a);
        self.update_model(a, &rs, inflight);
        let bw = self.bw.get();
        self.set_pacing_rate(bw, self.pacing_gain, a.srtt);
        self.set_cwnd(a, &rs, ca_state, inflight, bw);
        // The socket's window: in NewReno recovery the duplicate ACKs' segments have left the
        // network but not SND.UNA..SND.NXT, so they are added back (RFC 5681 §3.2 step 4's inflation).
        if a.in_recovery && a.sack_pipe.is_none() {
            self.cwnd + self.dup_credit
        } else {
            self.cwnd
        }
    }

    /// Linux `tcp_packets_in_flight()` in the socket's terms: RFC 6675's pipe in SACK recovery;
    /// otherwise FlightSize less what duplicate ACKs reported and the segment found lost.
    fn inflight(&self, a: &AckInfo) -> u64 {
        if let Some(pipe) = a.sack_pipe {
            return pipe;
        }
        let lost = if a.retransmit_due { a.mss } else { 0 };
        // Linux tcp_packets_in_flight(): packets_out - (sacked_out + lost_out) + retrans_out.
        a.flight.saturating_sub(self.dup_credit + a.sacked + lost)
    }

    /// The application writes (Linux `tcp_sendmsg_locked()` calls `tcp_rate_check_app_limited()`
    /// before it queues the new data): `w` is the socket's state just before the write. Marks the
    /// connection application-limited until what is in flight now is delivered.
    pub(crate) fn on_app_write(&mut self, w: &AppWrite) {
        let inflight = self.inflight(&w.state);
        // Linux tcp_rate.c tcp_rate_check_app_limited(): less than one MSS unsent (write_seq - snd_nxt <
        // mss_cache), nothing of the socket's in the host's qdisc or NIC (sk_wmem_alloc < SKB_TRUESIZE(1)),
        // in flight below cwnd (tcp_packets_in_flight() < snd_cwnd), every lost segment retransmitted
        // (lost_out <= retrans_out); then app_limited = delivered + in flight, or 1 if both are 0.
        if w.unsent_below_mss && !w.queued_at_host && inflight < self.cwnd && w.lost_retransmitted {
            self.app_limited = (self.delivered + inflight).max(1);
        }
    }

    /// The C.delivered value past which samples are no longer application-limited (0: none);
    /// Linux `tp->app_limited`.
    #[must_use]
    pub fn app_limited_until(&self) -> u64 {
        self.app_limited
    }

    /// Linux `bbr_update_model()`.
    fn update_model(&mut self, a: &AckInfo, rs: &RateSample, inflight: u64) {
        self.update_bw(rs);
        self.update_ack_aggregation(a, rs);
        self.update_cycle_phase(a, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(a, inflight);
        self.update_min_rtt(a, rs, inflight);
        self.update_gains();
    }

    /// Linux `bbr_update_bw()` (draft §4.1.1.3 round counting, §4.1.1.5 the max filter).
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(interval) = rs.interval else { return };
        // draft §4.1.1.3: a round ends when a segment sent after the last round began is delivered.
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = mul_div(rs.delivered, NANOS, interval.as_nanos());
        // Linux bbr_update_bw(): an app-limited sample enters the filter only if it is not below it.
        if !rs.app_limited || bw >= self.bw.get() {
            self.bw.update(BW_FILTER_ROUNDS, self.round_count, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation()`: the most data acknowledged beyond bw over an epoch.
    fn update_ack_aggregation(&mut self, a: &AckInfo, rs: &RateSample) {
        if rs.acked == 0 || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_rounds = (self.extra_acked_rounds + 1).min(0x1F);
            if self.extra_acked_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_rounds = 0;
                self.extra_acked_index ^= 1;
                self.extra_acked[self.extra_acked_index] = 0;
            }
        }
        let epoch = self.delivered_time.saturating_since(self.ack_epoch_start);
        let mut expected = bytes_in(self.bw.get(), epoch);
        // An ACK rate below the expected one, or a very old epoch: a new epoch starts.
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked >= ACK_EPOCH_RESET_PACKETS * a.mss {
            self.ack_epoch_acked = 0;
            self.ack_epoch_start = self.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked += rs.acked;
        let extra = (self.ack_epoch_acked - expected.min(self.ack_epoch_acked)).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_index];
        *slot = (*slot).max(extra);
    }

    /// Linux `bbr_update_cycle_phase()` / `bbr_is_next_cycle_phase()` (draft §4.3.4.3).
    fn update_cycle_phase(&mut self, a: &AckInfo, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self.delivered_time.saturating_since(self.cycle_stamp) > self.min_rtt.unwrap_or_default();
        let next = if self.pacing_gain == BBR_UNIT {
            full_length
        } else {
            let inflight = self.in_net_at_edt(a, rs.prior_in_flight);
            let bw = self.bw.get();
            if self.pacing_gain > BBR_UNIT {
                // Probing: until pacing_gain * BDP is in flight, or a loss says it may not fit.
                full_length && (rs.losses > 0 || inflight >= self.inflight_target(a, bw, self.pacing_gain))
            } else {
                // Draining: until the queue is estimated gone.
                full_length || inflight <= self.inflight_target(a, bw, BBR_UNIT)
            }
        };
        if next {
            self.advance_cycle_phase();
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_index = (self.cycle_index + 1) % CYCLE_LEN;
        self.cycle_stamp = self.delivered_time;
    }

    /// Linux `bbr_check_full_bw_reached()` (draft §4.3.2.2): three rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let thresh = self.full_bw * FULL_BW_THRESH / BBR_UNIT;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_COUNT;
    }

    /// Linux `bbr_check_drain()` (draft §4.3.3).
    fn check_drain(&mut self, a: &AckInfo, inflight: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(a, inflight) <= self.inflight_target(a, self.bw.get(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// Linux `bbr_reset_probe_bw_mode()`: ProbeBW from a random phase other than the 3/4 one.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = usize::try_from(self.rng.below(CYCLE_RAND)).expect("below 7");
        self.cycle_index = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase();
    }

    /// Linux `bbr_reset_mode()`.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_update_min_rtt()` (draft §4.1.2.3 the filter, §4.3.5 ProbeRTT).
    fn update_min_rtt(&mut self, a: &AckInfo, rs: &RateSample, inflight: u64) {
        let now = a.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        // DEVIATION(Linux): Linux keeps an expired filter's value for a sample from a delayed ACK
        // (`is_ack_delayed`); ecnsim takes any sample once the filter has expired.
        if let Some(r) = rs.rtt {
            // Linux bbr_update_min_rtt(): `rs->rtt_us <= bbr->min_rtt_us`: a sample equal to the minimum
            // renews its stamp (and puts ProbeRTT off).
            if self.min_rtt.is_none_or(|m| r <= m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Linux: samples taken in ProbeRTT are app-limited (a low rate by design).
            self.app_limited = (self.delivered + inflight).max(1);
            if self.probe_rtt_done.is_none() && inflight <= CWND_MIN_TARGET * a.mss {
                // draft §4.3.5: hold 4 packets for max(200 ms, one round).
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if rs.acked > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_check_probe_rtt_done()`.
    fn check_probe_rtt_done(&mut self, now: SimTime) {
        if self.probe_rtt_done.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// Linux `bbr_update_gains()`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_index], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// Linux `bbr_save_cwnd()`: the last good window, to restore after recovery or ProbeRTT.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// Fast recovery begins (Linux `tcp_enter_recovery()` calls `bbr_ssthresh()`, which saves the window).
    pub(crate) fn on_enter_recovery(&mut self) {
        self.save_cwnd();
    }

    /// The retransmission timer expired (Linux `tcp_enter_loss()`: `bbr_ssthresh()` if `first`, the
    /// window to in-flight + 1 = one segment, then `bbr_set_state(TCP_CA_Loss)`).
    pub(crate) fn on_rto(&mut self, first: bool, mss: u64, snd_max: u64) -> u64 {
        if first {
            self.save_cwnd();
        }
        self.cwnd = mss;
        // Linux tcp_enter_loss() -> tcp_timeout_mark_lost() -> tcp_reset_reno_sack(): sacked_out = 0, so
        // neither the in-flight estimate nor the socket's window (NewReno's inflation) counts them any more.
        // DEVIATION(Linux): Linux then counts those segments delivered a second time when the hole fills
        // (tcp_remove_reno_sacks(): `acked - sacked_out`); ecnsim keeps them as delivered (`rto_credit`),
        // which without SACK would otherwise make a rate sample of hundreds of segments over one round trip.
        self.rto_credit += std::mem::take(&mut self.dup_credit);
        self.loss_until = snd_max;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        // Linux bbr_set_state(): a timeout is treated as the end of a round.
        self.round_start = true;
        self.cwnd
    }

    /// The pacing rate for `bw` and `gain`, bytes/s (Linux `bbr_bw_to_pacing_rate()`).
    fn rate(bw: u64, gain: u64) -> u64 {
        mul_div(mul_div(bw, gain, BBR_UNIT), 100 - PACING_MARGIN_PERCENT, 100)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt()`: high_gain * cwnd / RTT (1 ms before a sample).
    fn init_pacing_rate(&mut self, srtt: Option<SimDuration>) {
        let rtt = srtt.map_or(NOMINAL_RTT, |r| r.max(SimDuration::from_micros(1)));
        self.has_seen_rtt = srtt.is_some();
        let bw = mul_div(self.cwnd, NANOS, rtt.as_nanos());
        self.pacing_rate = Self::rate(bw, HIGH_GAIN);
    }

    /// Linux `bbr_set_pacing_rate()`: in Startup the rate only rises.
    fn set_pacing_rate(&mut self, bw: u64, gain: u64, srtt: Option<SimDuration>) {
        let rate = Self::rate(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_bdp()`: ceil(bw * min_rtt * gain), in packets; the initial window without an RTT.
    fn bdp_packets(&self, mss: u64, bw: u64, gain: u64) -> u64 {
        let Some(rtt) = self.min_rtt else { return INIT_CWND };
        let unit = NANOS * BBR_UNIT * mss.max(1);
        if let Some(bytes) = bw.checked_mul(rtt.as_nanos()).and_then(|x| x.checked_mul(gain)) {
            // The common case in 64 bits: the same quotient as the 128-bit one.
            return bytes.div_ceil(unit);
        }
        let bytes = u128::from(bw) * u128::from(rtt.as_nanos()) * u128::from(gain);
        let unit = u128::from(unit);
        u64::try_from(bytes.div_ceil(unit)).unwrap_or(u64::MAX / 4)
    }

    /// Linux `bbr_tso_segs_goal()`: segments per quantum (about 1 ms of the pacing rate).
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(MAX_QUANTUM_BYTES);
        // Linux bbr_min_tso_segs(): 1 below bbr_min_tso_rate, else 2.
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BYTES { 1 } else { 2 };
        (bytes / mss.max(1)).max(min_segs).min(MAX_TSO_SEGS)
    }

    /// Linux `bbr_quantization_budget()`: three quanta (sender qdisc, TSO engine, receiver's
    /// delayed ACK), rounded up to an even number, and 2 more in ProbeBW's probing phase.
    fn quantization_budget(&self, mss: u64, packets: u64) -> u64 {
        let cwnd = packets + 3 * self.tso_segs_goal(mss);
        let cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            cwnd + 2
        } else {
            cwnd
        }
    }

    /// Linux `bbr_inflight()`: the in-flight target for `bw` and `gain`, bytes.
    fn inflight_target(&self, a: &AckInfo, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(a.mss, self.bdp_packets(a.mss, bw, gain)) * a.mss
    }

    /// Linux `bbr_packets_in_net_at_edt()`: what will still be in the network when the next paced
    /// segment leaves, bytes.
    fn in_net_at_edt(&self, a: &AckInfo, inflight: u64) -> u64 {
        let wait = self.pacer.next_send().saturating_since(a.now);
        let delivered_meanwhile = bytes_in(self.bw.get(), wait);
        let mut at_edt = inflight;
        if self.pacing_gain > BBR_UNIT {
            // Increasing in-flight: count the segment(s) leaving at that time.
            at_edt += self.tso_segs_goal(a.mss) * a.mss;
        }
        at_edt.saturating_sub(delivered_meanwhile)
    }

    /// Linux `bbr_ack_aggregation_cwnd()`: the allowance for ACK aggregation, packets, once the
    /// pipe is full.
    fn ack_aggregation_packets(&self, mss: u64) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = bytes_in(self.bw.get(), EXTRA_ACKED_MAX) / mss.max(1);
        let extra = self.extra_acked[0].max(self.extra_acked[1]) / mss.max(1);
        (EXTRA_ACKED_GAIN * extra / BBR_UNIT).min(max_aggr)
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore()` (draft §4.3.6 / the packet conservation of
    /// the first round of recovery): returns true while conserving packets.
    fn recover_or_restore(&mut self, rs: &RateSample, state: CaState, inflight: u64) -> bool {
        let mut cwnd = self.cwnd;
        // An ACK for P packets releases at most 2P: first take off what it found lost.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            // The first round of recovery: packet conservation, the round starts now; unused
            // window (application-limited) is cut.
            self.packet_conservation = true;
            self.next_round_delivered = self.delivered;
            cwnd = inflight + rs.acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            // Recovery (or the timeout's loss state) ends: the window saved at its start comes back.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            self.cwnd = cwnd.max(inflight + rs.acked);
            return true;
        }
        self.cwnd = cwnd;
        false
    }

    /// Linux `bbr_set_cwnd()`'s target: bbr_inflight(bw, cwnd_gain) + bbr_ack_aggregation_cwnd(),
    /// quantized (`bbr_quantization_budget()`), bytes. A pure function of [`TargetInputs`], so the
    /// last one is reused while they are unchanged (the same value, without its divisions).
    fn cwnd_target(&mut self, mss: u64, bw: u64) -> u64 {
        debug_assert_eq!(bw, self.bw.get(), "ack_aggregation_packets reads the filter's bw");
        let inputs = TargetInputs {
            bw,
            min_rtt: self.min_rtt,
            cwnd_gain: self.cwnd_gain,
            mss,
            extra_acked: self.extra_acked[0].max(self.extra_acked[1]),
            full_bw_reached: self.full_bw_reached,
            pacing_rate: self.pacing_rate,
            probing: self.mode == Mode::ProbeBw && self.cycle_index == 0,
        };
        if inputs == self.target_cache.0 && self.target_cache.1 != 0 {
            debug_assert_eq!(
                self.target_cache.1,
                self.fresh_cwnd_target(mss, bw),
                "a cached target is the computed one"
            );
            return self.target_cache.1;
        }
        let target = self.fresh_cwnd_target(mss, bw);
        self.target_cache = (inputs, target);
        target
    }

    /// [`Bbr::cwnd_target`], computed.
    fn fresh_cwnd_target(&self, mss: u64, bw: u64) -> u64 {
        let target_packets = self.bdp_packets(mss, bw, self.cwnd_gain) + self.ack_aggregation_packets(mss);
        self.quantization_budget(mss, target_packets) * mss
    }

    /// Linux `bbr_set_cwnd()` (draft §4.2.3.5-6): slow start up to the target, or down to it once
    /// the pipe was full; at least 4 packets; 4 packets in ProbeRTT.
    fn set_cwnd(&mut self, a: &AckInfo, rs: &RateSample, state: CaState, inflight: u64, bw: u64) {
        let mss = a.mss;
        if rs.acked > 0 && !self.recover_or_restore(rs, state, inflight) {
            let target = self.cwnd_target(mss, bw);
            if self.full_bw_reached {
                self.cwnd = (self.cwnd + rs.acked).min(target);
            } else if self.cwnd < target || self.delivered < INIT_CWND * mss {
                self.cwnd += rs.acked;
            }
            self.cwnd = self.cwnd.max(CWND_MIN_TARGET * mss);
        }
        self.cwnd = self.cwnd.min(a.max_cwnd);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET * mss);
        }
    }
}

/// Bytes sent at `bw` bytes/s over `d`.
fn bytes_in(bw: u64, d: SimDuration) -> u64 {
    mul_div(bw, d.as_nanos(), NANOS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    const MSS: u64 = 1000;

    fn t_ms(ms: u64) -> SimTime {
        SimTime::from_nanos(ms * 1_000_000)
    }

    fn bbr(seed: u64) -> Bbr {
        Bbr::new(10 * MSS, SimRng::for_component(seed, "test"))
    }

    fn ack(now: SimTime, snd_una: u64, acked: u64, flight: u64) -> AckInfo {
        AckInfo {
            now,
            snd_una,
            acked,
            dupack: false,
            sack: false,
            sacked: 0,
            in_recovery: false,
            sack_pipe: None,
            flight,
            outstanding: flight,
            retransmit_due: false,
            srtt: None,
            mss: MSS,
            max_cwnd: u64::MAX / 4,
        }
    }

    /// A sender running `b` through one bottleneck of `rate` bytes/s and a base RTT, one ACK per
    /// segment: segments leave when cwnd and pacing allow, queue at the bottleneck in order, and
    /// their ACK comes back half an RTT after the bottleneck sends them (and half an RTT before).
    struct Path {
        rate: u64,
        rtt: SimDuration,
        /// (ACK time, end sequence) in flight, in order.
        acks: VecDeque<(SimTime, u64)>,
        bottleneck_free: SimTime,
        snd_una: u64,
        snd_nxt: u64,
        cwnd: u64,
        now: SimTime,
        /// The most bytes queued at the bottleneck seen in the last call of `run`.
        max_queue: u64,
    }

    impl Path {
        fn new(rate: u64, rtt_ms: u64) -> Self {
            Path {
                rate,
                rtt: SimDuration::from_millis(rtt_ms),
                acks: VecDeque::new(),
                bottleneck_free: SimTime::ZERO,
                snd_una: 1,
                snd_nxt: 1,
                cwnd: 10 * MSS,
                now: SimTime::ZERO,
                max_queue: 0,
            }
        }

        /// Run until `until`, sending and acknowledging.
        fn run(&mut self, b: &mut Bbr, until: SimTime) {
            self.max_queue = 0;
            loop {
                // Send what the window and the pacing allow now.
                while self.snd_nxt + MSS <= self.snd_una + self.cwnd && b.pacing_blocks(self.now).is_none() {
                    let seq = self.snd_nxt;
                    b.on_data_sent(self.now, seq, seq + MSS, self.snd_una < self.snd_nxt);
                    self.snd_nxt += MSS;
                    let arrive = self.now + SimDuration::from_nanos(self.rtt.as_nanos() / 2);
                    let start = arrive.max(self.bottleneck_free);
                    let queued = self.rate_bytes(start.saturating_since(arrive));
                    self.max_queue = self.max_queue.max(queued);
                    self.bottleneck_free = start + tx(self.rate, MSS);
                    self.acks.push_back((
                        self.bottleneck_free + SimDuration::from_nanos(self.rtt.as_nanos() / 2),
                        self.snd_nxt,
                    ));
                }
                let next_ack = self.acks.front().map(|a| a.0);
                let next_pace = b.pacing_blocks(self.now);
                let next = match (next_ack, next_pace) {
                    (Some(a), Some(p)) => a.min(p),
                    (Some(a), None) => a,
                    (None, Some(p)) => p,
                    (None, None) => break,
                };
                if next > until {
                    break;
                }
                self.now = next;
                while let Some(&(at, end)) = self.acks.front() {
                    if at > self.now {
                        break;
                    }
                    self.acks.pop_front();
                    let acked = end - self.snd_una;
                    self.snd_una = end;
                    let a = ack(self.now, self.snd_una, acked, self.snd_nxt - self.snd_una);
                    self.cwnd = b.on_ack(&a);
                }
            }
            self.now = until;
        }

        fn rate_bytes(&self, d: SimDuration) -> u64 {
            bytes_in(self.rate, d)
        }
    }

    fn tx(rate: u64, bytes: u64) -> SimDuration {
        SimDuration::from_nanos(mul_div(bytes, NANOS, rate))
    }

    #[test]
    fn gains_are_linux_fixed_point_values() {
        // Linux tcp_bbr.c: bbr_high_gain = 739/256 (2/ln 2 = 2.885), bbr_drain_gain = 88/256.
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    #[test]
    fn the_max_filter_keeps_the_best_sample_for_its_window_of_rounds() {
        // lib/minmax.c: a max stays until it is older than the window, then the next best takes over.
        let mut f = MaxFilter::default();
        f.update(10, 0, 100);
        for round in 1..=10 {
            f.update(10, round, 50);
            assert_eq!(f.get(), 100, "round {round}");
        }
        f.update(10, 11, 40);
        assert_eq!(f.get(), 50, "the 100 of round 0 has left the 10-round window");
        f.update(10, 12, 200);
        assert_eq!(f.get(), 200, "a new max replaces everything");
    }

    #[test]
    fn a_rate_sample_is_delivered_over_the_longer_of_send_and_ack_intervals() {
        // draft-cheng-iccrg-delivery-rate-estimation §3.3: interval = max(send_elapsed, ack_elapsed).
        let mut b = bbr(1);
        // Ten segments sent 1 ms apart (send_elapsed of the tenth: 9 ms from the first).
        for i in 0..10 {
            b.on_data_sent(t_ms(i), 1 + i * MSS, 1 + (i + 1) * MSS, i > 0);
        }
        // All acknowledged at once at 50 ms: ack_elapsed 50 ms from delivered_time (0).
        let a = ack(t_ms(50), 1 + 10 * MSS, 10 * MSS, 0);
        let rs = b.rate_sample(&a, 10 * MSS, 0);
        assert_eq!(rs.delivered, 10 * MSS);
        assert_eq!(rs.interval, Some(SimDuration::from_millis(50)));
        assert_eq!(rs.rtt, Some(SimDuration::from_millis(41)), "the RTT of the newest segment");
        // The next segment's sample measures from the delivery state at its send time.
        b.on_data_sent(t_ms(50), 1 + 10 * MSS, 1 + 11 * MSS, false);
        let a = ack(t_ms(60), 1 + 11 * MSS, MSS, 0);
        let rs = b.rate_sample(&a, MSS, 0);
        assert_eq!((rs.delivered, rs.prior_delivered), (MSS, 10 * MSS));
        assert_eq!(rs.interval, Some(SimDuration::from_millis(10)));
    }

    #[test]
    fn startup_fills_the_pipe_drains_and_enters_probe_bw() {
        // draft §4.3.2.2: full pipe after 3 rounds without 25 % growth; §4.3.3: Drain until in-flight
        // <= BDP; then ProbeBW. 10 Mb/s (1.25e6 B/s), 40 ms: BDP 50 segments.
        let mut b = bbr(7);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(20));
        assert_eq!(b.mode(), Mode::Startup);
        let mut saw_drain = false;
        let mut at = 20;
        while b.mode() != Mode::ProbeBw && at < 3_000 {
            at += 1;
            p.run(&mut b, t_ms(at));
            saw_drain |= b.mode() == Mode::Drain;
        }
        assert!(b.full_bw_reached(), "Startup found the pipe full");
        assert!(saw_drain, "Drain came between Startup and ProbeBW");
        assert_eq!(b.mode(), Mode::ProbeBw, "at {at} ms");
        // The model: the bottleneck's rate and the base RTT (plus one segment's transmission).
        let bw = b.max_bw();
        assert!((1_200_000..=1_300_000).contains(&bw), "max bw {bw}");
        let rtt = b.min_rtt().unwrap();
        assert!(rtt >= SimDuration::from_millis(40) && rtt <= SimDuration::from_millis(42), "min_rtt {rtt:?}");
        assert!(at < 1_000, "Startup and Drain took {at} ms (about 10 round trips expected)");
    }

    #[test]
    fn probe_bw_starts_in_a_random_phase_other_than_the_drain_phase_and_the_cycle_is_deterministic() {
        // Linux bbr_reset_probe_bw_mode(): cycle_idx = CYCLE_LEN - 1 - random(7), then advanced.
        let mut starts = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let mut b = bbr(seed);
            b.reset_probe_bw_mode();
            assert_ne!(b.cycle_index(), 1, "seed {seed}: never the 3/4 phase first");
            starts.insert(b.cycle_index());
            let mut again = bbr(seed);
            again.reset_probe_bw_mode();
            assert_eq!(again.cycle_index(), b.cycle_index(), "seed {seed}: the same stream, the same phase");
        }
        assert_eq!(starts.into_iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn probe_bw_cycles_through_the_eight_gains_one_min_rtt_each() {
        let mut b = bbr(3);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(2_000));
        assert_eq!(b.mode(), Mode::ProbeBw);
        let mut seen = Vec::new();
        for ms in 2_001..=2_800 {
            p.run(&mut b, t_ms(ms));
            if seen.last() != Some(&b.cycle_index()) {
                seen.push(b.cycle_index());
            }
        }
        // draft §4.3.4.3: each phase lasts about min_rtt (40 ms): 800 ms is 2.5 cycles at most.
        assert!(seen.len() >= 16 && seen.len() <= 21, "{seen:?}");
        for w in seen.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % CYCLE_LEN, "phases in order: {seen:?}");
        }
        // The standing queue stays small in ProbeBW: at most about the 1.25 probe's quarter BDP plus
        // the quanta (50-segment BDP: 12.5 + 3 * 2 + 2 segments).
        assert!(p.max_queue <= 25 * MSS, "queue {} bytes", p.max_queue);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_packets_for_200_ms_and_a_round_then_restores() {
        // draft §4.3.5 / Linux bbr_update_min_rtt(): the 10 s min-RTT window expires without a lower
        // sample (every sample here is at least the base RTT) -> ProbeRTT at 4 packets.
        let mut b = bbr(5);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(5_000));
        let cwnd_before = p.cwnd;
        assert!(cwnd_before > 20 * MSS);
        let mut entered = None;
        let mut left = None;
        for ms in 5_001..=12_000 {
            p.run(&mut b, t_ms(ms));
            if entered.is_none() && b.mode() == Mode::ProbeRtt {
                entered = Some(ms);
                assert!(p.cwnd <= CWND_MIN_TARGET * MSS, "cwnd {} in ProbeRTT", p.cwnd);
            }
            if entered.is_some() && left.is_none() && b.mode() != Mode::ProbeRtt {
                left = Some(ms);
            }
        }
        let (entered, left) = (entered.expect("ProbeRTT entered"), left.expect("ProbeRTT left"));
        // The min-RTT stamp was last set in Startup (the lowest sample): expiry about 10 s later.
        assert!((10_000..10_200).contains(&entered), "entered at {entered} ms");
        // 200 ms once in-flight is down to 4 packets (which takes a round trip or so), and a round.
        let held = left - entered;
        assert!((200..=320).contains(&held), "held {held} ms");
        assert_eq!(b.mode(), Mode::ProbeBw, "full bandwidth was reached: back to ProbeBW");
        assert!(p.cwnd >= cwnd_before / 2, "the window is restored ({} vs {cwnd_before})", p.cwnd);
    }

    #[test]
    fn recovery_conserves_packets_in_its_first_round_and_restores_the_window_after() {
        // Linux bbr_set_cwnd_to_recover_or_restore(): on entry cwnd = in-flight + acked; on exit
        // cwnd = max(cwnd, prior_cwnd).
        let mut b = bbr(9);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(3_000));
        let cwnd = b.cwnd;
        let (una, nxt) = (p.snd_una, p.snd_nxt);
        let flight = nxt - una;
        b.on_enter_recovery();
        // The third duplicate ACK: three segments reported, one lost, not yet resent.
        let mut a = ack(p.now, una, 0, flight);
        a.dupack = true;
        for _ in 0..2 {
            b.on_ack(&a);
        }
        a.in_recovery = true;
        a.retransmit_due = true;
        // (The socket marks the first segment lost as recovery starts.)
        b.on_lost(MSS);
        let socket_cwnd = b.on_ack(&a);
        // Linux: in_flight = flight - 3 reported - 1 lost; cwnd = in_flight + 1 acked.
        assert_eq!(b.cwnd, flight - 4 * MSS + MSS);
        // In the socket's terms (NewReno: from SND.UNA) the three reported segments are added back:
        // nothing new may go until the next duplicate ACK.
        assert_eq!(socket_cwnd, flight);
        // A fourth duplicate ACK releases one segment.
        a.retransmit_due = false;
        let socket_cwnd = b.on_ack(&a);
        assert_eq!(socket_cwnd, flight + MSS);
        // The ACK that ends recovery: the window saved at entry comes back.
        let mut done = ack(p.now + SimDuration::from_millis(40), nxt, flight, 0);
        done.in_recovery = false;
        b.on_ack(&done);
        assert!(b.cwnd >= cwnd, "restored to {} from {cwnd}", b.cwnd);
    }

    #[test]
    fn on_sack_a_segment_is_delivered_once_when_sacked_and_not_again_when_the_hole_fills() {
        // Linux tcp_sacktag_one() / tcp_clean_rtx_queue(): on a SACK connection a segment counts
        // toward C.delivered when it is SACKed, and its cumulative ACK counts only what was not.
        // Segments 0..10 sent; 0 and 5 lost; 1-4 and 6-9 SACKed in recovery (recovery point: the
        // end of segment 4); the retransmission of 0 ends recovery, that of 5 fills the last hole.
        let mut b = bbr(3);
        let seg = |i: u64| (1 + i * MSS, 1 + (i + 1) * MSS);
        for i in 0..10 {
            b.on_data_sent(t_ms(0), seg(i).0, seg(i).1, i > 0);
        }
        for (k, i) in [1, 2, 3, 4, 6, 7, 8, 9].into_iter().enumerate() {
            b.on_sacked(seg(i).0, seg(i).1);
            let mut a = ack(t_ms(25 + k as u64), 1, 0, 10 * MSS);
            (a.sack, a.dupack, a.in_recovery) = (true, true, true);
            b.on_ack(&a);
        }
        assert_eq!(b.delivered, 8 * MSS);
        // The sample of the last SACK: the most recently sent segment SACKed (segment 9).
        b.on_data_sent(t_ms(33), seg(0).0, seg(0).1, true);
        b.on_data_sent(t_ms(34), seg(5).0, seg(5).1, true);
        let mut a = ack(t_ms(60), seg(5).0, 5 * MSS, 5 * MSS);
        a.sack = true;
        b.on_ack(&a);
        assert_eq!(b.delivered, 9 * MSS, "segments 1-4 were counted when SACKed");
        let mut a = ack(t_ms(61), seg(9).1, 5 * MSS, 0);
        a.sack = true;
        b.on_ack(&a);
        assert_eq!(b.delivered, 10 * MSS, "segments 6-9 were counted when SACKed");
    }

    #[test]
    fn a_timeout_cuts_to_one_segment_and_the_loss_state_ends_with_the_window_restored() {
        let mut b = bbr(11);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(3_000));
        let cwnd = b.cwnd;
        // Linux tcp_enter_loss(): cwnd = in-flight + 1 = 1 once everything outstanding is lost.
        assert_eq!(b.on_rto(true, MSS, p.snd_nxt), MSS);
        // An ACK within the lost window: slow start (cwnd + acked), not the saved window.
        let mut a = ack(p.now + SimDuration::from_millis(45), p.snd_una + MSS, MSS, 0);
        assert_eq!(b.on_ack(&a), 2 * MSS.max(1).max(CWND_MIN_TARGET * MSS / 2));
        // The ACK that passes the lost window's end: Linux leaves TCP_CA_Loss, prior_cwnd returns
        // (capped by the current target, which may lack the 5/4 phase's 2 packets or some of the
        // aggregation allowance: within 4 packets).
        a.snd_una = p.snd_nxt;
        a.acked = p.snd_nxt - p.snd_una - MSS;
        let restored = b.on_ack(&a);
        assert!(restored + 4 * MSS >= cwnd, "restored {restored}, before the timeout {cwnd}");
    }

    #[test]
    fn without_sack_a_timeout_forgets_the_duplicate_acks_for_the_window_but_not_for_delivery() {
        // Linux tcp_timeout_mark_lost() -> tcp_reset_reno_sack(): the Reno "sacked" count is 0 after a
        // timeout; tcp_process_loss(): a duplicate ACK in the loss state counts only once snd_nxt has
        // passed high_seq. A fast recovery begun after the timeout (RFC 6582 §4.1's heuristic) inflates
        // the socket's window only by the duplicate ACKs counted since.
        let mut b = bbr(11);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(3_000));
        let (una, nxt) = (p.snd_una, p.snd_nxt);
        let flight = nxt - una;
        assert!(flight > 30 * MSS, "flight {flight}");
        b.on_enter_recovery();
        let mut a = ack(p.now, una, 0, flight);
        a.dupack = true;
        a.in_recovery = true;
        for _ in 0..20 {
            b.on_ack(&a);
        }
        assert_eq!(b.dup_credit, 20 * MSS);
        b.on_rto(true, MSS, nxt);
        assert_eq!(b.dup_credit, 0);
        let delivered = b.delivered;
        // Go-back-N from SND.UNA: duplicate ACKs of segments sent before the timeout, SND.NXT below
        // high_seq: not counted, delivered or in the window.
        let mut d = ack(p.now + SimDuration::from_millis(10), una, 0, MSS);
        d.outstanding = flight;
        d.dupack = true;
        for _ in 0..10 {
            b.on_ack(&d);
        }
        assert_eq!((b.dup_credit, b.delivered), (0, delivered));
        // The socket starts a fast recovery (RFC 6582 §4.1's heuristic) while it resends: its window is
        // BBR's, not inflated by segments sent before the timeout.
        d.in_recovery = true;
        let w = b.on_ack(&d);
        assert_eq!(w, b.cwnd, "socket window {w}, BBR's cwnd {}", b.cwnd);
        // Once new data went beyond high_seq, a duplicate ACK reports one segment again.
        d.flight = flight + 2 * MSS;
        d.outstanding = flight + 2 * MSS;
        let w = b.on_ack(&d);
        assert_eq!(w, b.cwnd + MSS, "socket window {w}, BBR's cwnd {}", b.cwnd);
        // The hole fills: the 20 segments reported before the timeout were delivered then, not again.
        let mut done = ack(p.now + SimDuration::from_millis(60), nxt, flight, 0);
        done.outstanding = 0;
        b.on_ack(&done);
        assert_eq!(b.delivered, delivered + MSS + (flight - 21 * MSS));
    }

    #[test]
    fn an_ack_that_marks_segments_lost_takes_them_off_the_window() {
        // Linux bbr_set_cwnd_to_recover_or_restore(): "An ACK for P pkts should release at most 2*P
        // packets": cwnd = max(cwnd - rs->losses, 1), then bbr_set_cwnd() adds what was acked; outside
        // packet conservation (here the loss state after a timeout) every ACK's losses count, not only
        // the one that starts recovery (rs->losses = tp->lost - lost over tcp_ack()).
        let mut b = bbr(11);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(3_000));
        let (una, nxt) = (p.snd_una, p.snd_nxt);
        assert_eq!(b.on_rto(true, MSS, nxt), MSS);
        let at = |k: u64| p.now + SimDuration::from_millis(45 + k);
        // (The first ACK lifts the window to bbr_cwnd_min_target, 4 packets.)
        for k in 1..=7 {
            b.on_ack(&ack(at(k), una + k * MSS, MSS, nxt - una - k * MSS));
        }
        assert_eq!(b.cwnd, 10 * MSS, "slow start in the loss state");
        // An ACK of 2 segments on which 3 are found lost (RACK, a lost retransmission).
        b.on_lost(3 * MSS);
        b.on_ack(&ack(at(8), una + 9 * MSS, 2 * MSS, nxt - una - 9 * MSS));
        assert_eq!(b.cwnd, (10 - 3 + 2) * MSS);
        assert_eq!(b.lost_bytes(), 3 * MSS);
        // The next ACK finds nothing lost: the losses were this ACK's only.
        b.on_ack(&ack(at(9), una + 10 * MSS, MSS, nxt - una - 10 * MSS));
        assert_eq!(b.cwnd, 10 * MSS);
    }

    #[test]
    fn an_rtt_sample_equal_to_the_min_rtt_renews_its_stamp() {
        // Linux bbr_update_min_rtt(): `if (rs->rtt_us >= 0 && (rs->rtt_us <= bbr->min_rtt_us || ...))`
        // min_rtt_stamp = now: a path whose RTT stays at its minimum never needs ProbeRTT.
        let mut b = bbr(2);
        b.on_data_sent(t_ms(0), 1, 1 + MSS, false);
        b.on_ack(&ack(t_ms(40), 1 + MSS, MSS, 0));
        assert_eq!((b.min_rtt(), b.min_rtt_stamp), (Some(SimDuration::from_millis(40)), t_ms(40)));
        b.on_data_sent(t_ms(100), 1 + MSS, 1 + 2 * MSS, false);
        b.on_ack(&ack(t_ms(140), 1 + 2 * MSS, MSS, 0));
        assert_eq!((b.min_rtt(), b.min_rtt_stamp), (Some(SimDuration::from_millis(40)), t_ms(140)));
        // A longer sample leaves both.
        b.on_data_sent(t_ms(200), 1 + 2 * MSS, 1 + 3 * MSS, false);
        b.on_ack(&ack(t_ms(241), 1 + 3 * MSS, MSS, 0));
        assert_eq!((b.min_rtt(), b.min_rtt_stamp), (Some(SimDuration::from_millis(40)), t_ms(140)));
    }

    #[test]
    fn a_loss_ends_the_probing_phase_once_it_has_lasted_a_min_rtt() {
        // Linux bbr_is_next_cycle_phase(): the 5/4 phase ends once it has lasted min_rtt and either
        // pacing_gain * BDP is in flight or `rs->losses` ("perhaps pacing_gain*BDP won't fit").
        let mut b = bbr(5);
        let mut p = Path::new(1_250_000, 40);
        p.run(&mut b, t_ms(2_000));
        let mut ms = 2_000;
        while b.cycle_index() != 0 {
            ms += 1;
            p.run(&mut b, t_ms(ms));
        }
        let min_rtt = b.min_rtt().expect("an RTT sample");
        // One segment acknowledged a min RTT into the phase, with 10 segments in flight (well below
        // 5/4 BDP, 63 segments).
        let a = ack(p.now + min_rtt + SimDuration::from_millis(1), p.snd_una + MSS, MSS, 10 * MSS);
        let mut no_loss = b.clone();
        no_loss.on_ack(&a);
        assert_eq!(no_loss.cycle_index(), 0, "without a loss the phase waits for 5/4 BDP in flight");
        b.on_lost(MSS);
        b.on_ack(&a);
        assert_eq!(b.cycle_index(), 1, "a loss ends the probing phase");
    }

    /// A retransmission's record is the binary search's answer whichever way it is found (the
    /// first record, the one after the last retransmitted, or the search), through fast
    /// retransmissions, go-back-N runs, ACKs that take records off the front, and jumps.
    #[test]
    fn a_retransmission_finds_the_record_the_binary_search_finds() {
        let mut rng = SimRng::for_component(3, "records");
        let mut b = bbr(1);
        let (mut snd_una, mut snd_max, mut now) = (1_u64, 1_u64, 0_u64);
        let (mut hinted, mut searched) = (0, 0);
        for _ in 0..3000 {
            now += 1;
            let outstanding = snd_max > snd_una;
            match rng.below(6) {
                0 | 1 => {
                    b.on_data_sent(t_ms(now), snd_max, snd_max + MSS, outstanding);
                    snd_max += MSS;
                }
                2 if outstanding => {
                    let acked = MSS * (1 + rng.below(3)).min((snd_max - snd_una) / MSS);
                    snd_una += acked;
                    b.on_ack(&ack(t_ms(now), snd_una, acked, snd_max - snd_una));
                }
                _ if outstanding => {
                    // A retransmission: SND.UNA, the segment after the last resent, or any.
                    let last =
                        b.rtx_next.checked_sub(b.sent.head + 1).and_then(|i| b.sent.get(usize::try_from(i).ok()?));
                    let seq = match (rng.below(3), last) {
                        (0, _) => snd_una,
                        (1, Some(r)) if r.end < snd_max => r.end,
                        _ => snd_una + MSS * rng.below((snd_max - snd_una) / MSS),
                    };
                    let want = b.sent.partition_point(|s| s.end <= seq);
                    let got = b.record_of(seq);
                    assert_eq!(got, want, "seq {seq}");
                    if got > 0 {
                        if usize::try_from(b.rtx_next.wrapping_sub(b.sent.head)).ok() == Some(got) {
                            hinted += 1;
                        } else {
                            searched += 1;
                        }
                    }
                    b.on_data_sent(t_ms(now), seq, seq + MSS, true);
                }
                _ => {}
            }
        }
        assert!(hinted > 100 && searched > 100, "both ways taken: {hinted} by the hint, {searched} searched");
    }

    #[test]
    fn pacing_spaces_segments_by_their_length_over_the_rate_after_the_first_ten() {
        // Linux tcp_update_skb_after_send(): no pacing for the first 10 data segments, then
        // len * NSEC_PER_SEC / sk_pacing_rate between departures.
        // 100 kB/s (below bbr_min_tso_rate: one segment per departure): 10 ms per 1000-byte segment.
        let mut b = bbr(1);
        b.pacing_rate = 100_000;
        for i in 0..9 {
            b.on_data_sent(SimTime::ZERO, 1 + i * MSS, 1 + (i + 1) * MSS, i > 0);
            assert_eq!(b.pacing_blocks(SimTime::ZERO), None, "segment {i} is not paced");
        }
        b.on_data_sent(SimTime::ZERO, 1 + 9 * MSS, 1 + 10 * MSS, true);
        assert_eq!(b.pacing_blocks(SimTime::ZERO), Some(t_ms(10)));
        b.on_data_sent(t_ms(10), 1 + 10 * MSS, 1 + 11 * MSS, true);
        assert_eq!(b.pacing_blocks(t_ms(10)), Some(t_ms(20)));
        // A sender late by 3 ms gets that much back (at most half a segment's time).
        let late = t_ms(23);
        b.on_data_sent(late, 1 + 11 * MSS, 1 + 12 * MSS, true);
        assert_eq!(b.pacing_blocks(late), Some(t_ms(30)));
        // Pacing rate: gain * bw less Linux's 1 % margin.
        assert_eq!(Bbr::rate(1_000_000, BBR_UNIT * 5 / 4), 1_237_500);
    }

    #[test]
    fn a_paced_departure_is_an_offload_frame_of_the_autosized_segment_count() {
        // Linux tcp_write_xmit(): one pacing check per skb of tcp_tso_segs() =
        // tcp_tso_autosize(sk, mss, bbr_min_tso_segs()) segments: 1 ms of the pacing rate
        // (sk_pacing_shift 10), at least 2; they leave together, and the next skb waits for
        // the frame's length over the rate (tcp_update_skb_after_send()).
        let mut b = bbr(1);
        b.mss = MSS;
        b.cwnd = 100 * MSS;
        b.set_max_frame_segs(44);
        b.conn_min_rtt = Some(SimDuration::from_millis(100)); // 100000 µs >> 9 = 195: no extra bytes
        b.pacing_rate = 4_096_000; // 4000 B per ms: 4 segments of 1000 B per frame
        assert_eq!(b.frame_segs(MSS), 4);
        for i in 0..10 {
            b.on_data_sent(SimTime::ZERO, 1 + i * MSS, 1 + (i + 1) * MSS, i > 0);
        }
        let t0 = t_ms(5);
        for i in 10..14 {
            assert_eq!(b.pacing_blocks(t0), None, "segment {i} joins the frame");
            b.on_data_sent(t0, 1 + i * MSS, 1 + (i + 1) * MSS, true);
        }
        // 4000 B at 4,096,000 B/s (244,140 ns a segment) after t0, less the lateness credit (the
        // sender is 5 ms late: half a segment's time back, ecnsim's per-segment cap).
        assert_eq!(b.pacing_blocks(t0), Some(t0 + SimDuration::from_nanos(4 * 244_140 - 122_070)));
        assert!(b.pacing_blocks(t0 + SimDuration::from_nanos(800_000)).is_some(), "the next frame waits");
        // A frame is at most half the window (tcp_cwnd_test()), and 2 segments at least.
        b.cwnd = 6 * MSS;
        assert_eq!(b.frame_segs(MSS), 3);
        b.cwnd = 100 * MSS;
        b.pacing_rate = 1_000_000;
        assert_eq!(b.frame_segs(MSS), 2);
        // A short path adds gso_max_size >> (min_rtt_us >> 9): 1 ms -> 65536 >> 1.
        b.conn_min_rtt = Some(SimDuration::from_millis(1));
        assert_eq!(b.frame_segs(MSS), (32_768 + 976) / 1000);
        // At most M segments (the device's gso_max_size); without offload (M = 1) one segment.
        b.set_max_frame_segs(20);
        assert_eq!(b.frame_segs(MSS), 20);
        b.set_max_frame_segs(1);
        assert_eq!(b.frame_segs(MSS), 1);
    }

    #[test]
    fn the_window_target_is_cwnd_gain_bdp_plus_three_quanta_rounded_to_even() {
        // Linux bbr_bdp() + bbr_quantization_budget(): 10 Mb/s, 40 ms: BDP 50 packets of 1000 B;
        // cwnd_gain 2 -> 100; pacing 1.25e6 B/s >> 10 = 1220 B: the minimum 2 segments per quantum.
        let mut b = bbr(1);
        b.min_rtt = Some(SimDuration::from_millis(40));
        b.pacing_rate = 1_250_000;
        assert_eq!(b.bdp_packets(MSS, 1_250_000, CWND_GAIN), 100);
        assert_eq!(b.quantization_budget(MSS, 100), 106);
        assert_eq!(b.quantization_budget(MSS, 101), 108, "rounded up to even");
        b.mode = Mode::ProbeBw;
        b.cycle_index = 0;
        assert_eq!(b.quantization_budget(MSS, 100), 108, "2 more in the 1.25 phase");
        // Below 1.2 Mb/s one segment per quantum.
        b.pacing_rate = 100_000;
        assert_eq!(b.tso_segs_goal(MSS), 1);
    }
}
