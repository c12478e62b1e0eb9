//! One TCP endpoint: handshake, data transfer both ways, loss recovery
//! (Tahoe, Reno, NewReno, SACK), ECN, the retransmission timer, delayed
//! ACKs and close.
//!
//! Read first:
//! - RFC 793 §3.4 (handshake), §3.5 (close), §3.9 (segment arrival).
//! - RFC 5681 (congestion control: §2 duplicate ACK, §3.1 slow start,
//!   §3.2 fast retransmit / fast recovery, §4.1 restart after idle, §4.2 ACKs).
//! - RFC 6582 (NewReno), RFC 2018 and RFC 6675 (SACK).
//! - RFC 6298 (retransmission timer: §5 managing the timer, §3 Karn).
//! - RFC 3168 §6.1 (ECN in TCP), RFC 5562 (ECN-capable SYN-ACK).
//! - RFC 1122 §4.2.3.2 (delayed ACKs).
//!
//! Sans-IO: every entry point takes `now`; the socket returns segments from
//! [`TcpSocket::poll_transmit`] and reports its next deadline. Sequence
//! numbers are absolute `u64` byte offsets: the SYN is 0, data starts at 1.
//! Application data is modelled as byte counts (no payload bytes are stored).

use std::sync::Arc;

use crate::packet::{Ecn, SackBlock, TcpFlags, TcpHeader, MAX_SACK_BLOCKS};
use crate::rng::SimRng;
use crate::spec::{
    CarryRtt, CcKind, CubicTimeout, EceGrowth, EcnFeedback, EcnOneSegment, EcnPolicy, EcnSynAck, EctCodepoint,
    NewrenoCareful, NewrenoPartialAck, Quickack, RecoveryRate, ReductionBasis, RtoRearm, SackAfterTimeout,
    SackRecoveryGuard, SackVariant, SlowStartExit, SlowStartIncrease, TimeoutAfterEcn,
};
use crate::tcp::cc::{AckInfo, AnyCc, AppWrite, Bbr, CcState, LossResponse, RecoveryAck, RecoveryRules, Sack, Window};
use crate::tcp::hystart::SsAck;
use crate::tcp::ooo::OooQueue;
use crate::tcp::rack::Rack;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::sack::{SackRecency, Scoreboard};
use crate::tcp::state::TcpState;
use crate::tcp::{Opt, TcpConfig};
use crate::time::{SimDuration, SimTime};

mod accecn;
mod rack;

/// Initial send sequence number: absolute sequence space starts at 0.
const ISS: u64 = 0;

/// `TcpSocket::quickacks` before the first data segment arrives (Linux: `icsk_ack.ato == 0`).
const QUICKACK_NOT_STARTED: u8 = u8::MAX;

/// Linux include/net/tcp.h: TCP_MAX_QUICKACKS 16, "Maximal number of ACKs sent quickly to
/// accelerate slow-start".
const TCP_MAX_QUICKACKS: u8 = 16;

/// Application-visible events, accumulated until taken with
/// [`TcpSocket::take_events`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketEvents {
    /// The handshake completed.
    pub connected: bool,
    /// New in-order bytes were delivered to the application.
    pub received: bool,
    /// The peer closed its direction (its FIN arrived in order).
    pub peer_closed: bool,
    /// Every byte the application wrote (and our FIN, if any) is acknowledged.
    pub all_acked: bool,
    /// The connection was abandoned (SYN retries exhausted).
    pub failed: bool,
}

impl SocketEvents {
    /// New in-order data and nothing else.
    pub const RECEIVED: SocketEvents =
        SocketEvents { connected: false, received: true, peer_closed: false, all_acked: false, failed: false };
}

/// Per-endpoint counters. Bytes are payload bytes; packets are segments.
///
/// In declaration order (`repr(C)`): the counters every segment updates come first, in one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TcpCounters {
    /// Every segment sent (data, pure ACKs, SYN, FIN).
    pub segments_sent: u64,
    /// Segments carrying payload, retransmissions included.
    pub data_packets_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    /// Payload bytes that reached this end for the first time, in order or not (data beyond the
    /// receive window, which is discarded, and duplicates are not counted): when data arrives,
    /// not when a hole before it is repaired (ns-3 FlowMonitor's `rxBytes`, less headers and
    /// duplicates).
    pub bytes_received: u64,
    /// Payload bytes delivered in order to the application (goodput).
    pub bytes_delivered: u64,
    /// CE-marked packets received.
    pub ce_received: u64,
    /// Segments carrying retransmitted payload (or a retransmitted FIN).
    pub retransmitted_packets: u64,
    /// Payload bytes retransmitted.
    pub retransmitted_bytes: u64,
    /// Retransmission-timer expirations with data outstanding.
    pub rto_count: u64,
    /// Of which answered without a new ssthresh cut because of an earlier ECN-Echo reduction
    /// (`tcp.timeout_after_ecn`; ns-2's `nrexmit_` does not count these).
    pub rto_after_ecn: u64,
    /// Fast retransmits (entries into loss recovery on duplicate ACKs).
    pub fast_retransmits: u64,
    /// Handshake segments resent on this end's retransmission timer: the initiator's SYNs (after
    /// a lost SYN or a lost SYN-ACK, which it cannot tell apart) or the responder's SYN-ACKs
    /// (after a lost SYN-ACK or a lost third ACK). A SYN-ACK sent in answer to a retransmitted
    /// SYN, and RFC 5562's non-ECT SYN-ACK after a CE-marked one, are not counted.
    pub syn_retransmits: u64,
    /// Window reductions in response to ECN-Echo.
    pub ecn_reductions: u64,
    /// Segments sent with CWR.
    pub cwr_sent: u64,
}

/// A segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The TCP header (payload length inside).
    pub header: TcpHeader,
    /// The IP ECN field to send with.
    pub ecn: Ecn,
}

/// What [`TcpSocket::poll_transmit_into`] wrote: a segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The IP ECN field to send with.
    pub ecn: Ecn,
    /// Nothing more is due now: another poll at this instant returns `None`
    /// (set on a pure ACK, which goes out only when no data may be sent, and on a data
    /// segment after which the window is full; see [`TcpSocket::window_full_after_send`]).
    pub last: bool,
}

/// ECN flags every segment reads (RFC 3168 §6.1).
#[derive(Clone, Copy, Debug, Default)]
struct EcnState {
    /// ECN was negotiated for this connection.
    ok: bool,
    /// Receiver: echo ECE on every ACK until a CWR arrives (RFC 3168 §6.1.3).
    echo: bool,
    /// Sender: set CWR on the next new data segment (RFC 3168 §6.1.2).
    cwr_due: bool,
    /// Sender: the cwnd = 1 rule of RFC 3168 §6.1.2: send new data only after the timer expires.
    wait_for_timer: bool,
}

/// The sender's ECN reduction state (RFC 3168 §6.1.2), read when an ACK echoes a mark
/// or a loss is detected.
#[derive(Clone, Copy, Debug, Default)]
struct EcnReduction {
    /// No new reduction until SND.UNA passes this point (once per window).
    reduced_until: Opt<u64>,
    /// The last reduction was for an ECN-Echo, in the window ending here
    /// (a loss detected before SND.UNA passes it is not a new reduction: RFC 3168 §6.1.2).
    ecn_cut_until: Opt<u64>,
    /// ns-2's `ecn_backoff_`: the last ECN-Echo found the window at one packet, so the
    /// next one backs the timer off (`tcp.ecn_one_segment = "ns2"`).
    ns2_backoff: bool,
    /// The last window action was a timeout (ns-2's `last_cwnd_action_ ==
    /// CWND_ACTION_TIMEOUT`, for `tcp.ecn_after_timeout` and `tcp.timeout_after_ecn`).
    after_timeout: bool,
    /// The last reduction answered a loss (a fast retransmit or a timeout: Linux's Recovery or Loss
    /// state), not an ECN-Echo or a tail loss probe (Linux's CWR state).
    after_loss: bool,
}

/// ECN on the handshake (RFC 5562, ECN+).
#[derive(Clone, Copy, Debug, Default)]
struct EcnSetup {
    /// Responder: the next SYN-ACK is ECT (RFC 5562 / ECN+).
    synack_ect: bool,
    /// Responder: its ECT SYN-ACK was reported CE-marked: start with a window of one segment.
    synack_marked: bool,
    /// Initiator (RFC 5562): a CE-marked SYN-ACK must be answered with an ECE ACK.
    ack_marked_synack: bool,
}

/// The segment being timed (RFC 6298 §3, Karn): its end sequence number and send time.
#[derive(Clone, Copy, Debug, Default)]
struct RttProbe {
    end: u64,
    /// When it was sent; none if no segment is being timed.
    sent: Opt<SimTime>,
}

impl RttProbe {
    const NONE: RttProbe = RttProbe { end: 0, sent: Opt::NONE };

    fn get(self) -> Option<(u64, SimTime)> {
        self.sent.get().map(|t| (self.end, t))
    }
}

/// One endpoint of a TCP connection.
///
/// Laid out in declaration order (`repr(C)`, 64-byte aligned) in cache lines by
/// who touches them, since with thousands of connections a socket is cold at
/// every visit and the lines a segment touches are most of its cost:
///
/// | bytes | line | touched by |
/// |---|---|---|
/// | 0-63 | the sequence space, state and flags | every segment in or out |
/// | 64-127 | timers, the receive queue | every segment (`next_deadline` reads the timers) |
/// | 128-191 | `app_end` and the per-segment counters | every segment |
/// | 192-255 | the other counters | retransmissions, timeouts, ECN responses |
/// | 256-383 | the congestion window, the timed segment, the sender's loss and ECN state, the current RTO | an ACK at the sender, a data segment sent |
/// | 384-455 | the RTT estimator: its tag, backoff and the RTO's terms in 384-447 | an RTT sample; a backoff (line 384-447 only) |
/// | 456-511 | the handshake, the base RTT, and pointers to the SACK scoreboard and its receiver's block order (allocated on first use) | the handshake, SACK, RTT samples |
///
/// Eight lines in all (512 bytes): what an ESTABLISHED connection with nothing in
/// flight never touches, the SACK state, is out of line until a first loss or reordering.
/// So a data segment's arrival at the receiver (and the ACK it sends) touches
/// the first three lines, and an ACK's arrival at the sender those and the two
/// lines of sending state (and the estimator's once per round trip, for its sample).
/// `tests::the_per_segment_fields_sit_in_the_lines_claimed` checks it.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpSocket {
    // --- line 0: every segment: the sequence space (RFC 793 names), state, flags ---
    /// Parameters, shared by the endpoints that have the same ones (a simulation's
    /// sockets of one application share one): read on every segment, they stay in
    /// cache however many connections there are (8 bytes here instead of a 104-byte copy).
    cfg: Arc<TcpConfig>,
    /// Oldest unacknowledged sequence number (SND.UNA).
    snd_una: u64,
    /// Next sequence number to send (SND.NXT); moves back on a timeout (go-back-N).
    snd_nxt: u64,
    /// One past the highest sequence number ever sent.
    snd_max: u64,
    /// The peer's advertised window (SND.WND).
    snd_wnd: u64,
    /// Next sequence number expected (RCV.NXT).
    rcv_nxt: u64,
    state: TcpState,
    ecn: EcnState,
    events: SocketEvents,
    /// SACK was negotiated.
    sack_ok: bool,
    /// An ACK must go out now.
    ack_now: bool,
    /// The application writes without end.
    unlimited: bool,
    /// The application has closed: a FIN follows the data.
    fin_requested: bool,
    /// In loss recovery (fast recovery, or SACK recovery).
    in_recovery: bool,
    /// Fast retransmit of the segment at SND.UNA is due.
    retransmit_due: bool,

    // --- line 1: every segment: the timers (`next_deadline` reads them after each one), receiving ---
    /// When the retransmission timer expires, if running.
    rto_deadline: Opt<SimTime>,
    /// When the delayed ACK must go out, if one is pending.
    delack_deadline: Opt<SimTime>,
    /// A poll is wanted at this instant to hand events to the application (a
    /// connection opened without a handshake is connected at once).
    wake_at: Opt<SimTime>,
    /// Sequence number of the peer's FIN, once seen.
    peer_fin: Opt<u64>,
    /// Out-of-order data held, as sorted disjoint `[start, end)` ranges (out of line; the count
    /// here).
    ooo: OooQueue,
    /// Full segments received since our last ACK (delayed ACKs; at most 2).
    unacked_segments: u16,
    /// ACKs still to send at once in Linux's quick-ACK mode (`tcp.quickack = "linux"`);
    /// [`QUICKACK_NOT_STARTED`] until the first data arrives.
    quickacks: u8,
    /// Consecutive duplicate ACKs.
    dupacks: u32,

    // --- line 2: every segment: what the application wrote, the per-segment counters ---
    /// One past the last byte the application has written (data starts at 1).
    app_end: u64,
    /// Counters of this endpoint (the first 56 bytes are the per-segment ones).
    pub counters: TcpCounters,

    // --- lines 4 and 5: sending: an ACK at the sender, a data segment sent ---
    /// Congestion window state.
    win: Window,
    /// Karn: the one segment being timed.
    rtt_probe: RttProbe,
    /// When data was last sent (RFC 5681 §4.1 restart after idle).
    last_data_sent: Opt<SimTime>,
    /// New data sent by Limited Transmit since the last ACK of new data (RFC 3042).
    limited_transmit_bytes: u64,
    /// RFC 6582 "recover" / RFC 6675 "RecoveryPoint": the highest sequence
    /// number sent when the last recovery (or timeout) began.
    recover: u64,
    ecn_reduction: EcnReduction,
    /// Partial ACKs seen in this recovery (RFC 6582 §3.2 step 5 timer rule).
    partial_acks: u32,
    cc: AnyCc,
    /// RFC 6582 §4.1: the last ACK that advanced SND.UNA advanced it by at most 4*SMSS (its
    /// `highest_ack - prev_highest_ack`), for `newreno_careful = "careful_ack_heuristic"`.
    last_ack_small: bool,
    /// Segmentation offload (`tso_segments` > 1): segments of the offload frame being sent that
    /// are still to go; they leave without a new deferral test (the byte free in this line).
    tso_left: u8,
    /// `rtt.rto()`, kept current by every change to the estimator: arming the timer on
    /// an ACK reads this line, and the estimator's own lines only when it takes a sample.
    rto: SimDuration,

    // --- lines 6 and 7: RTT samples and backoffs ---
    rtt: RttEstimator,

    // --- the handshake, SACK and the base RTT only ---
    /// SYN or SYN-ACK needs (re)sending.
    syn_due: bool,
    ecn_setup: EcnSetup,
    /// SYN / SYN-ACK retransmissions so far.
    syn_retries: u32,
    /// When our SYN / SYN-ACK was first sent (handshake RTT sample).
    syn_sent_at: Opt<SimTime>,
    /// The smallest RTT measured (the base RTT of `carry_rtt = "base"`).
    min_rtt: Opt<SimDuration>,
    /// CUBIC's or DCTCP's state (none for the other algorithms).
    cc_state: CcState,
    /// SACK scoreboard (sender side; allocated at the first SACK block or SACK recovery).
    scoreboard: Scoreboard,
    /// AccECN's counters (RFC 9768), allocated when the handshake settles on AccECN; none on
    /// every other connection.
    accecn: Option<Box<crate::tcp::accecn::AccEcn>>,
    /// Which out-of-order data arrived most recently (SACK block order; allocated at the
    /// first out-of-order arrival on a SACK connection).
    recency: SackRecency,
}

impl TcpSocket {
    /// A closed endpoint with parameters `cfg`.
    #[must_use]
    pub fn new(cfg: TcpConfig) -> Self {
        Self::with_tick_phase(Arc::new(cfg), SimDuration::ZERO)
    }

    /// A closed endpoint with parameters `cfg` (shared with other endpoints) whose tick
    /// clock (ns-2's estimator only) is offset by `tick_phase`.
    #[must_use]
    pub fn with_tick_phase(cfg: Arc<TcpConfig>, tick_phase: SimDuration) -> Self {
        let mss = u64::from(cfg.mss);
        let rtt = RttEstimator::for_config(&cfg, tick_phase);
        let (cc, cc_state) = AnyCc::new(&cfg, ISS + 1);
        TcpSocket {
            state: TcpState::Closed,
            snd_una: ISS,
            snd_nxt: ISS,
            snd_max: ISS,
            snd_wnd: mss,
            app_end: ISS + 1,
            unlimited: false,
            fin_requested: false,
            win: Window::new(
                // RFC 5681 §3.1: IW (a number of segments, or RFC 3390's formula).
                cfg.initial_window.bytes(cfg.mss),
                // RFC 5681 §3.1: the initial value of ssthresh SHOULD be set arbitrarily high.
                u64::MAX / 2,
                mss,
                u64::from(cfg.max_cwnd) * mss,
                cfg.ca_increase,
            )
            .with_slow_start(cfg.slow_start_increase),
            cc,
            last_ack_small: false,
            dupacks: 0,
            in_recovery: false,
            recover: ISS,
            partial_acks: 0,
            limited_transmit_bytes: 0,
            retransmit_due: false,
            sack_ok: false,
            scoreboard: Scoreboard::default(),
            accecn: None,
            rto: rtt.rto(),
            rtt,
            min_rtt: Opt::NONE,
            cc_state,
            rtt_probe: RttProbe::NONE,
            rto_deadline: Opt::NONE,
            syn_due: false,
            syn_sent_at: Opt::NONE,
            syn_retries: 0,
            last_data_sent: Opt::NONE,
            ecn: EcnState::default(),
            ecn_reduction: EcnReduction::default(),
            ecn_setup: EcnSetup::default(),
            rcv_nxt: 0,
            ooo: OooQueue::default(),
            recency: SackRecency::default(),
            peer_fin: Opt::NONE,
            ack_now: false,
            unacked_segments: 0,
            quickacks: if cfg.quickack == Quickack::Linux { QUICKACK_NOT_STARTED } else { 0 },
            delack_deadline: Opt::NONE,
            wake_at: Opt::NONE,
            events: SocketEvents::default(),
            counters: TcpCounters::default(),
            tso_left: 0,
            cfg,
        }
    }

    // ------------------------------------------------------------------
    // Application interface
    // ------------------------------------------------------------------

    /// Active open: send a SYN (RFC 793 §3.4), or, without a handshake, start established.
    pub fn connect(&mut self, now: SimTime) {
        if !self.cfg.handshake {
            // ns-2 one-way TCP, syn_ false: the first data packet goes out at once (see `assume_negotiated`).
            debug_assert_eq!(self.state, TcpState::Established);
            self.events.connected = true;
            self.wake_at = Opt::some(now);
            return;
        }
        debug_assert_eq!(self.state, TcpState::Closed);
        self.state = TcpState::SynSent;
        self.syn_due = true;
    }

    /// Without a handshake (`TcpConfig::handshake` false): skip it, with the
    /// outcome it would have had. Both ends are ESTABLISHED with SYN and SYN-ACK
    /// counted as sent and received; the RTO stays the initial one until a data
    /// segment is timed. `peer_window` is the receive window the peer's SYN or SYN-ACK would have
    /// advertised, so the first flight is the whole initial window. Call once, after `listen` on the
    /// responder.
    pub fn assume_negotiated(&mut self, ecn_ok: bool, sack_ok: bool, peer_window: u64) {
        self.ecn.ok = ecn_ok;
        if ecn_ok {
            self.assume_accecn();
        }
        self.prague_needs_accecn();
        self.sack_ok = sack_ok;
        // RFC 793 §3.7: SND.WND is the window the peer's segments advertise (its SYN-ACK's, here).
        self.snd_wnd = peer_window;
        self.snd_una = ISS + 1;
        self.snd_nxt = ISS + 1;
        self.snd_max = ISS + 1;
        self.rcv_nxt = ISS + 1;
        if self.state == TcpState::Listen {
            self.events.connected = true;
        }
        self.state = TcpState::Established;
    }

    /// Prague without AccECN (the peer offered RFC 3168 ECN or none): RFC 9331 §4.2 makes
    /// feedback of the extent of CE marking a prerequisite of a scalable response, so the
    /// connection runs without ECN, as Reno on the configured loss recovery (Linux tcp_prague.c
    /// `prague_init()` -> `prague_reno`, and TCP_CONG_NO_FALLBACK_RFC3168: a Classic ECN answer
    /// disables ECN).
    fn prague_needs_accecn(&mut self) {
        if !matches!(self.cc, AnyCc::Prague(_)) || self.accecn.is_some() {
            return;
        }
        self.ecn.ok = false;
        self.cc = match &self.cc {
            AnyCc::Prague(RecoveryRules::Sack(_)) => AnyCc::Sack(Sack),
            AnyCc::Prague(RecoveryRules::NewReno(n)) => AnyCc::NewReno(*n),
            _ => return,
        };
        self.cc_state = CcState::default();
    }

    /// Passive open: wait for a SYN.
    pub fn listen(&mut self) {
        debug_assert_eq!(self.state, TcpState::Closed);
        debug_assert_eq!(self.snd_max, ISS);
        self.state = TcpState::Listen;
    }

    /// The application writes `bytes` more bytes (with nothing of this connection waiting at the
    /// sending host: see [`TcpSocket::send_from_host`]).
    pub fn send(&mut self, bytes: u64) {
        self.send_from_host(SimTime::ZERO, bytes, false);
    }

    /// The application writes `bytes` more bytes at `now`; `queued_at_host`: a segment of this
    /// connection waits in, or is being serialised by, the sending host's egress port (asked only
    /// if [`TcpSocket::checks_app_limited`]).
    pub fn send_from_host(&mut self, now: SimTime, bytes: u64, queued_at_host: bool) {
        debug_assert!(!self.fin_requested, "send after close");
        if matches!(self.cc, AnyCc::Bbr(_)) {
            self.bbr_on_write(now, queued_at_host);
        }
        self.app_end += bytes;
    }

    /// The application writes without end (an unlimited bulk source).
    pub fn send_unlimited(&mut self) {
        self.send_unlimited_from_host(SimTime::ZERO, false);
    }

    /// [`TcpSocket::send_unlimited`] at `now`, `queued_at_host` as in [`TcpSocket::send_from_host`].
    pub fn send_unlimited_from_host(&mut self, now: SimTime, queued_at_host: bool) {
        if matches!(self.cc, AnyCc::Bbr(_)) && !self.unlimited {
            self.bbr_on_write(now, queued_at_host);
        }
        self.unlimited = true;
    }

    /// A write checks whether the sender is application-limited (BBR's delivery-rate samples,
    /// Linux `tcp_rate_check_app_limited()`), and so needs to know what waits at the sending host.
    #[must_use]
    pub fn checks_app_limited(&self) -> bool {
        matches!(self.cc, AnyCc::Bbr(_))
    }

    /// The application stops writing at once (a flow's `stop`): nothing past the highest
    /// sequence sent so far is offered, what was sent is still delivered (retransmitted if
    /// need be), and a FIN follows it. Without effect once the FIN is out.
    pub fn stop_writing(&mut self) {
        // ns-2 `Application/FTP stop`: `advance 0` lowers the data to send (curseq_) to maxseq_,
        // the highest sequence sent, then `close`; SND.MAX is ecnsim's maxseq_ (+1).
        let end = self.snd_max.max(ISS + 1);
        if self.unlimited || self.app_end > end {
            self.unlimited = false;
            self.app_end = end;
        }
        self.fin_requested = true;
    }

    /// The application is done writing: a FIN follows the data.
    pub fn close(&mut self) {
        if !self.unlimited {
            self.fin_requested = true;
        }
    }

    /// True if there are events to take.
    #[inline]
    #[must_use]
    pub fn has_events(&self) -> bool {
        self.events != SocketEvents::default()
    }

    /// Take the events accumulated since the last call.
    pub fn take_events(&mut self) -> SocketEvents {
        std::mem::take(&mut self.events)
    }

    // ------------------------------------------------------------------
    // Introspection
    // ------------------------------------------------------------------

    /// Connection state.
    #[must_use]
    pub fn state(&self) -> TcpState {
        self.state
    }
    /// Congestion window, bytes.
    #[must_use]
    pub fn cwnd(&self) -> u64 {
        self.win.cwnd
    }
    /// Slow-start threshold, bytes (`u64::MAX / 2` until the first loss).
    #[must_use]
    pub fn ssthresh(&self) -> u64 {
        self.win.ssthresh
    }
    /// The RTT estimator.
    #[must_use]
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Oldest unacknowledged sequence number.
    #[must_use]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next sequence number expected from the peer.
    #[must_use]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// True while in loss recovery.
    #[must_use]
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// True if ECN was negotiated on this connection.
    #[must_use]
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn.ok
    }
    /// BBR's state, if this end runs BBR.
    #[must_use]
    pub fn bbr(&self) -> Option<&Bbr> {
        self.cc_state.bbr_ref()
    }

    /// The random stream of the congestion control (BBR's gain-cycle phase): the simulation gives
    /// each connection its own, so that results do not depend on the order flows are built in.
    pub fn set_cc_rng(&mut self, rng: SimRng) {
        if let Some(b) = self.cc_state.bbr() {
            b.set_rng(rng);
        }
    }

    /// Prague's state, if this end runs Prague (and has not fallen back to Reno).
    #[must_use]
    pub fn prague(&self) -> Option<&crate::tcp::cc::Prague> {
        self.cc_state.prague_ref()
    }
    /// Prague's state, if this connection runs Prague, for tests that set it.
    #[cfg(test)]
    pub(crate) fn prague_mut(&mut self) -> Option<&mut crate::tcp::cc::Prague> {
        self.cc_state.prague()
    }

    /// DCTCP's alpha in 1/1024 (RFC 8257 §3.3), if this is DCTCP.
    #[must_use]
    pub fn dctcp_alpha(&self) -> Option<u32> {
        self.cc_state.dctcp_ref().map(super::cc::Dctcp::alpha)
    }
    /// CUBIC's t_epoch, if this is CUBIC in a congestion-avoidance stage (for tests).
    #[cfg(test)]
    pub(crate) fn cubic_epoch(&self) -> Option<SimTime> {
        self.cc_state.cubic_ref().and_then(super::cc::Cubic::epoch)
    }
    /// HyStart's or HyStart++'s state, if the connection runs one (for tests).
    #[cfg(test)]
    pub(crate) fn ss_exit(&self) -> Option<&super::hystart::SlowStartExit> {
        self.cc_state.ss_exit_ref()
    }
    /// True if SACK was negotiated on this connection.
    #[must_use]
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }
    /// FlightSize of RFC 5681: bytes sent and not yet acknowledged, up to SND.NXT. After a
    /// timeout SND.NXT goes back to SND.UNA (go-back-N) and what was sent beyond it before the
    /// timeout is being sent again, so it is not in flight.
    #[must_use]
    pub fn flight_size(&self) -> u64 {
        // RFC 5681 §2: FlightSize is the data sent but not yet cumulatively acknowledged; §3.2 step 4
        // (note): the segments between SND.UNA and SND.NXT.
        self.snd_nxt - self.snd_una
    }

    /// Sequence number of our FIN, if the application has closed.
    fn fin_seq(&self) -> Option<u64> {
        self.fin_requested.then_some(self.app_end)
    }

    /// One past the last data byte available to send.
    fn data_end(&self) -> u64 {
        if self.unlimited {
            u64::MAX / 2
        } else {
            self.app_end
        }
    }

    /// SACK-based recovery is in force.
    fn sack_recovery(&self) -> bool {
        self.in_recovery && self.sack_ok
    }

    /// After a timeout that kept the scoreboard (`sack_after_timeout = "keep"`), until its recovery
    /// point (`recover`, SND.MAX at the timeout) is acknowledged: Linux's Loss state, in which every
    /// unSACKed octet below the recovery point counts as lost (tcp_timeout_mark_lost()).
    fn sack_timeout_recovery(&self) -> bool {
        self.sack_ok
            && self.cfg.sack_after_timeout == SackAfterTimeout::Keep
            && self.ecn_reduction.after_timeout
            && !self.in_recovery
            && self.snd_una < self.recover
    }

    /// RFC 6675 §4 SetPipe() for the sender's state: in SACK recovery with IsLost's threshold, after
    /// a timeout that kept the scoreboard with every unSACKed octet below the recovery point lost.
    fn sack_pipe(&self) -> Option<u64> {
        if self.rack_on() && (self.sack_recovery() || self.sack_timeout_recovery()) {
            return Some(self.rack_pipe());
        }
        let t = if self.sack_recovery() {
            self.scoreboard.lost_threshold(self.win.mss, self.cfg.dupack_threshold)
        } else if self.sack_timeout_recovery() {
            self.recover
        } else {
            return None;
        };
        Some(self.scoreboard.pipe(self.snd_una, self.snd_max, t))
    }

    /// RFC 6937's PRR sets the sending rate of SACK recovery: `tcp.recovery_rate` names it, on RFC
    /// 6675's recovery, and not under BBR (Linux tcp_cong_control(): an algorithm with its own
    /// cong_control() sets cwnd itself; tcp_cwnd_reduction() is for the others).
    fn prr_configured(&self) -> bool {
        // `sack_ok` first: without SACK the configuration's line is not read.
        self.sack_ok
            && self.cfg.recovery_rate != RecoveryRate::Rfc6675
            && self.cfg.sack_variant == SackVariant::Rfc6675
            && !matches!(self.cc, AnyCc::Bbr(_))
    }

    /// ns-2 `Sack1`'s recovery is in force (`tcp.sack_variant = "ns2_sack1"`).
    fn ns2_sack1_recovery(&self) -> bool {
        self.sack_recovery() && self.cfg.sack_variant == SackVariant::Ns2Sack1
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// The earliest instant at which [`TcpSocket::on_timer`] has work.
    #[must_use]
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.next_deadline_opt().get()
    }

    /// [`TcpSocket::next_deadline`] in one word (the earliest of three, none being the largest).
    #[inline]
    pub(crate) fn next_deadline_opt(&self) -> Opt<SimTime> {
        self.rto_deadline.earliest(self.delack_deadline).earliest(self.wake_at)
    }

    /// Run every timer due at `now`.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.wake_at.get().is_some_and(|d| d <= now) {
            self.wake_at = Opt::NONE;
        }
        if self.delack_deadline.get().is_some_and(|d| d <= now) {
            // RFC 5681 §4.2: the delayed-ACK timer expired: ACK now.
            self.delack_deadline = Opt::NONE;
            self.ack_now = true;
        }
        if self.rack_on() {
            self.on_rack_timer(now);
        }
        if self.rto_deadline.get().is_some_and(|d| d <= now) {
            self.rto_deadline = Opt::NONE;
            self.on_rto(now);
        }
    }

    fn arm_rto(&mut self, now: SimTime) {
        debug_assert_eq!(self.rto, self.rtt.rto(), "the cached RTO follows the estimator");
        self.rto_deadline = Opt::some(now + self.rto);
    }

    fn on_rto(&mut self, now: SimTime) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if self.syn_retries >= self.cfg.syn_retries {
                    self.state = TcpState::Closed;
                    self.events.failed = true;
                    return;
                }
                // RFC 6298 §5.5: back off the timer; the SYN (or SYN-ACK) is resent.
                self.syn_retries += 1;
                self.counters.syn_retransmits += 1;
                self.rtt.on_backoff();
                self.rto = self.rtt.rto();
                self.syn_due = true;
                // RFC 3168 §6.1.5: a retransmitted packet is not ECN-capable.
                // DEVIATION(ns-2): FullTcp keeps ECT on a SYN-ACK resent on the timer (its
                // `ecn_syn_next_` is cleared only by a CE report under `ecn_syn_wait_ 2`).
                self.ecn_setup.synack_ect = false;
                self.arm_rto(now);
            }
            _ if self.snd_una < self.snd_max => {
                self.counters.rto_count += 1;
                self.ecn.wait_for_timer = false;
                // RFC 5681 §3.1 holds ssthresh on a repeated timeout; ns-2's slowdown() halves the
                // (by then one-packet) window on every timeout.
                let first = !self.rtt.is_backed_off() || self.cfg.reduction_basis == ReductionBasis::Ns2Window;
                // A timeout after an ECN reduction sets cwnd to one segment but does not reduce ssthresh
                // again (ns-2 timeout(): slowdown(CLOSE_CWND_ONE), not counted in nrexmit_).
                let after_ecn = match self.cfg.timeout_after_ecn {
                    // RFC 3168 §6.1.2: ssthresh is not decreased again within the round trip already reduced.
                    TimeoutAfterEcn::SameWindow => {
                        self.ecn_reduction.ecn_cut_until.get().is_some_and(|r| self.snd_una <= r)
                    }
                    // ns-2 tcp.cc timeout(): `recover_ = maxseq_`, then `highest_ack_ < recover_ &&
                    // last_cwnd_action_ == CWND_ACTION_ECN`: the ECN reduction is the last window action.
                    TimeoutAfterEcn::LastAction => {
                        self.ecn_reduction.ecn_cut_until.is_some() && !self.ecn_reduction.after_timeout
                    }
                };
                self.counters.rto_after_ecn += u64::from(after_ecn);
                let first = first && !after_ecn;
                let (first, flight) = self.timeout_reduction(first);
                if keeps_state(&self.cc) {
                    self.cc.on_rto(&mut self.cc_state, &mut self.win, flight, first, self.snd_max);
                } else {
                    // (See `keeps_state`: the classic algorithms' timeout leaves `cc_state`'s line unread.)
                    self.cc.on_rto(&mut CcState::default(), &mut self.win, flight, first, self.snd_max);
                }
                // The configuration first, as on an ACK: other connections leave `cc_state`'s line alone.
                if self.cfg.slow_start_exit != SlowStartExit::None {
                    if let Some(s) = self.cc_state.ss_exit() {
                        s.on_rto(now, self.snd_max);
                    }
                }
                self.win.acc = 0;
                self.ecn_reduction.ecn_cut_until = Opt::NONE;
                // RFC 6582 §3.2 step 4: after a timeout, recover <- the highest sequence number sent.
                self.recover = self.snd_max;
                self.in_recovery = false;
                self.retransmit_due = false;
                self.dupacks = 0;
                let keep =
                    self.cfg.sack_after_timeout == SackAfterTimeout::Keep && !self.scoreboard.sacked_at(self.snd_una);
                if !self.sack_ok && self.cfg.sack_after_timeout != SackAfterTimeout::Keep {
                    // Without SACK the scoreboard is only allocated by the `Keep` branch below, so
                    // there is nothing to clear (and its line, the socket's last, stays unread).
                } else if keep {
                    // RFC 6675 §5.1 (Errata 1610) / Linux tcp_timeout_mark_lost(): the SACKed ranges stay
                    // (unless SND.UNA itself is SACKed: reneging); every other octet outstanding is lost and
                    // is resent from SND.UNA (HighRxt).
                    self.scoreboard.set_high_rxt(self.snd_una);
                } else {
                    // RFC 2018 §8: after a timeout the sender turns off all SACKed bits.
                    self.scoreboard.clear();
                }
                let rack = self.rack_on();
                if rack {
                    self.rack_on_rto(now, keep);
                }
                self.note_window_reduced();
                if !(rack && keep) {
                    // RFC 6298 §5.4: retransmit the earliest segment not acknowledged;
                    // everything after it is resent as the window reopens (go-back-N).
                    self.snd_nxt = self.snd_una;
                }
                // (RACK with the scoreboard kept resends what its marks say is lost, and SND.NXT stays:
                // Linux tcp_enter_loss() does not move snd_nxt back.)
                // RFC 6298 §3 (Karn): a retransmitted segment gives no RTT sample.
                self.rtt_probe = RttProbe::NONE;
                // RFC 6298 §5.5: RTO <- RTO * 2 (bounded by the maximum).
                self.rtt.on_backoff();
                self.rto = self.rtt.rto();
                // RFC 6298 §5.6: start the timer with the new RTO.
                self.arm_rto(now);
                // ns-2 timeout(): last_cwnd_action_ = CWND_ACTION_TIMEOUT.
                self.ecn_reduction.after_timeout = true;
                self.ecn_reduction.after_loss = true;
            }
            _ if self.ecn.wait_for_timer || self.win.cwnd < self.win.mss => {
                // RFC 3168 §6.1.2: with cwnd at one segment, a new packet may go once the timer expires.
                self.ecn.wait_for_timer = false;
                // ns-2 timeout() with no data outstanding: `if (cwnd_ < 1) cwnd_ = 1`, then
                // slowdown(CLOSE_CWND_ONE|NO_OUTSTANDING_DATA), reset_rtx_timer(0,0) without backoff.
                self.win.cwnd = self.win.cwnd.max(self.win.mss);
                self.ecn_reduction.after_timeout = true;
            }
            _ => {}
        }
    }

    /// After any reduction for congestion: RFC 3168 §6.1.2, tell the receiver
    /// with CWR, and do not react to ECE again for this window of data.
    fn note_window_reduced(&mut self) {
        if self.ecn.ok {
            // RFC 9768 §3.1.5: a host in AccECN mode MUST NOT set CWR.
            self.ecn.cwr_due = self.accecn.is_none();
            self.ecn_reduction.reduced_until = Opt::some(self.snd_max);
        }
    }

    // ------------------------------------------------------------------
    // Segment arrival
    // ------------------------------------------------------------------

    /// Process an arriving segment whose IP ECN field is `ecn`.
    // Inlined into the simulation's delivery (once per segment); the slow path stays a call.
    #[inline(always)]
    pub fn on_segment(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) {
        if !self.on_predicted_segment(now, h, ecn) {
            self.on_segment_slow(now, h, ecn);
        }
    }

    /// Header prediction (Jacobson's fast path of 4.4BSD `tcp_input`, Stevens, TCP/IP
    /// Illustrated vol. 2 §28.4): in ESTABLISHED, a segment with ACK alone, no CE mark, no
    /// SACK blocks and no FIN of the peer's pending is either a pure ACK of new data or the
    /// next in-order data with nothing held out of order and nothing new acknowledged. Each
    /// does what [`TcpSocket::on_segment_slow`] does for it, without the tests that cannot
    /// apply (`tests::header_prediction_gives_the_slow_paths_state` checks them against it).
    /// Returns false, having changed nothing, for any other segment.
    #[inline(always)]
    fn on_predicted_segment(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) -> bool {
        if self.state != TcpState::Established
            || h.flags != TcpFlags::ACK
            || ecn == Ecn::Ce
            || h.sack_len != 0
            || self.peer_fin.is_some()
            || (self.ecn.echo && self.cfg.cc == CcKind::Dctcp)
            || self.cfg.ecn_feedback == EcnFeedback::Accecn
        {
            // (RFC 8257 §3.2: a DCTCP receiver in CE state 1 leaves it on an unmarked segment;
            // RFC 9768 §3.2: an AccECN receiver counts every segment's IP-ECN field.)
            return false;
        }
        if h.payload == 0 {
            if h.ack <= self.snd_una || h.ack > self.snd_max || (self.in_recovery && self.prr_configured()) {
                // (RFC 6937 §3: an ACK in PRR's recovery feeds prr_delivered, on the slow path.)
                return false;
            }
            // A pure ACK of new data: RFC 6675 §5 (the scoreboard, with no blocks to add), then
            // as `on_ack` for an ACK that advances SND.UNA without ECE; nothing for `on_data`.
            if self.sack_ok {
                self.scoreboard.update(h.ack, &[]);
            }
            let rack = self.rack_on();
            let fack_before = if rack { Some(self.rack_cum_ack(now, h.ack, None)) } else { None };
            // What the ACK newly acknowledges, for BBR only (`on_new_ack` moves SND.UNA to it): nothing
            // else is kept across `on_new_ack` for the other algorithms.
            let bbr_acked = if let AnyCc::Bbr(_) = self.cc { Some(h.ack - self.snd_una) } else { None };
            self.on_new_ack(now, h);
            if rack {
                self.rack_after_ack(now, h, true, false, fack_before);
            }
            if let Some(acked) = bbr_acked {
                // Linux tcp_ack(): tcp_fastretrans_alert() (loss marks, recovery) before tcp_cong_control().
                self.bbr_after_ack(now, acked, false);
            }
            return true;
        }
        if h.ack != self.snd_una || h.seq != self.rcv_nxt || !self.ooo.is_empty() || self.ns2_sack1_recovery() {
            // (ns-2 tcp-sack1.cc recv(): in fast recovery every ACK, data or not, takes one
            // packet off pipe_, on the slow path.)
            return false;
        }
        // In-order data that acknowledges nothing new: as `on_old_ack` for a segment with
        // payload (never a duplicate ACK: RFC 5681 §2), then `on_data` with no hole to fill.
        if self.sack_ok {
            self.scoreboard.update(self.snd_una, &[]);
        }
        self.snd_wnd = u64::from(h.window);
        let len = u64::from(h.payload);
        self.counters.bytes_received += len;
        self.rcv_nxt += len;
        self.schedule_ack(now, h.payload);
        self.counters.bytes_delivered += len;
        self.events.received = true;
        true
    }

    /// [`TcpSocket::on_segment`] for any segment, without header prediction.
    fn on_segment_slow(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) {
        let flags = h.flags;
        if ecn == Ecn::Ce {
            self.counters.ce_received += 1;
        }
        match self.state {
            TcpState::Closed => {}
            TcpState::Listen => {
                // RFC 793 §3.4: a SYN in LISTEN -> SYN-RECEIVED, answer with SYN-ACK.
                if flags.contains(TcpFlags::SYN) && !flags.contains(TcpFlags::ACK) {
                    self.rcv_nxt = h.seq + 1;
                    self.snd_wnd = u64::from(h.window);
                    self.state = TcpState::SynReceived;
                    self.syn_due = true;
                    // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR set (RFC 9768 Table 2: or AccECN's).
                    let ecn_setup = flags.contains(TcpFlags::ECE | TcpFlags::CWR);
                    self.ecn.ok = self.accecn_on_syn(h, ecn) || (ecn_setup && self.cfg.ecn != EcnPolicy::Off);
                    // RFC 5562 §3 / ECN+: the SYN-ACK is ECT only for an ECN-setup SYN.
                    self.ecn_setup.synack_ect = self.ecn.ok && self.cfg.ecn_synack != EcnSynAck::Off;
                    // RFC 2018 §2: SACK is used only if both ends send SACK-permitted.
                    self.sack_ok = h.sack_permitted && self.cfg.offers_sack();
                }
            }
            TcpState::SynSent => {
                if flags.contains(TcpFlags::SYN | TcpFlags::ACK) && h.ack == ISS + 1 {
                    if self.requests_accecn() && self.accecn_on_synack(now, h, ecn) {
                        return;
                    }
                    // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE set and CWR clear.
                    let ecn_ok = self.cfg.ecn == EcnPolicy::Request
                        && flags.contains(TcpFlags::ECE)
                        && !flags.contains(TcpFlags::CWR);
                    if ecn == Ecn::Ce && ecn_ok && self.cfg.ecn_synack == EcnSynAck::Rfc5562 {
                        // RFC 5562 §3.2: answer a CE-marked SYN-ACK with an ECE ACK and stay
                        // in SYN-SENT; the responder sends a new, non-ECT SYN-ACK.
                        self.ecn_setup.ack_marked_synack = true;
                        // RFC 6298 §3 (Karn): the handshake now spans two SYN-ACKs: no sample.
                        self.syn_sent_at = Opt::NONE;
                        return;
                    }
                    self.ecn.ok = ecn_ok;
                    self.sack_ok = h.sack_permitted && self.cfg.offers_sack();
                    self.rcv_nxt = h.seq + 1;
                    self.snd_una = h.ack;
                    self.snd_nxt = self.snd_nxt.max(h.ack);
                    self.snd_wnd = u64::from(h.window);
                    if ecn == Ecn::Ce && ecn_ok && self.cfg.cc != CcKind::Dctcp {
                        // ECN+ (Kuzmanovic 2005): proceed, and echo the mark like any CE (RFC 3168 §6.1.3).
                        // (RFC 8257 §3.2: a DCTCP receiver's CE state follows data segments only.)
                        self.ecn.echo = true;
                    }
                    self.handshake_done(now);
                    // RFC 793 §3.4: the third segment of the handshake ACKs the SYN-ACK.
                    self.ack_now = true;
                }
            }
            TcpState::SynReceived => {
                if flags.contains(TcpFlags::SYN) && !flags.contains(TcpFlags::ACK) {
                    // A retransmitted SYN: our SYN-ACK was lost; answer again (as Linux does).
                    self.accecn_on_syn_again(h, ecn);
                    self.syn_due = true;
                    return;
                }
                if flags.contains(TcpFlags::ACK) && h.ack == ISS + 1 {
                    let handshake_ack = self.accecn_on_handshake_ack(h);
                    let h = handshake_ack.as_ref().unwrap_or(h);
                    let marked = self.ecn.ok && h.flags.contains(TcpFlags::ECE);
                    if marked && self.ecn_setup.synack_ect && self.cfg.ecn_synack == EcnSynAck::Rfc5562 {
                        // RFC 5562 §3.2: the SYN-ACK was CE-marked: resend it, not ECN-capable,
                        // at once, and start with a window of one segment once it is acknowledged.
                        self.ecn_setup.synack_ect = false;
                        self.ecn_setup.synack_marked = true;
                        self.syn_due = true;
                        // RFC 6298 §3 (Karn): the SYN-ACK is sent twice: no sample.
                        self.syn_sent_at = Opt::NONE;
                        self.arm_rto(now);
                        return;
                    }
                    let ecn_plus = marked && self.cfg.ecn_synack != EcnSynAck::Off;
                    self.ecn_setup.synack_marked |= ecn_plus;
                    self.snd_una = h.ack;
                    self.snd_nxt = self.snd_nxt.max(h.ack);
                    self.handshake_done(now);
                    if ecn_plus {
                        // ECN+: the CWR of our first data segment answers this echo; the
                        // handshake_done reduction is the response, so the ECE is consumed here.
                        self.ecn.cwr_due = true;
                    }
                    let mut rest = *h;
                    rest.flags = rest.flags.without(TcpFlags::ECE);
                    self.on_synchronized_segment(now, &rest, ecn);
                }
            }
            _ => {
                if flags.contains(TcpFlags::SYN) {
                    // A retransmitted SYN-ACK after our ACK was lost: re-ACK it.
                    self.accecn_on_synack_again(ecn);
                    self.ack_now = true;
                    return;
                }
                self.on_synchronized_segment(now, h, ecn);
            }
        }
    }

    fn handshake_done(&mut self, now: SimTime) {
        self.prague_needs_accecn();
        self.state = TcpState::Established;
        self.events.connected = true;
        self.rto_deadline = Opt::NONE;
        if self.syn_retries == 0 {
            // RFC 6298 §3 (Karn): only a SYN sent once gives a valid sample.
            if let Some(t) = self.syn_sent_at.get() {
                self.take_rtt_sample(t, now);
            }
        } else if self.cfg.initial_rto < SimDuration::from_secs(3) {
            // RFC 6298 §5.7: after a retransmitted SYN with an RTO below 3 s, RTO is re-initialised to 3 s.
            self.rtt.reset_rto(SimDuration::from_secs(3));
            self.rto = self.rtt.rto();
        } else {
            self.rtt.reset_rto(self.cfg.initial_rto);
            self.rto = self.rtt.rto();
        }
        if self.ecn_setup.synack_marked {
            // RFC 5562 §3.2 / ECN+: a CE-marked SYN-ACK means an initial window of one segment.
            self.win.cwnd = self.win.mss;
            if self.cfg.ecn_synack == EcnSynAck::EcnplusWait {
                // ns-2 FullTcp ecn_syn_wait_ 1 / RFC 3168 §6.1.2: wait for the timer before sending.
                self.ecn.wait_for_timer = true;
                self.arm_rto(now);
            }
        }
    }

    fn on_synchronized_segment(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) {
        if self.accecn.is_some() {
            self.accecn_on_segment(now, h, ecn);
            return;
        }
        if self.ecn.ok && self.cfg.cc == CcKind::Dctcp {
            self.dctcp_receive(now, h, ecn);
            return;
        }
        if self.ecn.ok {
            // RFC 3168 §6.1.3: CWR ends the echo; a CE arriving with it starts it again.
            if h.flags.contains(TcpFlags::CWR) {
                self.ecn.echo = false;
                if self.cfg.quickack == Quickack::Linux && h.payload > 0 {
                    // Linux tcp_ecn_accept_cwr(): the sender's cwnd "may be very low (even just 1
                    // packet), so we should ACK immediately" (ICSK_ACK_NOW, once).
                    self.ack_now = true;
                }
            }
            if ecn == Ecn::Ce {
                if !self.ecn.echo && self.cfg.quickack == Quickack::Linux && h.payload > 0 {
                    // Linux tcp_data_ecn_check(): a CE with no echo pending enters quick-ACK mode
                    // for 2 ACKs ("Better not delay acks, sender can have a very low cwnd").
                    self.enter_quickack(2);
                }
                self.ecn.echo = true;
            }
        }
        if h.flags.contains(TcpFlags::ACK) {
            self.on_ack(now, h);
        }
        if self.state.can_receive() || self.peer_fin.is_some() {
            self.on_data(now, h);
        }
    }

    /// RFC 8257 §3.2: DCTCP's receiver echoes the CE state of the data it acknowledges, ACK for
    /// ACK, instead of latching ECE until CWR (RFC 3168 §6.1.3).
    fn dctcp_receive(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) {
        let ce = ecn == Ecn::Ce;
        let carries_data = h.payload > 0 && self.state.can_receive();
        if carries_data && ce != self.ecn.echo {
            // RFC 8257 §3.2: the CE state changes: if an ACK was being delayed, send it now, with the
            // previous state's ECE (Linux dctcp_ece_ack_update(): __tcp_send_ack(prior_rcv_nxt)) ...
            if self.delack_deadline.is_some() || self.unacked_segments > 0 {
                let prior = self.rcv_nxt;
                if let Some(d) = self.cc_state.dctcp() {
                    d.prior_ack = Some(prior);
                }
            }
            // ... and ACK the segment that changed it at once, with the new state (ICSK_ACK_NOW).
            self.ack_now = true;
        }
        if carries_data {
            // RFC 8257 §3.2: ECE is set on every ACK while the CE state is 1.
            self.ecn.echo = ce;
        }
        if h.flags.contains(TcpFlags::ACK) {
            self.on_ack(now, h);
        }
        if self.state.can_receive() || self.peer_fin.is_some() {
            self.on_data(now, h);
        }
    }

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader) {
        let ack = h.ack;
        if ack > self.snd_max {
            // RFC 793 §3.9: an ACK of something not yet sent is ignored.
            self.ack_now = true;
            return;
        }
        let (snd_una, dupacks) = (self.snd_una, self.dupacks);
        let prague = matches!(self.cc, AnyCc::Prague(_));
        // What the scoreboard held SACKed before the ACK, for Prague on SACK (read before it changes).
        let sacked = if prague && self.sack_ok { self.scoreboard.sacked_bytes() } else { 0 };
        self.on_ack_inner(now, h);
        if prague {
            self.prague_after_ack(now, snd_una, dupacks, sacked);
        }
    }

    /// Prague (Linux `prague_cong_control()`, after the ACK and any ECN-Echo it carried have been
    /// processed) on an ACK that delivered segments (Linux's `rs->acked_sacked`: each segment counts
    /// once, when SACKed or else when cumulatively acknowledged) or advanced SND.UNA.
    #[inline(never)]
    fn prague_after_ack(&mut self, now: SimTime, snd_una_before: u64, dupacks_before: u32, sacked_before: u64) {
        let mss = self.win.mss.max(1);
        let advanced = self.snd_una > snd_una_before;
        let acked_segments = if self.sack_ok {
            // Linux tcp_sacktag_one() counts a segment delivered when first SACKed, tcp_clean_rtx_queue() only the
            // cumulatively acknowledged ones not SACKed before (`tp->delivered`; RFC 6937 §3's DeliveredData).
            let delivered =
                (self.snd_una + self.scoreboard.sacked_bytes()).saturating_sub(snd_una_before + sacked_before);
            if !advanced && delivered == 0 {
                return;
            }
            delivered.div_ceil(mss)
        } else {
            let dupack = !advanced && self.dupacks != dupacks_before;
            if !advanced && !dupack {
                return;
            }
            let acked = (self.snd_una - snd_una_before).div_ceil(mss);
            let packets_out = (self.snd_max - snd_una_before).div_ceil(mss);
            let in_recovery = self.in_recovery;
            let Some(p) = self.cc_state.prague() else { return };
            p.reno_delivered(acked, dupack, packets_out, in_recovery)
        };
        let a = crate::tcp::cc::PragueAck {
            now,
            acked_segments,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            srtt: self.rtt.srtt(),
            in_recovery: self.in_recovery,
        };
        if let Some(p) = self.cc_state.prague() {
            p.on_ack(&mut self.win, &a);
        }
    }

    fn on_ack_inner(&mut self, now: SimTime, h: &TcpHeader) {
        let ack = h.ack;
        // RFC 6937 §2: DeliveredData counts the change in SACKed octets too.
        let prr = self.prr_configured();
        let before = if prr { self.snd_una + self.scoreboard.sacked_bytes() } else { 0 };
        let rack = self.rack_on();
        let bbr_sacks = self.sack_ok && matches!(self.cc, AnyCc::Bbr(_));
        // What the SACK blocks newly cover, read once for RACK and BBR before the scoreboard takes them.
        let newly = ((rack || bbr_sacks) && h.sack_len != 0).then(|| self.newly_sacked(h));
        let pieces = newly.as_ref().map_or(&[][..], |(p, n)| &p[..*n]);
        let fack_before = if rack { Some(self.rack_sacks(now, pieces)) } else { None };
        if bbr_sacks && !pieces.is_empty() {
            self.bbr_sacks(pieces);
        }
        // RFC 6675 §5: every ACK updates the scoreboard.
        let new_sack = self.sack_ok && self.scoreboard.update(ack.max(self.snd_una), &h.sack_blocks());
        let advanced = ack > self.snd_una;
        let ece = h.flags.contains(TcpFlags::ECE) && self.ecn.ok;
        if advanced {
            if rack {
                // RACK's record leaves the acknowledged segments before anything reads its pipe.
                self.rack_cum_ack(now, ack, fack_before);
            }
            let snd_una = self.snd_una;
            self.on_new_ack(now, h);
            if rack {
                self.rack_after_ack(now, h, true, new_sack, fack_before);
            }
            if prr {
                self.prr_after_ack(before);
            }
            if let AnyCc::Bbr(_) = self.cc {
                // Linux tcp_ack(): tcp_fastretrans_alert() (loss marks, recovery) before tcp_cong_control().
                self.bbr_after_ack(now, self.snd_una - snd_una, false);
            }
        } else {
            if self.ns2_sack1_recovery() {
                // ns-2 tcp-sack1.cc recv(): in fast recovery every ACK takes one packet off pipe_.
                self.scoreboard.ns2_ack(-i64::try_from(self.win.mss).unwrap_or(i64::MAX));
            }
            if h.payload == 0 && self.snd_max > self.snd_una {
                // Linux tcp_dctcp.c (to 5.0): an ACK that acknowledges nothing new counts one segment.
                self.cc.on_ack_event(&mut self.cc_state, 0, ece, self.win.mss, self.snd_una, self.snd_nxt);
            }
            if ece && self.cfg.ecn_echo_before_dupack {
                // ns-2 recv(): ecn() runs before the duplicate ACK is counted, so a reduction it
                // starts on the third duplicate ACK makes dupack_action() retransmit at once.
                self.on_ecn_echo(now, false);
            }
            let dupacks = self.dupacks;
            self.on_old_ack(now, h, new_sack);
            if rack {
                self.rack_after_ack(now, h, false, new_sack, fack_before);
            }
            if prr {
                self.prr_after_ack(before);
            }
            if self.dupacks != dupacks && matches!(self.cc, AnyCc::Bbr(_)) {
                self.bbr_after_ack(now, 0, true);
            }
            if self.cfg.ecn_echo_before_dupack {
                return;
            }
        }
        if ece {
            self.on_ecn_echo(now, advanced);
        }
    }

    // Inlined into header prediction too, where an ACK of new data is a quarter of the hops.
    #[inline(always)]
    fn on_new_ack(&mut self, now: SimTime, h: &TcpHeader) {
        let ack = h.ack;
        let acked = ack - self.snd_una;
        // What the window grows by. Linux's slow start and congestion avoidance count what the ACK newly
        // delivered (tcp_cong_control(): acked_sacked), not data the receiver held from before: after a
        // go-back-N an ACK that jumps past SND.NXT covers such data (Linux had SACKed it), so only up to
        // SND.NXT counts under `slow_start_increase = "linux"`.
        let grow_by = if self.win.ss == SlowStartIncrease::Linux {
            ack.min(self.snd_nxt.max(self.snd_una)) - self.snd_una
        } else {
            acked
        };
        // RFC 8257 §3.3: DCTCP counts what every ACK acknowledges, and with ECE, before the window reacts.
        // (A test before the call: see `keeps_state`.)
        if matches!(self.cc, AnyCc::Dctcp(_)) {
            self.cc.on_ack_event(
                &mut self.cc_state,
                acked,
                h.flags.contains(TcpFlags::ECE) && self.ecn.ok,
                self.win.mss,
                ack,
                self.snd_nxt.max(ack),
            );
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.snd_wnd = u64::from(h.window);
        self.dupacks = 0;
        // Per-ACK RTT samples for HyStart / HyStart++ (never the RTO's: those stay RFC 6298's one per RTT).
        // The configuration is read first, so that other connections do not touch `cc_state`'s line.
        let ss_exit = self.cfg.slow_start_exit != SlowStartExit::None;
        let ss_rtt = if ss_exit { self.cc_state.ss_exit().and_then(|s| s.rtt_sample(ack, now)) } else { None };
        self.limited_transmit_bytes = 0;
        // RFC 6582 §4.1: remember whether highest_ack - prev_highest_ack <= 4*SMSS.
        self.last_ack_small = acked <= 4 * self.win.mss;
        // RFC 6298 §3 (Karn) / §2: an ACK covering the timed segment gives a sample.
        if let Some((end, sent)) = self.rtt_probe.get() {
            if ack >= end {
                if self.ns2_ecn_backoff_holds(h) {
                    // ns-2 newack(): "Don't end backoff if still in ECN-Echo with a congestion window of 1 packet."
                    self.rtt.on_sample_keeping_backoff(sent, now);
                    self.rto = self.rtt.rto();
                    self.note_min_rtt(sent, now);
                } else {
                    self.take_rtt_sample(sent, now);
                }
                self.rtt_probe = RttProbe::NONE;
            }
        }
        if !h.flags.contains(TcpFlags::ECE) {
            // ns-2 recv_newack_helper(): an ACK of new data without ECN-Echo clears ecn_backoff_.
            self.ecn_reduction.ns2_backoff = false;
        }
        let mut restart_timer = true;
        if self.in_recovery {
            let full = ack >= self.recover;
            if self.ns2_sack1_recovery() {
                self.ns2_sack1_new_ack(full);
            }
            let flight = self.flight_size();
            match self.cc.on_ack_in_recovery(&mut self.win, acked, flight, full) {
                RecoveryAck::Exit => self.in_recovery = false,
                RecoveryAck::ExitAndGrow => {
                    self.in_recovery = false;
                    // ns-2 tcp-newreno.cc recv(): the ACK that ends recovery goes through recv_newack_helper().
                    if self.may_grow_on(h) {
                        self.cc.on_ack(&mut self.cc_state, &mut self.win, grow_by, now, &self.rtt, self.snd_una);
                    }
                }
                RecoveryAck::RetransmitAndStay => {
                    // RFC 6582 §3.2 step 5: retransmit the first unacknowledged segment ...
                    self.retransmit_due = true;
                    if let Some(b) = self.cc_state.bbr() {
                        // Linux tcp_newreno_mark_lost(): a partial ACK marks the new head lost (rs->losses).
                        b.on_lost(self.win.mss);
                    }
                    self.partial_acks += 1;
                    // ... and reset the retransmit timer for the first partial ACK only ("Impatient");
                    // ns-2 partialnewack_helper() with newreno_changes1_ 0 resets it on every partial
                    // ACK ("Slow-but-Steady").
                    restart_timer = self.partial_acks == 1 || self.cfg.newreno_partial_ack == NewrenoPartialAck::Ns2;
                }
                RecoveryAck::Stay => {}
            }
            if full {
                self.in_recovery = false;
            }
        } else if self.may_grow_on(h) && !(ss_exit && self.slow_start_exit(now, acked, ss_rtt)) {
            if keeps_state(&self.cc) {
                self.cc.on_ack(&mut self.cc_state, &mut self.win, grow_by, now, &self.rtt, self.snd_una);
            } else {
                // (See `keeps_state`: the classic algorithms' growth leaves `cc_state`'s line unread.)
                self.cc.on_ack(&mut CcState::default(), &mut self.win, grow_by, now, &self.rtt, self.snd_una);
            }
        }
        if self.snd_una == self.snd_max {
            // RFC 6298 §5.2: all outstanding data acknowledged: turn off the timer.
            self.rto_deadline = Opt::NONE;
            if self.ecn.wait_for_timer || self.win.cwnd < self.win.mss {
                // RFC 3168 §6.1.2: the wait for the timer continues with nothing outstanding (ns-2
                // newtimer(): the timer is set while t_seqno_ > the ACK, as it is with nothing in flight).
                self.arm_rto(now);
            }
        } else if restart_timer || self.rto_deadline.is_none() {
            // RFC 6298 §5.3: an ACK of new data restarts the timer.
            self.arm_rto(now);
        }
        self.on_fin_acked();
        if !self.unlimited && self.snd_una >= self.data_end() + u64::from(self.fin_requested) {
            self.events.all_acked = true;
        }
    }

    /// HyStart / HyStart++ on an ACK of new data that may open the window, before the congestion
    /// control: true if HyStart++ grew the window itself.
    #[inline(never)]
    fn slow_start_exit(&mut self, now: SimTime, acked: u64, rtt: Option<SimDuration>) -> bool {
        let a = SsAck {
            now,
            acked,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            srtt: self.rtt.srtt(),
            ca_epoch: self.cc_state.cubic_epoch(),
        };
        self.cc_state.ss_exit().is_some_and(|s| s.on_ack(&mut self.win, &a))
    }

    /// RFC 6937 §3 "on every ACK during recovery", once the ACK has been processed: `before` was
    /// SND.UNA plus the SACKed octets before it.
    #[inline(never)]
    fn prr_after_ack(&mut self, before: u64) {
        if !self.in_recovery {
            return;
        }
        // RFC 6937 §2: DeliveredData = change_in(snd.una) + change_in(SACKd).
        let delivered = (self.snd_una + self.scoreboard.sacked_bytes()).saturating_sub(before);
        // RFC 6937 §3: pipe = (RFC 6675 pipe algorithm).
        let mss = self.win.mss;
        let pipe = self.recovery_pipe();
        self.scoreboard.prr_on_ack(delivered, pipe, self.win.ssthresh, mss, self.cfg.recovery_rate);
    }

    /// BBR (Linux `tcp_cong_control()` -> `bbr_main()`): the model and the window, once the ACK
    /// has been processed.
    #[inline(never)]
    fn bbr_after_ack(&mut self, now: SimTime, acked: u64, dupack: bool) {
        // Without SACK there is no RFC 6675 loss mark, no pipe and nothing SACKed (`sack_recovery`,
        // `sack_pipe` and the scoreboard answer so), and no need to ask.
        let (sack_pipe, sacked) = if self.sack_ok {
            if self.sack_recovery() && !self.rack_on() {
                self.bbr_rfc6675_losses();
            }
            (self.sack_pipe(), self.scoreboard.sacked_bytes())
        } else {
            debug_assert!(self.sack_pipe().is_none());
            (None, 0)
        };
        let info = self.bbr_info(now, acked, dupack, sack_pipe, sacked);
        if let Some(b) = self.cc_state.bbr() {
            self.win.cwnd = b.on_ack(&info);
        }
    }

    /// What BBR reads of the socket's state (see [`AckInfo`]).
    fn bbr_info(&self, now: SimTime, acked: u64, dupack: bool, sack_pipe: Option<u64>, sacked: u64) -> AckInfo {
        AckInfo {
            now,
            snd_una: self.snd_una,
            acked,
            dupack,
            sack: self.sack_ok,
            sacked,
            in_recovery: self.in_recovery,
            sack_pipe,
            flight: self.flight_size(),
            outstanding: self.snd_max - self.snd_una,
            retransmit_due: self.retransmit_due,
            srtt: self.rtt.srtt(),
            mss: self.win.mss,
            max_cwnd: self.win.max_cwnd,
        }
    }

    /// BBR: the application writes at `now` (Linux `tcp_sendmsg_locked()` ->
    /// `tcp_rate_check_app_limited()`, before the new data is queued); `queued_at_host` as in
    /// [`TcpSocket::send_from_host`].
    // DEVIATION(draft-cheng-iccrg-delivery-rate-estimation §3.4): the draft also checks at the start of
    // ACK processing and of the retransmission timers; Linux (tcp_sendmsg_locked(), the sendpage paths)
    // only as the application writes, and ecnsim follows Linux: a transfer that has sent all it was
    // given is not marked while its last ACKs and retransmissions come back.
    #[inline(never)]
    fn bbr_on_write(&mut self, now: SimTime, queued_at_host: bool) {
        if self.snd_max <= ISS + 1 {
            // DEVIATION(Linux): nothing sent yet. Linux starts every connection application-limited
            // until its first ACK (tcp_init_sock(): app_limited = ~0U, "a bubble in the pipe"), and
            // the write's check leaves it so; ecnsim does not model that opening bubble (the first
            // flight's samples are not application-limited), so the first write marks nothing either.
            return;
        }
        let (sack_pipe, sacked) =
            if self.sack_ok { (self.sack_pipe(), self.scoreboard.sacked_bytes()) } else { (None, 0) };
        let w = AppWrite {
            state: self.bbr_info(now, 0, false, sack_pipe, sacked),
            // Linux `write_seq - snd_nxt < mss_cache`: Linux's snd_nxt is the highest sequence sent,
            // SND.MAX here (what lies between SND.NXT and SND.MAX after a timeout is marked lost).
            unsent_below_mss: !self.unlimited && self.app_end.saturating_sub(self.snd_max) < self.win.mss,
            queued_at_host,
            lost_retransmitted: !self.lost_awaits_retransmission(),
        };
        if let Some(b) = self.cc_state.bbr() {
            b.on_app_write(&w);
        }
    }

    /// A segment marked lost has not been retransmitted since (Linux `lost_out > retrans_out`): a
    /// fast retransmission due; RACK's lost marks (its `lost` and `retrans` are Linux's `lost_out`
    /// and `retrans_out`); in RFC 6675 recovery an unSACKed octet IsLost() covers above HighRxt
    /// (NextSeg()'s rule 1), and after a timeout that kept the scoreboard one below the recovery
    /// point; otherwise, after a timeout, what lies between SND.NXT and SND.MAX (go-back-N: Linux
    /// tcp_timeout_mark_lost() marks everything outstanding lost).
    fn lost_awaits_retransmission(&self) -> bool {
        if self.retransmit_due {
            return true;
        }
        if self.rack_on() {
            return self.scoreboard.rack().is_some_and(Rack::lost_unretransmitted);
        }
        let from = self.scoreboard.high_rxt().max(self.snd_una);
        if self.sack_recovery() {
            let t = self.scoreboard.lost_threshold(self.win.mss, self.cfg.dupack_threshold);
            return self.scoreboard.first_unsacked(from, t.min(self.scoreboard.highest_sacked())).is_some();
        }
        if self.sack_timeout_recovery() {
            return self.scoreboard.first_unsacked(from, self.recover).is_some();
        }
        self.snd_nxt < self.snd_max
    }

    /// RFC 6675 recovery without RACK: the unSACKed octets IsLost() newly covers on this ACK are
    /// marked lost for BBR's rate sample, each once (RFC 6675 §4 IsLost(); Linux tcp_update_scoreboard()
    /// -> tcp_mark_head_lost() marks the unSACKed head below the DupThresh-th SACKed segment).
    fn bbr_rfc6675_losses(&mut self) {
        let threshold = self.scoreboard.lost_threshold(self.win.mss, self.cfg.dupack_threshold);
        let Some(b) = self.cc_state.bbr() else { return };
        let from = b.lost_mark().max(self.snd_una);
        if threshold > from {
            b.on_lost(self.scoreboard.unsacked_in(from, threshold));
            b.set_lost_mark(threshold);
        }
    }

    /// BBR's delivery-rate estimator on a SACK connection: `pieces`, the octets this ACK's blocks
    /// newly SACK (Linux tcp_sacktag_one(): each newly SACKed segment is delivered,
    /// tcp_count_delivered() and tcp_rate_skb_delivered()).
    #[inline(never)]
    fn bbr_sacks(&mut self, pieces: &[(u64, u64)]) {
        if let Some(b) = self.cc_state.bbr() {
            for &(l, r) in pieces {
                b.on_sacked(l, r);
            }
        }
    }

    /// The octet ranges an ACK's SACK blocks newly cover (not SACKed before, above SND.UNA and the
    /// ACK), at most 16, in sequence order; read before the scoreboard takes the blocks.
    pub(super) fn newly_sacked(&self, h: &TcpHeader) -> ([(u64, u64); 16], usize) {
        let floor = h.ack.max(self.snd_una);
        let mut pieces = [(0u64, 0u64); 16];
        let mut n = 0;
        for b in h.sack_blocks().iter() {
            let left = b.left.max(floor);
            if b.right > left {
                self.scoreboard.for_each_unsacked(left, b.right, |l, r| {
                    if n < pieces.len() {
                        pieces[n] = (l, r);
                        n += 1;
                    }
                });
            }
        }
        pieces[..n].sort_unstable();
        (pieces, n)
    }

    /// An ACK that does not advance SND.UNA; `new_sack`: it SACKed octets not SACKed before.
    fn on_old_ack(&mut self, now: SimTime, h: &TcpHeader, new_sack: bool) {
        let ack = h.ack;
        // RFC 5681 §2: a duplicate ACK acknowledges SND.UNA, carries no data, no SYN/FIN,
        // does not change the window, and arrives while data is outstanding.
        let is_dup = ack == self.snd_una
            && h.payload == 0
            && !h.flags.contains(TcpFlags::FIN)
            && u64::from(h.window) == self.snd_wnd
            && self.snd_max > self.snd_una
            // RFC 6675 §2: with SACK, a duplicate ACK carries a SACK block that identifies
            // previously un-SACKed octets (the ACK of a duplicate segment does not count).
            && (!self.sack_ok || new_sack);
        self.snd_wnd = u64::from(h.window);
        if !is_dup {
            return;
        }
        self.dupacks += 1;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4 / RFC 6582 step 3: inflate per additional duplicate ACK (not with SACK).
            self.cc.on_dupack_in_recovery(&mut self.win);
            return;
        }
        if self.sack_timeout_recovery() {
            // RFC 6675 §5.1: after a timeout no new recovery begins until HighACK >= RecoveryPoint
            // (Linux tcp_fastretrans_alert(): the Loss state lasts until snd_una passes high_seq).
            return;
        }
        if self.rack_on() {
            // RFC 8985 §6.2: recovery starts when RACK marks a segment lost (`rack_after_ack`), not on
            // DupThresh duplicate ACKs (Linux tcp_time_to_recover(): `lost_out`, the classic rule only
            // without RACK).
            return;
        }
        let threshold = self.dupacks == self.cfg.dupack_threshold;
        // RFC 6675 §5: with SACK, also enter recovery once IsLost(HighACK + 1).
        let sack_lost =
            self.sack_ok && self.snd_una < self.scoreboard.lost_threshold(self.win.mss, self.cfg.dupack_threshold);
        if !(threshold || sack_lost) {
            return;
        }
        self.loss_detected(now);
    }

    /// A loss was detected (DupThresh duplicate ACKs, RFC 6675's IsLost(), or RACK's marks): enter
    /// fast recovery, unless the `recover` guard or an ECN reduction of this window says no.
    fn loss_detected(&mut self, now: SimTime) {
        // `recover` is kept as one past the highest sequence number sent when the last recovery or
        // timeout began.
        let guarded = if self.sack_ok && self.cfg.sack_recovery_guard == SackRecoveryGuard::Rfc6675 {
            // RFC 6675 §5.1 (`sack_recovery_guard = "rfc6675"`): after an RTO a SACK sender MUST NOT start a new
            // recovery until HighACK >= RecoveryPoint (SND.UNA >= recover, both one past); no ACK heuristic.
            self.snd_una < self.recover
        } else if self.cc.checks_recover() {
            match self.cfg.newreno_careful {
                NewrenoCareful::Off => false,
                // RFC 6582 §3.2 step 2 (careful variant) / RFC 6675 §5: only if the ACK covers more than
                // `recover` (ns-2 dupack_action(): recovered = highest_ack_ > recover_).
                NewrenoCareful::Careful => self.snd_una <= self.recover,
                // RFC 2582 §5 "less careful" variant (ns-2 lessCareful_): an ACK of exactly `recover` qualifies.
                NewrenoCareful::LessCareful => self.snd_una < self.recover,
                NewrenoCareful::CarefulAckHeuristic => self.snd_una <= self.recover && !self.ack_heuristic_says_lost(),
            }
        } else if self.cfg.reno_bugfix {
            // ns-2 dupack_action() with bugFix_: only if highest_ack_ > recover_ (the ACK covers more
            // than the highest packet sent when the last fast retransmit or timeout began).
            self.snd_una <= self.recover
        } else {
            // RFC 6582 §4: Tahoe's fast retransmit ends in a go-back-N, as a timeout does, and the
            // duplicate ACKs of segments it resends that the receiver held are no new congestion;
            // without this guard each answers the last go-back-N with another, one per round trip.
            self.cc.go_back_n_on_dupacks()
                && self.cfg.newreno_careful == NewrenoCareful::CarefulAckHeuristic
                && self.snd_una <= self.recover
                && !self.ack_heuristic_says_lost()
        };
        // ns-2 dupack_action(): a loss in the window already reduced for a CE mark is retransmitted
        // without a second reduction (RFC 3168 §6.1.2: ssthresh is reduced once per round trip).
        let after_ecn = self.ecn_reduction.ecn_cut_until.get().is_some_and(|r| self.snd_una <= r);
        if guarded && !after_ecn {
            // No second fast retransmit for losses in the same window.
            return;
        }
        self.counters.fast_retransmits += 1;
        // RFC 6937 §3: RecoverFS, the FlightSize ssthresh is computed from (RFC 5681 §3.2 step 2:
        // without what Limited Transmit sent).
        let recover_fs = (self.snd_max - self.snd_una).saturating_sub(self.limited_transmit_bytes);
        let response = if after_ecn {
            if let Some(p) = self.cc_state.prague() {
                // Linux tcp_enter_recovery() from CWR: prague_state() -> prague_enter_loss() halves the fractional
                // window on top of the ECN cut (tcp_prague.c; the state changes, so the hook runs).
                p.on_enter_recovery_in_cwr();
            }
            self.cc.on_dupack_threshold_after_ecn(&mut self.win, self.cfg.dupack_threshold)
        } else {
            // RFC 5681 §3.2 step 2: data sent by Limited Transmit is not counted in FlightSize here.
            let flight = self.reduction_flight().saturating_sub(self.limited_transmit_bytes);
            let r = self.cc.on_dupack_threshold(&mut self.cc_state, &mut self.win, flight);
            self.note_window_reduced();
            r
        };
        self.win.acc = 0;
        // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4.1: recover <- HighData. ns-2 dupack_action()'s
        // CWND_ACTION_ECN branch leaves recover_ where ecn() set it (`tcp.ecn_keeps_recover`).
        let recover = match self.ecn_reduction.ecn_cut_until.get() {
            // Linux tcp_enter_recovery(): in CWR (tcp_in_cwnd_reduction()) high_seq stays the ECN reduction's; Prague's
            // rounds are Linux's states, whatever the profile says.
            Some(point) if after_ecn && (self.cfg.ecn_keeps_recover || matches!(self.cc, AnyCc::Prague(_))) => point,
            _ => self.snd_max,
        };
        self.ecn_reduction.ecn_cut_until = Opt::NONE;
        // ns-2 dupack_action(): last_cwnd_action_ = CWND_ACTION_DUPACK.
        self.ecn_reduction.after_timeout = false;
        self.ecn_reduction.after_loss = true;
        self.limited_transmit_bytes = 0;
        match response {
            LossResponse::FastRecovery => {
                self.in_recovery = true;
                self.partial_acks = 0;
                self.recover = recover;
                let (rack, snd_una, mss) = (self.rack_on(), self.snd_una, self.win.mss);
                if let (false, Some(b)) = (rack, self.cc_state.bbr()) {
                    // Linux tcp_newreno_mark_lost() / tcp_mark_head_lost(sk, 1, 1): the head segment is
                    // marked lost as recovery starts (rs->losses); RACK counts its own marks.
                    b.on_lost(mss);
                    b.set_lost_mark(snd_una + mss);
                }
                // RFC 6675 §5 step 4.3 / RFC 5681 §3.2 step 2: retransmit the first segment.
                self.retransmit_due = true;
                if self.sack_ok {
                    // Only SACK recovery reads HighRxt: without SACK the scoreboard stays unallocated.
                    self.scoreboard.set_high_rxt(self.snd_una);
                }
                if self.prr_configured() {
                    // RFC 6937 §3: at the beginning of recovery, initialise PRR's state.
                    self.scoreboard.prr_start(recover_fs);
                }
                if self.ns2_sack1_recovery() {
                    self.ns2_sack1_enter(now);
                }
            }
            LossResponse::SlowStart => {
                // Jacobson88: go back to SND.UNA and slow-start.
                self.recover = recover;
                self.snd_nxt = self.snd_una;
            }
        }
        // RFC 6298 §3 (Karn): a retransmission invalidates the sample in progress.
        self.rtt_probe = RttProbe::NONE;
    }

    /// The FlightSize a loss reduction halves: RFC 5681 eq. (4)'s FlightSize, or ns-2's window
    /// in whole packets (`int(window())`, at most `window_`), rounded down to an even number of
    /// segments so that halving it gives ns-2's `int(window() / 2)`.
    fn reduction_flight(&self) -> u64 {
        match self.cfg.reduction_basis {
            ReductionBasis::FlightSize => self.flight_size(),
            ReductionBasis::Ns2Window => self.ns2_window_basis(),
            // Linux tcp_snd_cwnd(): the window in whole segments (snd_cwnd counts packets).
            ReductionBasis::Cwnd => self.win.cwnd.min(self.win.max_cwnd) / self.win.mss.max(1) * self.win.mss,
        }
    }

    /// Whether a timeout reduces ssthresh, and from what: the profile's rule (`first`, from
    /// [`Self::reduction_flight`]), or under CUBIC `tcp.cubic_timeout`'s.
    fn timeout_reduction(&self, first: bool) -> (bool, u64) {
        if self.cfg.cc != CcKind::Cubic || self.cfg.cubic_timeout == CubicTimeout::FlightSize {
            return (first, self.reduction_flight());
        }
        // Linux tcp_enter_loss(): ssthresh is reduced only if it has not been inside this window:
        // not while a fast recovery is in progress (Recovery state, high_seq after snd_una).
        let first = first && !self.in_recovery;
        // Linux tcp_enter_loss(): icsk_ca_ops->ssthresh(), which for CUBIC reads snd_cwnd.
        (first, self.win.cwnd)
    }

    /// ns-2 slowdown() with precisionReduce_ false: 2 * int(window() / 2) packets, in bytes.
    fn ns2_window_basis(&self) -> u64 {
        let mss = self.win.mss;
        let packets = self.win.cwnd.min(self.win.max_cwnd) / mss;
        packets / 2 * 2 * mss
    }

    /// Whether this ACK of new data may open the window (`TcpConfig::ecn_ece_growth`).
    fn may_grow_on(&self, h: &TcpHeader) -> bool {
        if !(self.ecn.ok && h.flags.contains(TcpFlags::ECE)) {
            return true;
        }
        match self.cfg.ecn_ece_growth {
            // ns-2 recv_newack_helper() / RFC 3168 §6.1.2: no ACK carrying ECE opens the window.
            EceGrowth::Never => false,
            // Linux tcp_may_raise_cwnd(): (!(flag & FLAG_ECE) || snd_cwnd < snd_ssthresh).
            EceGrowth::SlowStart => self.win.in_slow_start(),
            // RFC 3168 §6.1.2: a timeout or fast retransmit is the response to any congestion in its
            // window ("reduces its congestion window for any reason"); an ECE on an ACK that does not
            // pass that reduction's point echoes a mark it answered, and retransmissions cannot carry
            // the CWR that would end the echo. After an ECN reduction, ECE still blocks growth.
            EceGrowth::AfterLoss => {
                self.ecn_reduction.ecn_cut_until.is_none()
                    && self.ecn_reduction.reduced_until.get().is_some_and(|r| self.snd_una <= r)
            }
        }
    }

    /// One RTT measurement: the segment sent at `sent` was acknowledged at `now`.
    fn take_rtt_sample(&mut self, sent: SimTime, now: SimTime) {
        self.rtt.on_sample(sent, now);
        self.rto = self.rtt.rto();
        self.note_min_rtt(sent, now);
    }

    fn note_min_rtt(&mut self, sent: SimTime, now: SimTime) {
        let r = now.saturating_since(sent);
        self.min_rtt = Opt::some(self.min_rtt.get().map_or(r, |m| m.min(r)));
    }

    /// Whether an ECN-Echo on an ACK that advances SND.UNA to `ack` starts a reduction
    /// (RFC 3168 §6.1.2: at most once per window of data, and not during loss recovery).
    fn ecn_echo_reacts(&self, ack: u64) -> bool {
        if self.in_recovery {
            return false;
        }
        // ns-2 ecn(): `if (seqno > recover_ || last_cwnd_action_ == CWND_ACTION_TIMEOUT)`.
        if self.cfg.ecn_after_timeout && self.ecn_reduction.after_timeout {
            return true;
        }
        // An ECE on an ACK that does not pass the reduction point echoes a mark of the
        // window already answered (the receiver echoes until our CWR reaches it).
        self.ecn_reduction
            .reduced_until
            .get()
            .is_none_or(|r| ack > r || (ack == r && self.recovery_ends_at_its_point()))
    }

    /// Whether the loss recovery (or timeout recovery) in force ends on the ACK of exactly its point, so
    /// that an ECN-Echo there starts the next reduction: Prague's rounds are Linux's states, and on a SACK
    /// connection Linux leaves Recovery and Loss when SND.UNA reaches high_seq (its CWR state waits for an
    /// ACK above it). The other algorithms keep RFC 3168 §6.1.2's window, as ns-2's ecn() (`seqno > recover_`).
    #[cold]
    fn recovery_ends_at_its_point(&self) -> bool {
        // Linux tcp_try_undo_recovery(): only Reno holds the state at snd_una == high_seq ("SACK TCP is safe");
        // tcp_fastretrans_alert() then reaches tcp_try_to_open(), whose tcp_enter_cwr() acts on FLAG_ECE.
        matches!(self.cc, AnyCc::Prague(_)) && self.sack_ok && self.ecn_reduction.after_loss
    }

    /// ns-2 newack(): whether `ecn_backoff_` is set once ecn() has seen this ACK, which keeps
    /// the timer's backoff through the RTT sample (`tcp.ecn_one_segment = "ns2"` only).
    fn ns2_ecn_backoff_holds(&self, h: &TcpHeader) -> bool {
        if self.cfg.ecn_one_segment != EcnOneSegment::Ns2 || !self.ecn.ok || !h.flags.contains(TcpFlags::ECE) {
            return false;
        }
        if self.ecn_echo_reacts(h.ack) {
            // ns-2 ecn(): ecn_backoff_ is set if cwnd_ <= 1, cleared otherwise.
            self.win.cwnd <= self.win.mss
        } else {
            self.ecn_reduction.ns2_backoff
        }
    }

    fn on_ecn_echo(&mut self, now: SimTime, advanced: bool) {
        if !self.ecn_echo_reacts(self.snd_una) {
            return;
        }
        if let AnyCc::Bbr(_) = self.cc {
            // BBR v1 ignores ECN-Echo for its window (Linux tcp_enter_cwr() still sends CWR, but BBR's
            // cong_control hook sets the window): no reduction is counted.
            self.note_window_reduced();
            return;
        }
        self.counters.ecn_reductions += 1;
        self.ecn_reduction.after_timeout = false;
        let one_segment = self.win.cwnd <= self.win.mss;
        let basis = match self.cfg.reduction_basis {
            // RFC 3168 §6.1.2: halve cwnd.
            ReductionBasis::FlightSize | ReductionBasis::Cwnd => self.win.cwnd,
            ReductionBasis::Ns2Window => self.ns2_window_basis(),
        };
        let at_minimum = self.cc.on_ecn_echo(&mut self.cc_state, &mut self.win, basis, self.snd_max, now);
        self.win.acc = 0;
        self.note_window_reduced();
        self.ecn_reduction.ecn_cut_until = self.ecn_reduction.reduced_until;
        self.ecn_reduction.after_loss = false;
        match self.cfg.ecn_one_segment {
            EcnOneSegment::Rfc3168 if at_minimum => {
                // RFC 3168 §6.1.2: with cwnd at one segment, the sending TCP MUST reset the retransmit
                // timer and send a new packet only when it expires.
                self.ecn.wait_for_timer = true;
                self.arm_rto(now);
            }
            EcnOneSegment::Rfc3168 => {}
            EcnOneSegment::Ns2 => {
                // ns-2 ecn(): `if (cwnd_ <= 1.0) { if (ecn_backoff_) rtt_backoff(); else ecn_backoff_ = 1; }
                // else ecn_backoff_ = 0`.
                if one_segment {
                    if self.ecn_reduction.ns2_backoff {
                        self.rtt.on_backoff();
                        self.rto = self.rtt.rto();
                    }
                    self.ecn_reduction.ns2_backoff = true;
                } else {
                    self.ecn_reduction.ns2_backoff = false;
                }
                if at_minimum {
                    // ns-2 slowdown(CLOSE_CWND_HALF), precisionReduce_ false: cwnd_ = int(window() / 2),
                    // zero below two packets; only the timer's expiry reopens it (timeout(): cwnd_ = 1).
                    self.win.cwnd = basis / 2;
                }
                if advanced || self.rto_deadline.is_none() {
                    // ns-2 newack() sets the timer after ecn() has backed it off (newtimer()).
                    self.arm_rto(now);
                }
            }
            // Linux tcp_enter_cwr() / tcp_cwnd_reduction(): cwnd stays at least one segment, and
            // sending goes on (PRR sends one segment when nothing has been sent in the reduction).
            EcnOneSegment::Linux => {}
        }
    }

    fn on_fin_acked(&mut self) {
        let Some(fin) = self.fin_seq() else { return };
        if self.snd_una <= fin {
            return;
        }
        // RFC 793 §3.9: our FIN is acknowledged.
        self.state = match self.state {
            TcpState::FinWait1 => TcpState::FinWait2,
            TcpState::Closing => TcpState::TimeWait,
            // DEVIATION(RFC 793): LAST-ACK ends in CLOSED at once; no 2MSL timer is needed
            // because sequence spaces are never reused in a run.
            TcpState::LastAck => TcpState::Closed,
            s => s,
        };
    }

    fn on_data(&mut self, now: SimTime, h: &TcpHeader) {
        let start = h.seq;
        let end = h.seq + u64::from(h.payload);
        if h.flags.contains(TcpFlags::FIN) {
            self.peer_fin = Opt::some(end);
        }
        if h.payload > 0 {
            let before = self.rcv_nxt;
            let had_hole = !self.ooo.is_empty();
            if end <= self.rcv_nxt {
                // RFC 5681 §4.2 / RFC 793: a duplicate segment is ACKed at once.
                self.ack_now = true;
                if self.cfg.quickack == Quickack::Linux {
                    // Linux tcp_send_dupack(): a delayed ACK was lost; quick-ACK mode for 16 ACKs.
                    self.enter_quickack(TCP_MAX_QUICKACKS);
                }
            } else if start <= self.rcv_nxt {
                self.counters.bytes_received += end - self.rcv_nxt - self.held_within(self.rcv_nxt, end);
                self.rcv_nxt = end;
                // Pull in what the out-of-order queue now makes contiguous.
                self.rcv_nxt = self.ooo.pull(self.rcv_nxt);
                if had_hole {
                    // RFC 5681 §4.2: a segment that fills (part of) a gap is ACKed immediately.
                    self.ack_now = true;
                } else {
                    self.schedule_ack(now, h.payload);
                }
            } else if end - self.rcv_nxt <= self.cfg.rcv_window {
                self.counters.bytes_received += end - start - self.held_within(start, end);
                self.insert_ooo(start, end);
                if self.sack_ok {
                    // Only SACK blocks read it: without SACK it stays unallocated.
                    self.recency.on_arrival(start);
                }
                // RFC 5681 §4.2: an out-of-order segment is ACKed immediately (a duplicate ACK).
                self.ack_now = true;
            } else {
                // Beyond the window: dropped, but ACKed (RFC 793 §3.9).
                self.ack_now = true;
                if self.cfg.quickack == Quickack::Linux {
                    // Linux tcp_data_queue() out_of_window: tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS).
                    self.enter_quickack(TCP_MAX_QUICKACKS);
                }
            }
            let delivered = self.rcv_nxt - before;
            if delivered > 0 {
                self.counters.bytes_delivered += delivered;
                self.events.received = true;
            }
        }
        if let Some(fin) = self.peer_fin.get() {
            if fin == self.rcv_nxt && self.state.can_receive() {
                // RFC 793 §3.5: the FIN is in order: it occupies one sequence number.
                self.rcv_nxt += 1;
                self.ack_now = true;
                self.events.peer_closed = true;
                let fin_acked = self.fin_seq().is_some_and(|f| self.snd_una > f);
                self.state = match self.state {
                    TcpState::Established => TcpState::CloseWait,
                    TcpState::FinWait1 if fin_acked => TcpState::TimeWait,
                    TcpState::FinWait1 => TcpState::Closing,
                    TcpState::FinWait2 => TcpState::TimeWait,
                    s => s,
                };
            } else if fin < self.rcv_nxt {
                // A retransmitted FIN we already have: re-ACK it.
                self.ack_now = true;
            }
        }
    }

    /// Bytes of `[start, end)` already held out of order.
    fn held_within(&self, start: u64, end: u64) -> u64 {
        self.ooo.held_within(start, end)
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        self.ooo.insert(start, end);
    }

    #[inline(always)]
    fn schedule_ack(&mut self, now: SimTime, payload: u32) {
        if !self.cfg.delayed_ack {
            self.ack_now = true;
            return;
        }
        if payload >= self.cfg.mss {
            self.unacked_segments += 1;
        }
        if self.quickacks != 0 && self.quickack_due() {
            self.ack_now = true;
            return;
        }
        // RFC 5681 §4.2: an ACK SHOULD be generated for at least every second full-sized segment.
        if self.unacked_segments >= 2 {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            // RFC 5681 §4.2: ... and MUST be generated within 500 ms of the arrival of the first unacknowledged packet.
            self.delack_deadline = Opt::some(now + self.cfg.delayed_ack_timeout);
        }
    }

    /// Linux quick-ACK mode, for in-order data: the first data segment starts it (Linux
    /// tcp_event_data_recv(): `if (!icsk->icsk_ack.ato)`, tcp_incr_quickack(sk, TCP_MAX_QUICKACKS));
    /// while ACKs remain, each data segment is ACKed at once (Linux __tcp_ack_snd_check():
    /// tcp_in_quickack_mode()).
    #[inline(never)]
    fn quickack_due(&mut self) -> bool {
        if self.quickacks == QUICKACK_NOT_STARTED {
            self.quickacks = 0;
            self.enter_quickack(TCP_MAX_QUICKACKS);
        }
        self.quickacks > 0
    }

    /// Linux tcp_incr_quickack(): quick = max(quick, min(rcv_wnd / (2 * rcv_mss), `max`)),
    /// at least 2 where the window holds less than two segments.
    fn enter_quickack(&mut self, max: u8) {
        let by_window = self.cfg.rcv_window / (2 * u64::from(self.cfg.mss)).max(1);
        let by_window = if by_window == 0 { 2 } else { by_window };
        let n = u8::try_from(by_window.min(u64::from(max))).unwrap_or(max);
        let current = if self.quickacks == QUICKACK_NOT_STARTED { 0 } else { self.quickacks };
        self.quickacks = current.max(n);
    }

    // ------------------------------------------------------------------
    // Transmission
    // ------------------------------------------------------------------

    /// The next segment to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let mut header = TcpHeader::default();
        self.poll_transmit_into(now, &mut header).map(|t| Segment { header, ecn: t.ecn })
    }

    /// [`TcpSocket::poll_transmit`], writing the header in place (in a packet's slot):
    /// every field of `header` is written when a segment is returned; with `None` its
    /// content is unspecified. Call until it returns `None` or a [`Transmit`] marked `last`.
    // Inlined into the endpoint's flush, which polls once or twice per segment.
    #[inline(always)]
    pub fn poll_transmit_into(&mut self, now: SimTime, header: &mut TcpHeader) -> Option<Transmit> {
        match self.state {
            TcpState::Closed | TcpState::Listen => None,
            TcpState::SynSent | TcpState::SynReceived => {
                self.poll_handshake(now, header).map(|ecn| Transmit { ecn, last: false })
            }
            _ => {
                if self.cfg.ecn_feedback == EcnFeedback::Accecn {
                    if let Some(t) = self.poll_accecn_handshake_ack(header) {
                        return Some(t);
                    }
                }
                if self.ecn.ok && self.cfg.cc == CcKind::Dctcp {
                    if let Some(prior) = self.cc_state.dctcp().and_then(|d| d.prior_ack.take()) {
                        return Some(self.poll_dctcp_prior_ack(header, prior));
                    }
                }
                if !self.may_send_data() {
                    // Nothing written beyond SND.NXT, no FIN, nothing to resend (a receiver's usual
                    // case): `poll_data` would return `None` without changing anything.
                    #[cfg(debug_assertions)]
                    {
                        let mut again = self.clone();
                        debug_assert!(again.poll_data(now, header).is_none(), "no data may be sent");
                    }
                } else if let Some(ecn) = self.poll_data(now, header) {
                    let last = self.window_full_after_send() || self.pacer_holds_next(now);
                    #[cfg(debug_assertions)]
                    if last {
                        let mut again = self.clone();
                        debug_assert!(again.poll_transmit(now).is_none(), "no segment fits the window after the last");
                    }
                    return Some(Transmit { ecn, last });
                }
                if !self.poll_ack(header) {
                    return None;
                }
                // `poll_data` found nothing to send, and sending an ACK changes nothing it reads
                // (`ack_sent` clears the ACK state only): the next poll would return `None`.
                #[cfg(debug_assertions)]
                {
                    let mut again = self.clone();
                    debug_assert!(again.poll_transmit(now).is_none(), "a pure ACK is the last segment due");
                }
                // RFC 3168 §6.1.4: pure ACKs are not ECN-capable (but see `control_ecn`).
                Some(Transmit { ecn: self.control_ecn(), last: true })
            }
        }
    }

    /// RFC 8257 §3.2: the delayed ACK of the data before a CE-state change, with the previous
    /// state's ECE, goes before the ACK of the segment that changed it.
    fn poll_dctcp_prior_ack(&mut self, header: &mut TcpHeader, prior: u64) -> Transmit {
        self.write_header(header, self.snd_nxt, 0);
        header.ack = prior;
        // The previous state is the opposite of the current one (it changed).
        header.flags = if self.ecn.echo { header.flags.without(TcpFlags::ECE) } else { header.flags | TcpFlags::ECE };
        self.counters.segments_sent += 1;
        self.counters.acks_sent += 1;
        Transmit { ecn: self.control_ecn(), last: false }
    }

    /// The ECN field of a pure ACK: Not-ECT (RFC 3168 §6.1.4), or ECT(0) for DCTCP with
    /// `tcp.dctcp_ect_control` (RFC 8257 §3.5; Linux sets ECT on every packet of a DCTCP socket).
    fn control_ecn(&self) -> Ecn {
        if self.ecn.ok && self.cfg.cc == CcKind::Dctcp && self.cfg.dctcp_ect_control {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    fn poll_handshake(&mut self, now: SimTime, header: &mut TcpHeader) -> Option<Ecn> {
        if self.ecn_setup.ack_marked_synack {
            // RFC 5562 §3.2: the ACK of a CE-marked SYN-ACK carries ECE; we stay in SYN-SENT.
            self.ecn_setup.ack_marked_synack = false;
            self.write_header(header, ISS + 1, 0);
            // The peer's SYN-ACK is sequence number 0 of its space: acknowledge 1.
            header.ack = ISS + 1;
            header.flags.insert(TcpFlags::ECE);
            self.counters.segments_sent += 1;
            self.counters.acks_sent += 1;
            return Some(Ecn::NotEct);
        }
        if !self.syn_due {
            return None;
        }
        self.syn_due = false;
        if self.syn_sent_at.is_none() {
            self.syn_sent_at = Opt::some(now);
        }
        // RFC 6298 §5.1: start the timer if it is not running (the SYN occupies sequence space).
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
        self.snd_max = self.snd_max.max(ISS + 1);
        self.snd_nxt = self.snd_nxt.max(ISS + 1);
        self.write_header(header, ISS, 0);
        let mut ecn = Ecn::NotEct;
        if self.state == TcpState::SynSent {
            header.flags = TcpFlags::SYN;
            header.ack = 0;
            if self.cfg.ecn == EcnPolicy::Request {
                // RFC 3168 §6.1.1: an ECN-setup SYN sets ECE and CWR; RFC 9768 §3.1.1: AE too to ask for AccECN.
                header.flags.insert(TcpFlags::ECE | TcpFlags::CWR);
                header.ae = self.requests_accecn();
            }
            // RFC 2018 §2: offer SACK in the SYN.
            header.sack_permitted = self.cfg.offers_sack();
            if self.cfg.ecn == EcnPolicy::Request && self.cfg.cc == CcKind::Dctcp && self.cfg.dctcp_ect_control {
                // RFC 8257 §3.5 / Linux tcp_ecn_send_syn(): a DCTCP SYN is ECT(0) (INET_ECN_xmit).
                ecn = Ecn::Ect0;
            }
        } else {
            header.flags = TcpFlags::SYN | TcpFlags::ACK;
            if self.ecn.ok {
                // RFC 3168 §6.1.1: an ECN-setup SYN-ACK sets ECE only.
                header.flags.insert(TcpFlags::ECE);
            }
            if self.ecn_setup.synack_ect || self.control_ecn() == Ecn::Ect0 {
                // RFC 5562 §3: the SYN-ACK is ECN-capable (RFC 8257 §3.5: DCTCP's always is).
                ecn = Ecn::Ect0;
            }
            header.sack_permitted = self.sack_ok;
            self.accecn_write_synack(header);
        }
        self.counters.segments_sent += 1;
        Some(ecn)
    }

    /// Write every field of `h`: a segment from `seq` with `payload` bytes, ACKing RCV.NXT.
    #[inline(always)]
    fn write_header(&self, h: &mut TcpHeader, seq: u64, payload: u32) {
        // RFC 3168 §6.1.3: ECE on every ACK until CWR arrives.
        let ece = if self.ecn.echo { TcpFlags::ECE } else { TcpFlags::empty() };
        *h = TcpHeader {
            seq,
            ack: self.rcv_nxt,
            flags: TcpFlags::ACK | ece,
            // Validated below 2^32 bytes (`tcp.rcv_window`).
            window: u32::try_from(self.cfg.rcv_window).expect("a receive window below 2^32 bytes"),
            payload,
            ..TcpHeader::default()
        };
        if self.sack_ok && !self.ooo.is_empty() {
            // RFC 2018 §4: report the out-of-order blocks, most recent first.
            let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
            let n = self.recency.blocks(&self.ooo, &mut blocks);
            h.set_sack(&blocks[..n]);
        }
        if self.cfg.ecn_feedback == EcnFeedback::Accecn {
            // RFC 9768 §3.2.2.2: the ACE field (and the option) instead of RFC 3168's ECE.
            self.accecn_write(h);
        }
    }

    /// After [`TcpSocket::poll_data`] sent a segment: true only if the next poll would
    /// return `None`, because the next segment (or lone FIN) at SND.NXT does not fit the
    /// window. A shortcut of [`TcpSocket::next_seq`]'s window test, so that the sender
    /// stops polling after the segment that fills the window (most ACKs release one):
    /// sending cleared the ACK state and any retransmission due, and outside SACK recovery
    /// `next_seq` returns `None` when this test holds (restarting after idle only shrinks
    /// the window). False means only "poll again".
    #[inline]
    fn window_full_after_send(&self) -> bool {
        debug_assert!(!self.retransmit_due && !self.ack_now, "sending cleared both");
        if self.sack_recovery() || self.sack_timeout_recovery() {
            return false;
        }
        let seq = self.snd_nxt;
        let len = self.win.mss.min(self.data_end().saturating_sub(seq));
        seq + len.max(1) > self.send_limit()
    }

    /// After a data segment left and [`TcpSocket::window_full_after_send`] found room for the
    /// next: if a paced sender's next segment must wait for its departure time, arm the wake-up
    /// the next poll would arm and return true (that poll would return `None`), without that
    /// poll. It is `next_seq`'s answer known here: no retransmission due and no ACK owed (the
    /// send cleared both), no recovery with its own `NextSeg`, no ECN wait, data or a FIN at
    /// SND.NXT, and room in the window (just tested); `restart_if_idle` does nothing for a
    /// pacer. In every other case the next poll decides, as before.
    #[inline]
    fn pacer_holds_next(&mut self, now: SimTime) -> bool {
        if !matches!(self.cc, AnyCc::Bbr(_) | AnyCc::Prague(_)) {
            return false;
        }
        let Some(at) = self.cc_state.pacing_blocks(now) else { return false };
        let seq = self.snd_nxt;
        if self.retransmit_due
            || self.ack_now
            || self.ecn.wait_for_timer
            || self.ns2_sack1_recovery()
            || self.sack_recovery()
            || self.sack_timeout_recovery()
            || !self.can_send()
            || (self.data_end() <= seq && self.fin_seq() != Some(seq))
        {
            return false;
        }
        // `poll_data`'s pacing branch, which the next poll would take.
        self.wake_at = self.wake_at.earliest(Opt::some(at));
        true
    }

    /// False only if [`TcpSocket::poll_data`] would return `None`, changing nothing: no
    /// retransmission due, no SACK recovery (whose `NextSeg` may resend), nothing written
    /// beyond SND.NXT and no FIN requested (`next_seq`'s first tests, read without the
    /// sending state's lines).
    #[inline(always)]
    fn may_send_data(&self) -> bool {
        self.retransmit_due
            || self.fin_requested
            || self.snd_nxt < self.data_end()
            || self.sack_recovery()
            || self.sack_timeout_recovery()
    }

    /// Whether this endpoint may still send data or its FIN.
    fn can_send(&self) -> bool {
        matches!(
            self.state,
            TcpState::Established | TcpState::CloseWait | TcpState::FinWait1 | TcpState::Closing | TcpState::LastAck
        )
    }

    /// Where the next segment starts, or `None` if nothing may be sent now.
    fn next_seq(&mut self, now: SimTime) -> Option<u64> {
        let data_end = self.data_end();
        if self.retransmit_due {
            // RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 5 / RFC 6675 §5 step 4.3:
            // retransmit the segment at SND.UNA.
            self.retransmit_due = false;
            if self.rack_on() {
                return Some(self.rack_retransmit_seq(data_end));
            }
            return Some(self.snd_una);
        }
        if self.ecn.wait_for_timer {
            // RFC 3168 §6.1.2: at one segment, the next packet (new, or resent after a timeout)
            // waits for the retransmit timer.
            return None;
        }
        if self.ns2_sack1_recovery() {
            return self.next_seg_ns2_sack1(data_end);
        }
        if self.sack_recovery() || self.sack_timeout_recovery() {
            if self.rack_on() {
                return self.next_seg_rack(data_end);
            }
            if self.sack_recovery() {
                return self.next_seg_sack(data_end);
            }
            return self.next_seg_after_timeout(data_end);
        }
        let seq = self.snd_nxt;
        if data_end <= seq && self.fin_seq() != Some(seq) {
            // Nothing written beyond SND.NXT and no FIN due there (a receiver's usual case):
            // the sending state is not read.
            return None;
        }
        let len = self.win.mss.min(data_end.saturating_sub(seq));
        // A full segment, or the last piece of data, or a lone FIN (one sequence
        // number) must fit in the window.
        if seq + len.max(1) > self.send_limit() {
            return None;
        }
        if seq >= self.snd_max {
            self.restart_if_idle(now);
            if seq + len.max(1) > self.send_limit() {
                return None;
            }
        }
        Some(seq)
    }

    /// Segmentation offload (`tcp.tso_segments` = M > 1): whether new data at `seq` waits
    /// for an ACK so that it can leave in a larger burst, as Linux's tcp_tso_should_defer()
    /// ("a kind of TSO Nagle test") decides for each offload frame. When it does not wait, it
    /// starts a frame whose segments all leave now (`tso_left`). Only `poll_data` calls it,
    /// for a segment it is about to send; retransmissions never wait.
    #[inline(never)]
    fn tso_defers(&mut self, now: SimTime, seq: u64, data_end: u64) -> bool {
        if self.tso_left > 0 {
            // Linux tcp_write_xmit(): the rest of a frame already begun goes with it.
            self.tso_left -= 1;
            return false;
        }
        let mss = self.win.mss;
        let max_frame = u64::from(self.cfg.tso_segments) * mss;
        let window = self.win.cwnd.min(self.snd_wnd).min(self.win.max_cwnd);
        // What the windows allow from `seq` (Linux: limit = min(send_win, cong_win)).
        let limit = self.send_limit().saturating_sub(seq);
        let defer = if self.in_recovery || self.snd_una < self.recover {
            // Linux tcp_tso_should_defer(): icsk_ca_state >= TCP_CA_Recovery sends at once
            // (fast recovery, and the Loss state until the data sent before a timeout is ACKed).
            false
        } else if self.snd_una == self.snd_max {
            // Linux tcp_tso_should_defer(): no head in the retransmit queue (nothing in
            // flight, so no ACK to wait for) sends at once.
            false
        } else if self.last_data_sent.get().is_none_or(|t| now > t + SimDuration::from_millis(1)) {
            // Linux tcp_tso_should_defer(): defer only if the last write was recent (1 ms).
            false
        } else if limit >= max_frame {
            // Linux tcp_tso_should_defer(): a full-sized frame can be sent.
            false
        } else if data_end <= seq + limit {
            // Linux tcp_tso_should_defer(): the frame will get no more data (the application's
            // write ends within it).
            false
        } else {
            // Linux tcp_tso_should_defer() with sysctl_tcp_tso_win_divisor = 3 (its default):
            // send if at least a third of the window (min(snd_wnd, cwnd)) is available.
            // DEVIATION(Linux): Linux also sends at once when the oldest unacknowledged segment
            // left less than srtt/2 ago (the next ACK is far off); ecnsim keeps no send time per
            // segment, so such a frame waits for that ACK (at most an RTT) or the 1-ms rule.
            limit < window / 3
        };
        if !defer {
            // Linux tcp_write_xmit(): a frame is at most max_segs, within the windows, and
            // tcp_cwnd_test() keeps it to half the cwnd ("at least 2 GSO packets in flight");
            // here also within the data written, so that the whole frame leaves in this poll.
            // Whole segments only (a partial one goes only as the end of the data), so that
            // the count never outlives this poll.
            let segments = (limit / mss)
                .min(u64::from(self.cfg.tso_segments))
                .min(self.win.cwnd / 2 / mss)
                .min((data_end - seq).div_ceil(mss))
                .max(1);
            self.tso_left = u8::try_from(segments - 1).unwrap_or(u8::MAX);
        }
        defer
    }

    /// One past the last sequence number the windows allow: SND.UNA + min(cwnd, rwnd, max_cwnd),
    /// plus one segment per duplicate ACK of new data under Limited Transmit.
    #[inline(always)]
    fn send_limit(&self) -> u64 {
        let usable = self.snd_una + self.win.cwnd.min(self.snd_wnd).min(self.win.max_cwnd);
        if self.limited_transmit_active() && self.snd_nxt >= self.snd_max {
            // RFC 3042 §2: a new segment per duplicate ACK (at most two), within the receiver's
            // window; cwnd itself is unchanged (ns-2 send_one(): t_seqno_ <= highest_ack_ + cwnd_ + dupacks_).
            let extra = u64::from(self.dupacks) * self.win.mss;
            return usable.max(self.snd_una + (self.win.cwnd + extra).min(self.snd_wnd));
        }
        usable
    }

    /// RFC 3042 §2: between the first duplicate ACK and the threshold, new data may exceed cwnd.
    fn limited_transmit_active(&self) -> bool {
        // `dupacks` first: it is usually 0, and it sits in a line every segment touches anyway.
        self.dupacks > 0 && self.cfg.limited_transmit && !self.in_recovery && self.dupacks < self.cfg.dupack_threshold
    }

    /// The RTT hint a data segment carries, in whole ms (0 = none).
    fn rtt_hint_ms(&self) -> u32 {
        let rtt = match self.cfg.carry_rtt {
            CarryRtt::Off => return 0,
            // STUDIES.md §4 (AECN): the sender's current RTT estimate in ms, 0 without a sample.
            CarryRtt::Smoothed => self.rtt.srtt(),
            // STUDIES.md §4: the thesis carried a Vegas-style base RTT, the smallest RTT measured.
            CarryRtt::Base => self.min_rtt.get(),
        };
        // A measured RTT below 1 ms is carried as 1 ms: 0 means "no sample" to the router, and
        // AECN's lowest class starts at 0.5 ms, so 1 ms keeps such a flow in it.
        rtt.map_or(0, |d| u32::try_from(d.as_nanos() / 1_000_000).unwrap_or(u32::MAX).max(1))
    }

    /// RFC 6675 §4 NextSeg(), gated by §5 step (C): cwnd - pipe >= 1 SMSS.
    fn next_seg_sack(&mut self, data_end: u64) -> Option<u64> {
        let mss = self.win.mss;
        let t = self.scoreboard.lost_threshold(mss, self.cfg.dupack_threshold);
        if self.prr_configured() {
            // RFC 6937 §3: send what sndcnt allows on this ACK (in place of RFC 6675's step (C)); a
            // whole segment goes once sndcnt is positive, and prr_out charges the overshoot to the
            // next ACKs (Linux tcp_cwnd_reduction() counts whole packets).
            if !self.scoreboard.prr_allows(1) {
                return None;
            }
        } else if self.win.cwnd < self.scoreboard.pipe(self.snd_una, self.snd_max, t) + mss {
            return None;
        }
        let from = self.scoreboard.high_rxt().max(self.snd_una);
        let highest = self.scoreboard.highest_sacked();
        // RFC 6675 §4 NextSeg (1): the first unSACKed, lost sequence number above HighRxt.
        if let Some(s) = self.scoreboard.first_unsacked(from, t.min(highest)) {
            return Some(s);
        }
        // RFC 6675 §4 NextSeg (2): new data, if the receive window allows.
        let seq = self.snd_max;
        let len = mss.min(data_end.saturating_sub(seq));
        if len > 0 && seq + len <= self.snd_una + self.snd_wnd.min(self.win.max_cwnd) {
            return Some(seq);
        }
        // RFC 6675 §4 NextSeg (3): an unSACKed sequence number below the highest SACKed one.
        // (Rule (4), the optional rescue retransmission, is not implemented.)
        self.scoreboard.first_unsacked(from, highest)
    }

    /// What to send after a timeout that kept the scoreboard (RFC 6675 §5.1: SACK information
    /// avoids resending what the receiver holds): the first unSACKed octet above HighRxt and below
    /// the recovery point (all lost, Linux tcp_timeout_mark_lost()), then new data, while cwnd -
    /// pipe >= 1 SMSS (RFC 6675 §5 step (C); Linux tcp_xmit_retransmit_queue() against
    /// tcp_packets_in_flight(), which counts retransmissions and new data only).
    fn next_seg_after_timeout(&mut self, data_end: u64) -> Option<u64> {
        let mss = self.win.mss;
        if self.win.cwnd < self.scoreboard.pipe(self.snd_una, self.snd_max, self.recover) + mss {
            return None;
        }
        let from = self.scoreboard.high_rxt().max(self.snd_una);
        if let Some(s) = self.scoreboard.first_unsacked(from, self.recover) {
            return Some(s);
        }
        let seq = self.snd_max;
        let len = mss.min(data_end.saturating_sub(seq));
        (len > 0 && seq + len <= self.snd_una + self.snd_wnd.min(self.win.max_cwnd)).then_some(seq)
    }

    /// RFC 6582 §4.1: duplicate ACKs that do not cover more than `recover` indicate a lost
    /// segment if cwnd > SMSS and the last cumulative ACK advanced by at most 4*SMSS.
    fn ack_heuristic_says_lost(&self) -> bool {
        self.win.cwnd > self.win.mss && self.last_ack_small
    }

    /// ns-2 `Sack1` enters fast recovery (tcp-sack1.cc `dupack_action()`), at `now`.
    fn ns2_sack1_enter(&mut self, now: SimTime) {
        let mss = i64::try_from(self.win.mss).unwrap_or(i64::MAX);
        let outstanding = i64::try_from(self.snd_max - self.snd_una).unwrap_or(i64::MAX);
        // ns-2 dupack_action(): pipe_ = maxseq_ - highest_ack_ - numdupacks_; the retransmission's output()
        // adds nothing, and recv() sends nothing more on this ACK.
        self.scoreboard.ns2_enter(outstanding - i64::from(self.cfg.dupack_threshold) * mss);
        // ns-2 dupack_action(): reset_rtx_timer(1, 0) restarts the retransmit timer, no backoff.
        self.arm_rto(now);
    }

    /// An ACK of new data in ns-2 `Sack1`'s recovery (tcp-sack1.cc `recv()`); `full` if it covers `recover`.
    fn ns2_sack1_new_ack(&mut self, full: bool) {
        let mss = i64::try_from(self.win.mss).unwrap_or(i64::MAX);
        if full {
            // ns-2 recv(): the ACK that ends fast recovery sets recover_ = 0, so the next duplicate ACKs
            // may start a fast retransmit whatever they acknowledge (dupack_action(): highest_ack_ > recover_).
            self.recover = ISS;
        } else {
            // ns-2 recv(), partial_ack_ false: --pipe_ for the ACK and again for the partial ACK.
            self.scoreboard.ns2_ack(-2 * mss);
        }
    }

    /// ns-2 `Sack1`'s `send_much()` in fast recovery: what to send next, or `None`.
    fn next_seg_ns2_sack1(&mut self, data_end: u64) -> Option<u64> {
        let mss = self.win.mss;
        // ns-2 send_much(): in fast recovery, send while pipe_ < int(cwnd_) (none on the fast retransmit's ACK).
        let pipe = self.scoreboard.ns2_pipe()?;
        if pipe + i64::try_from(mss).unwrap_or(i64::MAX) > i64::try_from(self.win.cwnd).unwrap_or(i64::MAX) {
            return None;
        }
        // ns-2 scoreboard-rq.cc GetNextRetran(): the first hole above the last packet retransmitted
        // that has SACKed data above it, before any new data.
        let from = self.scoreboard.high_rxt().max(self.snd_una);
        if let Some(s) = self.scoreboard.first_unsacked(from, self.scoreboard.highest_sacked()) {
            return Some(s);
        }
        // ns-2 send_much(): new data while t_seqno_ <= highest_ack_ + wnd_.
        let seq = self.snd_max;
        let len = mss.min(data_end.saturating_sub(seq));
        (len > 0 && seq + len <= self.snd_una + self.snd_wnd.min(self.win.max_cwnd)).then_some(seq)
    }

    /// RFC 5681 §4.1: after more than one RTO without sending, cwnd <- min(IW, cwnd).
    #[inline(always)]
    fn restart_if_idle(&mut self, now: SimTime) {
        // Linux tcp_slow_start_after_idle_check(): not for an algorithm with its own cong_control (BBR, Prague).
        if !self.cfg.restart_after_idle
            || self.snd_una != self.snd_max
            || matches!(self.cc, AnyCc::Bbr(_) | AnyCc::Prague(_))
        {
            return;
        }
        if let Some(last) = self.last_data_sent.get() {
            if now.saturating_since(last) > self.rto {
                self.win.cwnd = self.win.cwnd.min(self.cfg.initial_window.bytes(self.cfg.mss));
            }
        }
    }

    #[inline]
    fn poll_data(&mut self, now: SimTime, header: &mut TcpHeader) -> Option<Ecn> {
        if !self.can_send() {
            return None;
        }
        // Only BBR and Prague pace; the others' sends leave `cc_state`'s line (the socket's last) alone.
        let paces = matches!(self.cc, AnyCc::Bbr(_) | AnyCc::Prague(_));
        let pacing_blocks = if paces { self.cc_state.pacing_blocks(now) } else { None };
        debug_assert!(paces || self.cc_state.pacing_blocks(now).is_none(), "only BBR and Prague pace");
        if let Some(at) = pacing_blocks {
            if self.wake_at.get().is_some_and(|w| w <= at) {
                // A paced sender already woken at or before its departure time: nothing may leave
                // and nothing changes before then (`next_seq` below changes nothing it would keep).
                return None;
            }
        }
        let retransmit_due = self.retransmit_due;
        let seq = self.next_seq(now)?;
        if let Some(at) = pacing_blocks {
            // A paced sender (BBR): the segment waits for its departure time, on the socket's timer.
            self.retransmit_due = retransmit_due;
            self.wake_at = self.wake_at.earliest(Opt::some(at));
            return None;
        }
        let data_end = self.data_end();
        let mut len = self.win.mss.min(data_end.saturating_sub(seq));
        let is_retransmit = seq < self.snd_max;
        // BBR sizes its own offload frames at each departure (Linux tcp_tso_autosize() from the pacing
        // rate, `Bbr::pacing_blocks`). DEVIATION(Linux): without tcp_tso_should_defer()'s wait for an
        // ACK when less than a frame fits the window.
        let bbr_frames = matches!(self.cc, AnyCc::Bbr(_));
        if !is_retransmit && len > 0 && self.cfg.tso_segments > 1 && !bbr_frames && self.tso_defers(now, seq, data_end)
        {
            return None;
        }
        if is_retransmit && self.sack_ok {
            // Never resend what the receiver has SACKed.
            len = len.min(self.scoreboard.next_sacked_after(seq).saturating_sub(seq));
        }
        let with_fin = self.fin_seq() == Some(seq + len);
        if len == 0 && !with_fin {
            return None;
        }
        let end = seq + len + u64::from(with_fin);
        let payload = u32::try_from(len).expect("len <= mss");
        self.write_header(header, seq, payload);
        let mut ecn = Ecn::NotEct;
        if len > 0 {
            header.rtt_hint_ms = self.rtt_hint_ms();
        }
        if with_fin {
            header.flags.insert(TcpFlags::FIN);
            // RFC 793 §3.5: sending our FIN.
            self.state = match self.state {
                TcpState::Established => TcpState::FinWait1,
                TcpState::CloseWait => TcpState::LastAck,
                s => s,
            };
        }
        if self.ecn.ok && len > 0 {
            // ns-2 tcp.cc output(): without a SYN, packet 0 stands in for the ECN-setup SYN and goes
            // Not-ECT (RFC 3168 §6.1.1), retransmissions included.
            let setup_stand_in = self.cfg.ecn_first_segment_not_ect && !self.cfg.handshake && seq == ISS + 1;
            let dctcp_ect = self.control_ecn() == Ecn::Ect0;
            if (!is_retransmit || self.cfg.ecn_ect_on_retransmit || dctcp_ect)
                && !setup_stand_in
                && self.accecn_sends_ect()
            {
                // RFC 3168 §6.1.2: ECT on data segments only; not on retransmissions (§6.1.5),
                // unless as ns-2's output() does. RFC 9331 §4.1: ECT(1) if the sender is an L4S one.
                // DEVIATION(Linux): tcp_prague.c 0.7 also sends SYN, SYN-ACK and pure ACKs ECT(1) (RFC 9331 Appendix A.2.1, optional; it needs AccECN's feedback of a CE-marked SYN, not modelled): control packets stay Not-ECT here (docs/models/prague.md, Deviations).
                ecn = match self.cfg.ect_codepoint {
                    EctCodepoint::Ect0 => Ecn::Ect0,
                    EctCodepoint::Ect1 => Ecn::Ect1,
                };
            }
            if self.ecn.cwr_due && (!is_retransmit || self.cfg.ecn_cwr_on_retransmit) {
                // RFC 3168 §6.1.2: CWR on the first new data segment after a reduction (ns-2 output():
                // on the next packet, retransmitted or not).
                header.flags.insert(TcpFlags::CWR);
                self.ecn.cwr_due = false;
                self.counters.cwr_sent += 1;
            }
        }
        if seq >= self.snd_max && self.limited_transmit_active() && end > self.snd_una + self.win.cwnd {
            // RFC 5681 §3.2 step 2: remember what Limited Transmit sent beyond cwnd.
            self.limited_transmit_bytes += len;
        }
        if is_retransmit && seq == self.snd_una && self.in_recovery && self.cfg.rto_rearm == RtoRearm::Linux {
            // Linux tcp_xmit_retransmit_queue(): resending the head of the retransmission queue re-arms the RTO.
            self.arm_rto(now);
        }
        if is_retransmit && (self.sack_recovery() || self.sack_timeout_recovery()) {
            self.scoreboard.set_high_rxt(self.scoreboard.high_rxt().max(end));
        }
        if self.sack_recovery() && self.prr_configured() {
            // RFC 6937 §3: prr_out += (data sent), the fast retransmission included.
            self.scoreboard.prr_sent(len);
        }
        if self.ns2_sack1_recovery() {
            // ns-2 tcp-sack1.cc send_much(): pipe_++ for each packet sent in fast recovery.
            self.scoreboard.ns2_sent(i64::try_from(self.win.mss).unwrap_or(i64::MAX));
        }
        if len > 0 {
            if self.cfg.slow_start_exit != SlowStartExit::None {
                if let Some(s) = self.cc_state.ss_exit() {
                    s.on_sent(seq, seq + len, now, is_retransmit);
                }
            }
            if paces {
                // (`CcState::on_data_sent` serves BBR and Prague only.)
                self.cc_state.on_data_sent(now, seq, seq + len, self.snd_una < self.snd_max);
            }
            if self.snd_una == self.snd_max && !is_retransmit && matches!(self.cc, AnyCc::Cubic(_)) {
                // Linux tcp_transmit_skb(): data sent with nothing in flight is CA_EVENT_TX_START.
                if let (Some(c), Some(last)) = (self.cc_state.cubic_mut(), self.last_data_sent.get()) {
                    c.on_tx_start(now, last);
                }
            }
        }
        self.snd_nxt = self.snd_nxt.max(end);
        self.snd_max = self.snd_max.max(end);
        // Counters.
        self.counters.segments_sent += 1;
        if len > 0 {
            self.counters.data_packets_sent += 1;
            self.counters.data_bytes_sent += len;
            self.last_data_sent = Opt::some(now);
        }
        if is_retransmit {
            self.counters.retransmitted_packets += 1;
            self.counters.retransmitted_bytes += len;
            // RFC 6298 §3 (Karn): never time a retransmitted segment.
            self.rtt_probe = RttProbe::NONE;
        } else if self.rtt_probe.sent.is_none() {
            self.rtt_probe = RttProbe { end, sent: Opt::some(now) };
        }
        // RFC 6298 §5.1: each time a segment with data is sent, start the timer if not running.
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
        if len > 0 && self.rack_on() {
            self.rack_after_send(now, seq, seq + len, is_retransmit);
        }
        self.ack_sent();
        Some(ecn)
    }

    /// A pure ACK, if one is due: true if written to `header`.
    #[inline(always)]
    fn poll_ack(&mut self, header: &mut TcpHeader) -> bool {
        if !self.ack_now {
            return false;
        }
        self.write_header(header, self.snd_nxt, 0);
        self.counters.segments_sent += 1;
        self.counters.acks_sent += 1;
        self.ack_sent();
        true
    }

    /// Any segment we send carries the current ACK.
    fn ack_sent(&mut self) {
        if self.quickacks != 0
            && self.quickacks != QUICKACK_NOT_STARTED
            && (self.ack_now || self.unacked_segments > 0 || self.delack_deadline.is_some())
        {
            // Linux tcp_dec_quickack_mode(): one less for each ACK that acknowledges new data
            // (an ACK was scheduled, inet_csk_ack_scheduled()).
            self.quickacks -= 1;
        }
        self.ack_now = false;
        self.unacked_segments = 0;
        self.delack_deadline = Opt::NONE;
        if self.cfg.ecn_feedback == EcnFeedback::Accecn {
            self.accecn_ack_sent();
        }
    }
}

/// Whether congestion control `cc` keeps state of its own in the socket's `cc_state` (CUBIC,
/// DCTCP, BBR and Prague). The classic algorithms are called with an empty one instead: the
/// state's pointer sits in the socket's last line, and the compiler loads it ahead of the
/// algorithm's dispatch when it is passed, so that every ACK and timeout of a Reno-family sender
/// read that line for nothing (with thousands of connections, a cache miss).
#[inline]
fn keeps_state(cc: &AnyCc) -> bool {
    matches!(cc, AnyCc::Cubic(_) | AnyCc::Dctcp(_) | AnyCc::Bbr(_) | AnyCc::Prague(_))
}

/// Add `[start, end)` to the sorted, disjoint ranges `v`, merged with every range it
/// overlaps or touches (the sender's SACK scoreboard; the reference for `tcp/ooo.rs`'s tests).
pub(crate) fn merge_range(v: &mut Vec<(u64, u64)>, start: u64, end: u64) {
    let i = v.partition_point(|&(_, e)| e < start);
    let (mut s, mut e) = (start, end);
    let mut j = i;
    while j < v.len() && v[j].0 <= e {
        s = s.min(v[j].0);
        e = e.max(v[j].1);
        j += 1;
    }
    replace_ranges(v, i..j, (s, e));
}

/// Replace the sorted ranges `v[merged]` (those a new range overlaps or touches) by the one
/// range `with` that covers them all: `v.splice(merged, [with])` without building a `Splice`
/// (most arrivals out of order extend one held range, or start a new one at the end).
fn replace_ranges(v: &mut Vec<(u64, u64)>, merged: std::ops::Range<usize>, with: (u64, u64)) {
    let std::ops::Range { start: i, end: j } = merged;
    if i == j {
        v.insert(i, with);
    } else {
        v[i] = with;
        v.drain(i + 1..j);
    }
}

#[cfg(test)]
mod tests {
    //! Packet dialogues between two sockets, driven by hand.
    use super::*;
    use crate::profile::Profile;

    const MSS: u64 = 1000;

    fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            initial_window: crate::tcp::InitialWindow::Segments(1),
            min_rto: SimDuration::from_millis(200),
            initial_rto: SimDuration::from_secs(1),
            // Plain RFC 5681 fast retransmit here; Limited Transmit has its dialogues.
            limited_transmit: false,
            ..Profile::Rfc.tcp()
        }
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Everything `s` sends now.
    fn drain(s: &mut TcpSocket, now: SimTime) -> Vec<TcpHeader> {
        std::iter::from_fn(|| s.poll_transmit(now).map(|seg| seg.header)).collect()
    }

    fn deliver(s: &mut TcpSocket, now: SimTime, hs: &[TcpHeader]) {
        for h in hs {
            s.on_segment(now, h, Ecn::NotEct);
        }
    }

    /// An initiator and responder after a clean handshake with a 100 ms RTT.
    fn established() -> (TcpSocket, TcpSocket) {
        let mut a = TcpSocket::new(cfg());
        let mut b = TcpSocket::new(cfg());
        b.listen();
        a.connect(t(0));
        let syn = drain(&mut a, t(0));
        deliver(&mut b, t(50), &syn);
        let synack = drain(&mut b, t(50));
        deliver(&mut a, t(100), &synack);
        let ack = drain(&mut a, t(100));
        deliver(&mut b, t(150), &ack);
        assert_eq!(a.state(), TcpState::Established);
        assert_eq!(b.state(), TcpState::Established);
        (a, b)
    }

    fn ack_for(rcv_nxt: u64) -> TcpHeader {
        TcpHeader {
            seq: 1,
            ack: rcv_nxt,
            flags: TcpFlags::ACK,
            window: u32::try_from(cfg().rcv_window).unwrap(),
            ..TcpHeader::default()
        }
    }

    // --- pacing (BBR) -------------------------------------------------------

    /// Linux tcp_update_skb_after_send() / tcp_pacing_check(): a paced sender's segments leave one
    /// per length / pacing rate, each on the socket's own timer; a flow with nothing to send arms
    /// no timer.
    #[test]
    fn a_bbr_sender_paces_on_its_own_timer_and_an_idle_one_arms_nothing() {
        let c = TcpConfig {
            cc: CcKind::Bbr,
            initial_window: crate::tcp::InitialWindow::Segments(10),
            rcv_window: 1 << 24,
            ..cfg()
        };
        let mut a = TcpSocket::new(c);
        let mut b = TcpSocket::new(c);
        b.listen();
        a.connect(t(0));
        let syn = drain(&mut a, t(0));
        deliver(&mut b, t(50), &syn);
        let synack = drain(&mut b, t(50));
        deliver(&mut a, t(100), &synack);
        drain(&mut a, t(100));
        // Idle: nothing to send, nothing outstanding, no timer.
        assert_eq!(a.next_deadline(), None);
        a.send_unlimited();
        // The first 10 data segments are not paced (Linux: data_segs_out >= 10).
        assert_eq!(drain(&mut a, t(150)).len(), 10);
        let window = u32::try_from(c.rcv_window).unwrap();
        for k in 1..=10u64 {
            a.on_segment(t(250), &TcpHeader { window, ..ack_for(1 + 1000 * k) }, Ecn::NotEct);
        }
        // Startup doubles the window, but the pacing releases one segment now ...
        assert!(a.cwnd() >= 20 * 1000, "cwnd {}", a.cwnd());
        assert_eq!(drain(&mut a, t(250)).len(), 1);
        let d1 = a.next_deadline().expect("the pacing timer is armed");
        assert!(d1 > t(250) && d1 < t(250) + SimDuration::from_millis(10), "{d1:?}");
        assert!(drain(&mut a, SimTime::from_nanos(d1.as_nanos() - 1)).is_empty(), "not before its time");
        // ... and the next at its departure time, the one after that a full length / rate later.
        a.on_timer(d1);
        assert_eq!(drain(&mut a, d1).len(), 1);
        let d2 = a.next_deadline().unwrap();
        let rate = a.bbr().unwrap().pacing_rate();
        let gap = u64::try_from(1000u128 * 1_000_000_000 / u128::from(rate)).unwrap();
        assert_eq!(d2.saturating_since(d1), SimDuration::from_nanos(gap));
    }

    // --- handshake ---------------------------------------------------------

    #[test]
    fn handshake_three_segments_and_rtt_sample() {
        let mut a = TcpSocket::new(cfg());
        let mut b = TcpSocket::new(cfg());
        b.listen();
        a.connect(t(0));
        let syn = drain(&mut a, t(0));
        assert_eq!(syn.len(), 1);
        assert_eq!(syn[0].flags, TcpFlags::SYN);
        assert_eq!(a.state(), TcpState::SynSent);
        deliver(&mut b, t(50), &syn);
        assert_eq!(b.state(), TcpState::SynReceived);
        let synack = drain(&mut b, t(50));
        assert_eq!(synack[0].flags, TcpFlags::SYN | TcpFlags::ACK);
        assert_eq!(synack[0].ack, 1);
        deliver(&mut a, t(100), &synack);
        assert!(a.take_events().connected);
        assert_eq!(a.rtt().srtt(), Some(SimDuration::from_millis(100)));
        let ack = drain(&mut a, t(100));
        assert_eq!(ack.len(), 1);
        assert_eq!((ack[0].flags, ack[0].ack), (TcpFlags::ACK, 1));
        deliver(&mut b, t(150), &ack);
        assert_eq!(b.state(), TcpState::Established);
        assert_eq!(b.rtt().srtt(), Some(SimDuration::from_millis(100)));
    }

    #[test]
    fn syn_sent_lost_syn_is_resent_after_initial_rto_with_backoff() {
        let mut a = TcpSocket::new(cfg());
        a.connect(t(0));
        assert_eq!(drain(&mut a, t(0)).len(), 1); // lost
        assert_eq!(a.next_deadline(), Some(t(1000)));
        a.on_timer(t(1000));
        let syn = drain(&mut a, t(1000));
        assert_eq!(syn.len(), 1);
        assert!(syn[0].flags.contains(TcpFlags::SYN));
        assert_eq!(a.counters.syn_retransmits, 1);
        // RFC 6298 §5.5: doubled.
        assert_eq!(a.next_deadline(), Some(t(3000)));
    }

    #[test]
    fn syn_sent_retransmitted_syn_gives_no_sample_and_rto_of_3s() {
        let mut a = TcpSocket::new(cfg());
        let mut b = TcpSocket::new(cfg());
        b.listen();
        a.connect(t(0));
        drain(&mut a, t(0)); // lost
        a.on_timer(t(1000));
        let syn = drain(&mut a, t(1000));
        deliver(&mut b, t(1050), &syn);
        deliver(&mut a, t(1100), &drain(&mut b, t(1050)));
        assert_eq!(a.state(), TcpState::Established);
        assert_eq!(a.rtt().srtt(), None);
        // RFC 6298 §5.7.
        assert_eq!(a.rtt().rto(), SimDuration::from_secs(3));
    }

    #[test]
    fn syn_received_lost_synack_is_resent_on_timer_and_on_duplicate_syn() {
        let mut a = TcpSocket::new(cfg());
        let mut b = TcpSocket::new(cfg());
        b.listen();
        a.connect(t(0));
        deliver(&mut b, t(50), &drain(&mut a, t(0)));
        drain(&mut b, t(50)); // SYN-ACK lost
        assert_eq!(b.next_deadline(), Some(t(1050)));
        // The initiator's timer fires first and its SYN is answered at once.
        a.on_timer(t(1000));
        deliver(&mut b, t(1050), &drain(&mut a, t(1000)));
        let synack = drain(&mut b, t(1050));
        assert_eq!(synack.len(), 1);
        assert_eq!(synack[0].flags, TcpFlags::SYN | TcpFlags::ACK);
        // The responder's own timer also resends.
        b.on_timer(t(1050));
        assert_eq!(drain(&mut b, t(1050)).len(), 1);
        assert_eq!(b.counters.syn_retransmits, 1);
    }

    #[test]
    fn syn_sent_gives_up_after_syn_retries() {
        let mut a = TcpSocket::new(TcpConfig { syn_retries: 2, ..cfg() });
        a.connect(t(0));
        drain(&mut a, t(0));
        for _ in 0..3 {
            let d = a.next_deadline().unwrap();
            a.on_timer(d);
            drain(&mut a, d);
        }
        assert_eq!(a.state(), TcpState::Closed);
        assert!(a.take_events().failed);
        assert_eq!(a.counters.syn_retransmits, 2);
    }

    // --- data transfer and Reno --------------------------------------------

    #[test]
    fn established_sends_initial_window_then_slow_starts() {
        let (mut a, mut b) = established();
        a.send(10 * MSS);
        let w1 = drain(&mut a, t(100));
        assert_eq!(w1.len(), 1, "IW = 1");
        deliver(&mut b, t(150), &w1);
        let acks = drain(&mut b, t(150));
        assert_eq!(acks.len(), 1);
        deliver(&mut a, t(200), &acks);
        assert_eq!(a.cwnd(), 2 * MSS);
        assert_eq!(drain(&mut a, t(200)).len(), 2);
    }

    #[test]
    fn established_marks_the_segment_that_fills_the_window_last() {
        let (mut a, mut b) = established();
        a.send(10 * MSS);
        let mut h = TcpHeader::default();
        // IW = 1: the one segment fills the window.
        assert!(a.poll_transmit_into(t(100), &mut h).is_some_and(|tx| tx.last));
        deliver(&mut b, t(150), &[h]);
        let acks = drain(&mut b, t(150));
        deliver(&mut a, t(200), &acks);
        // cwnd = 2: the first of two segments is not the last, the second is.
        let lasts: Vec<bool> = std::iter::from_fn(|| a.poll_transmit_into(t(200), &mut h).map(|tx| tx.last)).collect();
        assert_eq!(lasts, [false, true]);
        // The window is the only test: the segment that ends the data, the window still open,
        // is not marked (the next poll finds nothing).
        let (mut a, _b) = established();
        a.send(MSS / 2);
        assert!(a.poll_transmit_into(t(100), &mut h).is_some_and(|tx| !tx.last));
        assert!(a.poll_transmit_into(t(100), &mut h).is_none());
    }

    #[test]
    fn established_three_dupacks_fast_retransmit_and_recovery() {
        let (mut a, _b) = established();
        a.send(100 * MSS);
        a.win.cwnd = 10 * MSS;
        let segs = drain(&mut a, t(200));
        assert_eq!(segs.len(), 10);
        // Segment 1 (seq 1) lost: three duplicate ACKs for 1.
        for i in 0..2 {
            a.on_segment(t(300 + i), &ack_for(1), Ecn::NotEct);
            assert!(drain(&mut a, t(300 + i)).is_empty());
        }
        a.on_segment(t(302), &ack_for(1), Ecn::NotEct);
        assert!(a.in_recovery());
        assert_eq!(a.counters.fast_retransmits, 1);
        assert_eq!(a.ssthresh(), 5 * MSS);
        assert_eq!(a.cwnd(), 8 * MSS);
        let rtx = drain(&mut a, t(302));
        assert_eq!(rtx.len(), 1);
        assert_eq!(rtx[0].seq, 1);
        assert_eq!(a.counters.retransmitted_packets, 1);
        // More duplicate ACKs inflate the window: 8 -> 11 segments allows new data
        // beyond the 10 outstanding.
        for i in 0..3 {
            a.on_segment(t(303 + i), &ack_for(1), Ecn::NotEct);
        }
        assert_eq!(a.cwnd(), 11 * MSS);
        assert_eq!(drain(&mut a, t(306)).len(), 1);
        // The ACK of the retransmission deflates to ssthresh and exits recovery.
        a.on_segment(t(400), &ack_for(1 + 10 * MSS), Ecn::NotEct);
        assert!(!a.in_recovery());
        assert_eq!(a.cwnd(), 5 * MSS);
    }

    #[test]
    fn established_rto_goes_back_to_one_segment_and_resends_from_snd_una() {
        let (mut a, _b) = established();
        a.send(100 * MSS);
        a.win.cwnd = 4 * MSS;
        drain(&mut a, t(200));
        let deadline = a.next_deadline().unwrap();
        a.on_timer(deadline);
        assert_eq!(a.counters.rto_count, 1);
        assert_eq!(a.cwnd(), MSS);
        assert_eq!(a.ssthresh(), 2 * MSS);
        let rtx = drain(&mut a, deadline);
        assert_eq!(rtx.len(), 1);
        assert_eq!(rtx[0].seq, 1);
        // Backed off: the next deadline is twice the RTO away.
        let rto = a.rtt().rto();
        assert_eq!(a.next_deadline(), Some(deadline + rto));
    }

    #[test]
    fn receiver_buffers_out_of_order_and_acks_cumulatively() {
        let (_a, mut b) = established();
        let seg = |seq: u64| TcpHeader {
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 1 << 20,
            payload: 1000,
            ..TcpHeader::default()
        };
        b.on_segment(t(200), &seg(1001), Ecn::NotEct);
        b.on_segment(t(200), &seg(2001), Ecn::NotEct);
        let dups = drain(&mut b, t(200));
        assert_eq!(dups.last().unwrap().ack, 1, "duplicate ACK for the hole");
        // Out-of-order data counts as received when it arrives, as delivered once the hole is filled.
        assert_eq!((b.counters.bytes_received, b.counters.bytes_delivered), (2000, 0));
        b.on_segment(t(210), &seg(1), Ecn::NotEct);
        let ack = drain(&mut b, t(210));
        assert_eq!(ack.last().unwrap().ack, 3001);
        assert_eq!(b.counters.bytes_delivered, 3000);
        assert_eq!(b.counters.bytes_received, 3000);
        // A duplicate of delivered data is not delivered (or received) twice.
        b.on_segment(t(220), &seg(1001), Ecn::NotEct);
        assert_eq!((b.counters.bytes_received, b.counters.bytes_delivered), (3000, 3000));
    }

    #[test]
    fn receiver_counts_each_byte_received_once_whatever_the_overlaps() {
        let (_a, mut b) = established();
        let seg = |seq: u64, payload: u32| TcpHeader {
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 1 << 20,
            payload,
            ..TcpHeader::default()
        };
        // Held: [2001, 3001) and [4001, 5001); then a segment spanning both and the gap between.
        b.on_segment(t(200), &seg(2001, 1000), Ecn::NotEct);
        b.on_segment(t(200), &seg(4001, 1000), Ecn::NotEct);
        b.on_segment(t(200), &seg(2501, 2000), Ecn::NotEct);
        assert_eq!(b.counters.bytes_received, 3000);
        // In order, overlapping what is held: only [1, 2001) is new.
        b.on_segment(t(210), &seg(1, 2500), Ecn::NotEct);
        assert_eq!((b.counters.bytes_received, b.counters.bytes_delivered), (5000, 5000));
        // Beyond the receive window: discarded, not received.
        let far = 1 + cfg().rcv_window + 5000;
        b.on_segment(t(220), &seg(far, 1000), Ecn::NotEct);
        assert_eq!(b.counters.bytes_received, 5000);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_on_timer() {
        let mut c = cfg();
        c.delayed_ack = true;
        let mut a = TcpSocket::new(c);
        let mut b = TcpSocket::new(c);
        b.listen();
        a.connect(t(0));
        deliver(&mut b, t(50), &drain(&mut a, t(0)));
        deliver(&mut a, t(100), &drain(&mut b, t(50)));
        deliver(&mut b, t(150), &drain(&mut a, t(100)));
        let seg = |seq: u64| TcpHeader {
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 1 << 20,
            payload: 1000,
            ..TcpHeader::default()
        };
        b.on_segment(t(200), &seg(1), Ecn::NotEct);
        assert!(drain(&mut b, t(200)).is_empty());
        assert_eq!(b.next_deadline(), Some(t(400)));
        b.on_segment(t(210), &seg(1001), Ecn::NotEct);
        assert_eq!(drain(&mut b, t(210)).len(), 1);
        b.on_segment(t(300), &seg(2001), Ecn::NotEct);
        assert!(drain(&mut b, t(300)).is_empty());
        b.on_timer(t(500));
        assert_eq!(drain(&mut b, t(500))[0].ack, 3001);
    }

    #[test]
    fn close_sends_fin_after_data_and_both_sides_close() {
        let (mut a, mut b) = established();
        a.send(1500);
        a.close();
        a.win.cwnd = 10 * MSS;
        let segs = drain(&mut a, t(200));
        assert_eq!(segs.len(), 2);
        assert!(segs[1].flags.contains(TcpFlags::FIN), "FIN rides on the last data segment");
        assert_eq!(a.state(), TcpState::FinWait1);
        deliver(&mut b, t(250), &segs);
        assert!(b.take_events().peer_closed);
        assert_eq!(b.state(), TcpState::CloseWait);
        assert_eq!(b.counters.bytes_delivered, 1500);
        b.close();
        let out = drain(&mut b, t(250));
        assert!(out.iter().any(|h| h.flags.contains(TcpFlags::FIN)));
        assert_eq!(b.state(), TcpState::LastAck);
        deliver(&mut a, t(300), &out);
        assert_eq!(a.state(), TcpState::TimeWait);
        assert!(a.take_events().all_acked);
        deliver(&mut b, t(350), &drain(&mut a, t(300)));
        assert_eq!(b.state(), TcpState::Closed);
    }

    // --- ECN without a handshake (ns-2 one-way TCP) ---------------------------

    /// ns-2's one-way TCP sends packet 0 as the stand-in for an ECN-setup SYN: Not-ECT, also
    /// when resent (ns-2.35 hetero trace: packet 0 goes with flags `C------`, every other
    /// packet `------N`, retransmissions included).
    #[test]
    fn no_handshake_first_segment_is_not_ect_under_ns2_2001() {
        let ecn_of = |cfg: TcpConfig| {
            let mut a = TcpSocket::new(cfg);
            a.assume_negotiated(true, false, 1 << 20);
            a.connect(t(0));
            a.send_unlimited();
            let first = a.poll_transmit(t(0)).unwrap();
            assert!(a.poll_transmit(t(0)).is_none(), "initial window of one");
            // The timer resends it (6 s initial RTO), then an ACK opens the window to two.
            a.on_timer(t(6000));
            let resent = a.poll_transmit(t(6000)).unwrap();
            assert_eq!(resent.header.seq, first.header.seq);
            a.on_segment(t(6100), &ack_for(1 + MSS), Ecn::NotEct);
            let next = a.poll_transmit(t(6100)).unwrap();
            assert_eq!(next.header.seq, 1 + MSS);
            (first.ecn, resent.ecn, next.ecn)
        };
        let ns2 = TcpConfig { ecn: EcnPolicy::Request, ..Profile::Ns2_2001.tcp() };
        assert_eq!(ecn_of(ns2), (Ecn::NotEct, Ecn::NotEct, Ecn::Ect0));
        // Off: every data segment ECT (the retransmission too, as ns-2's output() sends it).
        let off = TcpConfig { ecn_first_segment_not_ect: false, ..ns2 };
        assert_eq!(ecn_of(off), (Ecn::Ect0, Ecn::Ect0, Ecn::Ect0));
    }

    /// ns-2's one-way TCP sends its whole initial window (`windowInit_`) at once; without a
    /// handshake the peer's window is the one its SYN-ACK would have advertised, not one segment.
    #[test]
    fn no_handshake_first_flight_is_the_initial_window() {
        for iw in [1_u32, 2, 4] {
            let cfg = TcpConfig { initial_window: crate::tcp::InitialWindow::Segments(iw), handshake: false, ..cfg() };
            let mut a = TcpSocket::new(cfg);
            a.assume_negotiated(false, false, cfg.rcv_window);
            a.connect(t(0));
            a.send_unlimited();
            let flight = std::iter::from_fn(|| a.poll_transmit(t(0))).count();
            assert_eq!(flight, iw as usize, "IW {iw}");
        }
    }

    // ------------------------------------------------------------------
    // Layout
    // ------------------------------------------------------------------

    /// The fields each kind of segment touches sit in the lines the type's doc claims: a data
    /// segment at the receiver (and the ACK it sends) lines 0 to 2; an ACK at the sender (and
    /// the data it sends) those and lines 4 and 5.
    #[test]
    fn the_per_segment_fields_sit_in_the_lines_claimed() {
        use std::mem::{align_of, offset_of, size_of};

        use crate::memory::field;
        assert_eq!(align_of::<TcpSocket>(), 64);
        let counters = offset_of!(TcpSocket, counters);
        let hot_counters = offset_of!(TcpCounters, ce_received) + 8;
        let common = [
            field!(TcpSocket, cfg),
            field!(TcpSocket, snd_una),
            field!(TcpSocket, snd_nxt),
            field!(TcpSocket, snd_max),
            field!(TcpSocket, snd_wnd),
            field!(TcpSocket, rcv_nxt),
            field!(TcpSocket, state),
            field!(TcpSocket, ecn),
            field!(TcpSocket, events),
            field!(TcpSocket, sack_ok),
            field!(TcpSocket, ack_now),
            field!(TcpSocket, unlimited),
            field!(TcpSocket, fin_requested),
            field!(TcpSocket, in_recovery),
            field!(TcpSocket, retransmit_due),
        ];
        let timers_and_receiving = [
            field!(TcpSocket, rto_deadline),
            field!(TcpSocket, delack_deadline),
            field!(TcpSocket, wake_at),
            field!(TcpSocket, peer_fin),
            field!(TcpSocket, ooo),
            field!(TcpSocket, unacked_segments),
            field!(TcpSocket, dupacks),
        ];
        let written_and_counted = [field!(TcpSocket, app_end), ("per-segment counters", counters, hot_counters)];
        let sending = [field!(TcpSocket, win), field!(TcpSocket, rtt_probe)];
        let sending_2 = [
            field!(TcpSocket, last_data_sent),
            field!(TcpSocket, limited_transmit_bytes),
            field!(TcpSocket, recover),
            field!(TcpSocket, ecn_reduction),
            field!(TcpSocket, partial_acks),
            field!(TcpSocket, cc),
            field!(TcpSocket, last_ack_small),
            field!(TcpSocket, tso_left),
            field!(TcpSocket, rto),
        ];
        for (fields, line) in [
            (&common[..], 0),
            (&timers_and_receiving[..], 1),
            (&written_and_counted[..], 2),
            (&sending[..], 4),
            (&sending_2[..], 5),
        ] {
            crate::memory::assert_in_line(fields, line);
        }
        // The RTT estimator starts the next line; what only the handshake, SACK and RTT
        // samples use comes after it.
        let rtt = offset_of!(TcpSocket, rtt);
        assert_eq!(rtt, 6 * 64);
        for cold in [
            offset_of!(TcpSocket, syn_due),
            offset_of!(TcpSocket, scoreboard),
            offset_of!(TcpSocket, recency),
            offset_of!(TcpSocket, min_rtt),
        ] {
            assert!(cold >= rtt + size_of::<RttEstimator>());
        }
        // The SACK state is out of line (8 bytes each until first used), so the socket is
        // eight lines: an idle connection's two endpoints hold 2 x 576 bytes.
        assert_eq!(size_of::<Scoreboard>(), 8);
        assert_eq!(size_of::<SackRecency>(), 8);
        assert_eq!(size_of::<TcpSocket>(), 8 * 64);
    }

    // --- header prediction ---------------------------------------------------

    /// A random dialogue between two sockets over a lossy, reordering, marking path; at every
    /// arrival the receiving socket is cloned: one copy takes the segment by header prediction
    /// (when it applies), the other by the slow path, and the two must agree in every field.
    /// Returns how many arrivals were predicted and how many there were.
    fn predicted_against_slow(
        profile: Profile,
        cc: CcKind,
        ecn: bool,
        sack_data: bool,
        ops: &[(u8, u8)],
    ) -> (u32, u32) {
        use std::collections::VecDeque;
        let cfg = TcpConfig {
            cc,
            ecn: if ecn { EcnPolicy::Request } else { EcnPolicy::Off },
            rcv_window: 20 * MSS,
            max_cwnd: 16,
            ..TcpConfig { mss: 1000, ..profile.tcp() }
        };
        let mut ends = [TcpSocket::new(cfg), TcpSocket::new(cfg)];
        ends[1].listen();
        if !cfg.handshake {
            // As the simulation opens a connection without a handshake (ns-2's one-way TCP).
            let ok = (ecn, cfg.offers_sack());
            ends.iter_mut().for_each(|e| e.assume_negotiated(ok.0, ok.1, cfg.rcv_window));
        }
        ends[0].connect(t(0));
        ends[0].send(200 * MSS);
        if sack_data {
            // Data both ways, so that data segments also acknowledge new data.
            ends[1].send(50 * MSS);
        }
        let mut wires: [VecDeque<Segment>; 2] = [VecDeque::new(), VecDeque::new()];
        let mut now = 0u64;
        let (mut predicted, mut arrivals) = (0, 0);
        let flush = |ends: &mut [TcpSocket; 2], wires: &mut [VecDeque<Segment>; 2], now: u64| {
            for i in 0..2 {
                while let Some(seg) = ends[i].poll_transmit(t(now)) {
                    wires[i].push_back(seg);
                }
            }
        };
        flush(&mut ends, &mut wires, now);
        for &(op, x) in ops {
            match op % 8 {
                // Deliver the next segment from end `from`, perhaps lost, late or CE-marked.
                0..=5 => {
                    let from = usize::from(op % 8 >= 4);
                    let Some(mut seg) = wires[from].pop_front() else { continue };
                    if x % 13 == 0 {
                        continue; // lost
                    }
                    if x % 11 == 0 && !wires[from].is_empty() {
                        wires[from].insert(1, seg); // overtaken by the next
                        continue;
                    }
                    if x % 7 == 0 && seg.ecn.is_ect() {
                        seg.ecn = Ecn::Ce;
                    }
                    // Now and then a segment no real peer would send: an ACK of unsent data,
                    // data overlapping what arrived, another window.
                    match x % 29 {
                        3 => seg.header.ack += MSS,
                        5 => seg.header.seq = seg.header.seq.saturating_sub(MSS / 2),
                        8 => seg.header.window /= 2,
                        _ => {}
                    }
                    now += u64::from(x % 4);
                    let to = &mut ends[1 - from];
                    let mut fast = to.clone();
                    let mut slow = to.clone();
                    slow.on_segment_slow(t(now), &seg.header, seg.ecn);
                    if fast.on_predicted_segment(t(now), &seg.header, seg.ecn) {
                        predicted += 1;
                        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "segment {:?}", seg.header);
                    }
                    arrivals += 1;
                    to.on_segment(t(now), &seg.header, seg.ecn);
                    assert_eq!(format!("{to:?}"), format!("{slow:?}"));
                }
                // Time passes; timers fire.
                6 => {
                    now += u64::from(x) * 4;
                    for end in &mut ends {
                        if end.next_deadline().is_some_and(|d| d <= t(now)) {
                            end.on_timer(t(now));
                        }
                    }
                }
                // The application writes more, or closes.
                _ => {
                    let i = usize::from(x % 2);
                    if x % 5 == 0 {
                        ends[i].close();
                    } else if !ends[i].fin_requested {
                        ends[i].send(u64::from(x) * 100);
                    }
                }
            }
            flush(&mut ends, &mut wires, now);
        }
        (predicted, arrivals)
    }

    #[test]
    fn replace_ranges_is_a_splice_of_one() {
        let v: Vec<(u64, u64)> = vec![(10, 20), (30, 40), (50, 60), (70, 80)];
        for i in 0..=v.len() {
            for j in i..=v.len() {
                let (mut a, mut b) = (v.clone(), v.clone());
                a.splice(i..j, std::iter::once((1, 2)));
                replace_ranges(&mut b, i..j, (1, 2));
                assert_eq!(a, b, "{i}..{j}");
            }
        }
    }

    #[test]
    fn merge_range_keeps_disjoint_sorted_ranges_covering_every_byte_added() {
        // Every insertion order of ranges within 0..12, against a byte map: the ranges
        // stay sorted and disjoint, touching ones merged, and cover exactly the bytes added.
        let ranges: Vec<(u64, u64)> = (0..12).flat_map(|s| (s + 1..=12).map(move |e| (s, e))).collect();
        for (k, &first) in ranges.iter().enumerate() {
            for &second in &ranges[k % 7..] {
                for &third in ranges.iter().step_by(5) {
                    let mut v = Vec::new();
                    let mut bytes = [false; 12];
                    for (s, e) in [first, second, third] {
                        merge_range(&mut v, s, e);
                        bytes[s as usize..e as usize].iter_mut().for_each(|b| *b = true);
                    }
                    assert!(v.windows(2).all(|w| w[0].1 < w[1].0), "{v:?}");
                    let mut covered = [false; 12];
                    for &(s, e) in &v {
                        covered[s as usize..e as usize].iter_mut().for_each(|b| *b = true);
                    }
                    assert_eq!(covered, bytes, "{first:?} {second:?} {third:?} -> {v:?}");
                }
            }
        }
    }

    #[test]
    fn header_prediction_leaves_data_in_ns2_sack1_recovery_to_the_slow_path() {
        // A case the property test below found (shrunk): a data segment acknowledging nothing
        // new in ns-2 Sack1's recovery took the fast path, which left pipe_ one packet high.
        #[rustfmt::skip]
        let ops: Vec<(u8, u8)> = vec![(6, 252), (2, 201), (4, 23), (0, 99), (2, 9), (1, 211), (4, 34), (7, 91), (4, 221), (6, 85), (4, 94), (2, 58), (1, 129), (5, 24), (1, 103), (1, 34), (2, 6), (4, 66), (5, 187), (5, 189), (5, 49), (5, 83), (1, 62), (4, 80), (5, 139), (4, 248), (1, 200), (4, 96), (4, 147), (4, 143), (6, 165), (3, 171), (3, 33), (6, 120), (0, 150), (3, 145), (2, 186), (4, 38), (4, 131), (7, 89), (3, 248), (1, 62), (1, 136), (2, 170), (3, 90), (4, 39), (4, 62), (1, 102), (5, 136), (5, 171), (7, 199), (3, 35), (4, 23), (0, 41), (4, 174), (1, 39), (5, 99), (0, 9), (4, 37), (5, 72), (0, 200), (5, 111), (4, 14), (5, 200), (2, 90), (1, 5), (2, 78), (3, 147), (3, 212), (3, 0), (5, 200), (4, 109), (5, 153), (5, 1), (5, 101), (0, 107), (3, 113), (5, 49), (5, 100), (5, 189), (4, 197), (0, 134), (0, 61), (4, 58), (1, 159), (5, 134), (1, 1), (4, 113), (5, 131), (4, 73), (5, 87), (1, 31), (4, 223), (5, 242), (1, 217), (7, 64), (0, 43), (5, 248), (7, 24), (3, 186), (1, 195), (3, 163), (1, 152), (6, 46), (3, 70), (1, 95), (7, 99), (2, 14), (7, 27), (1, 46), (6, 197), (2, 143), (2, 208), (2, 207), (7, 238), (3, 23), (3, 12), (5, 63), (6, 112), (6, 187), (1, 186), (1, 152), (4, 53), (7, 69), (7, 125), (0, 45), (6, 141), (3, 112), (0, 64), (1, 104), (4, 234), (5, 161), (7, 15), (5, 151), (4, 79), (0, 124), (0, 64), (6, 150), (0, 190), (2, 91), (7, 234), (1, 176), (3, 16), (6, 253), (0, 80), (0, 122), (5, 252), (1, 164), (6, 225)];
        predicted_against_slow(Profile::Ns2_2001, CcKind::Sack, false, false, &ops);
    }
    #[test]
    fn header_prediction_takes_most_segments_of_a_clean_transfer() {
        let ops: Vec<(u8, u8)> = (0..400).map(|i| (if i % 2 == 0 { 0 } else { 4 }, 1)).collect();
        let (predicted, arrivals) = predicted_against_slow(Profile::Rfc, CcKind::Reno, false, false, &ops);
        assert!(arrivals > 300 && predicted * 10 > arrivals * 9, "{predicted} of {arrivals} predicted");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]
        #[test]
        fn header_prediction_gives_the_slow_paths_state(
            profile in proptest::sample::select(vec![Profile::Rfc, Profile::Ns2_2001, Profile::Linux]),
            cc in proptest::sample::select(vec![CcKind::Tahoe, CcKind::Reno, CcKind::Newreno, CcKind::Sack, CcKind::Cubic, CcKind::Dctcp]),
            ecn in proptest::bool::ANY,
            both_ways in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..8, 0u8..=255), 1..600),
        ) {
            predicted_against_slow(profile, cc, ecn, both_ways, &ops);
        }
    }
}
