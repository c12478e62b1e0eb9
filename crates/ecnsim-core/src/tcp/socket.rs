//! One TCP endpoint: handshake, data transfer both ways, loss recovery,
//! retransmission timer, delayed ACKs and close.
//!
//! Read first:
//! - RFC 793 §3.4 (handshake), §3.5 (close), §3.9 (segment arrival).
//! - RFC 5681 (congestion control: §2 duplicate ACK, §3.1 slow start,
//!   §3.2 fast retransmit / fast recovery, §4.2 generating ACKs).
//! - RFC 6298 (retransmission timer: §5 managing the timer, §3 Karn).
//! - RFC 1122 §4.2.3.2 (delayed ACKs).
//!
//! Sans-IO: every entry point takes `now`; the socket returns segments from
//! [`TcpSocket::poll_transmit`] and reports its next deadline. Sequence
//! numbers are absolute `u64` byte offsets: the SYN is 0, data starts at 1.
//! Application data is modelled as byte counts (no payload bytes are stored).

use crate::packet::{Ecn, TcpFlags, TcpHeader};
use crate::tcp::cc::{AnyCc, CongestionControl, LossResponse, RecoveryAck, Window};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::state::TcpState;
use crate::tcp::TcpConfig;
use crate::time::{SimDuration, SimTime};

/// Initial send sequence number: absolute sequence space starts at 0.
const ISS: u64 = 0;

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

/// Per-endpoint counters. Bytes are payload bytes; packets are segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpCounters {
    /// Every segment sent (data, pure ACKs, SYN, FIN).
    pub segments_sent: u64,
    /// Segments carrying payload, retransmissions included.
    pub data_packets_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Segments carrying retransmitted payload (or a retransmitted FIN).
    pub retransmitted_packets: u64,
    /// Payload bytes retransmitted.
    pub retransmitted_bytes: u64,
    /// Payload bytes delivered in order to the application (goodput).
    pub bytes_delivered: u64,
    /// Retransmission-timer expirations with data outstanding.
    pub rto_count: u64,
    /// Fast retransmits (duplicate-ACK threshold reached).
    pub fast_retransmits: u64,
    /// SYN (initiator) or SYN-ACK (responder) retransmissions.
    pub syn_retransmits: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
}

/// A segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The TCP header (payload length inside).
    pub header: TcpHeader,
    /// The IP ECN field to send with.
    pub ecn: Ecn,
}

/// One endpoint of a TCP connection.
#[derive(Clone, Debug)]
pub struct TcpSocket {
    cfg: TcpConfig,
    state: TcpState,

    // --- send side (RFC 793 names) ---
    /// Oldest unacknowledged sequence number (SND.UNA).
    snd_una: u64,
    /// Next sequence number to send (SND.NXT); moves back on a timeout (go-back-N).
    snd_nxt: u64,
    /// One past the highest sequence number ever sent.
    snd_max: u64,
    /// The peer's advertised window (SND.WND).
    snd_wnd: u64,
    /// One past the last byte the application has written (data starts at 1).
    app_end: u64,
    /// The application writes without end.
    unlimited: bool,
    /// The application has closed: a FIN follows the data.
    fin_requested: bool,
    /// Congestion window state.
    win: Window,
    cc: AnyCc,
    /// Consecutive duplicate ACKs.
    dupacks: u32,
    /// In fast recovery: the recovery point ("recover", RFC 6582), else None.
    recovery: Option<u64>,
    /// Fast retransmit of the segment at SND.UNA is due.
    retransmit_due: bool,
    rtt: RttEstimator,
    /// Karn: the one segment being timed, as (end sequence, send time).
    rtt_probe: Option<(u64, SimTime)>,
    /// When the retransmission timer expires, if running.
    rto_deadline: Option<SimTime>,
    /// SYN or SYN-ACK needs (re)sending.
    syn_due: bool,
    /// When our SYN / SYN-ACK was first sent (handshake RTT sample).
    syn_sent_at: Option<SimTime>,
    /// SYN / SYN-ACK retransmissions so far.
    syn_retries: u32,

    // --- receive side ---
    /// Next sequence number expected (RCV.NXT).
    rcv_nxt: u64,
    /// Out-of-order data held, as sorted disjoint `[start, end)` ranges.
    ooo: Vec<(u64, u64)>,
    /// Sequence number of the peer's FIN, once seen.
    peer_fin: Option<u64>,
    /// An ACK must go out now.
    ack_now: bool,
    /// Full segments received since our last ACK (delayed ACKs).
    unacked_segments: u32,
    /// When the delayed ACK must go out, if one is pending.
    delack_deadline: Option<SimTime>,

    events: SocketEvents,
    /// Counters of this endpoint.
    pub counters: TcpCounters,
}

impl TcpSocket {
    /// A closed endpoint with parameters `cfg`.
    #[must_use]
    pub fn new(cfg: TcpConfig) -> Self {
        let mss = u64::from(cfg.mss);
        TcpSocket {
            state: TcpState::Closed,
            snd_una: ISS,
            snd_nxt: ISS,
            snd_max: ISS,
            snd_wnd: mss,
            app_end: ISS + 1,
            unlimited: false,
            fin_requested: false,
            win: Window {
                // RFC 5681 §3.1: IW, in segments here (RFC 3390 / 6928 values come from the profile).
                cwnd: u64::from(cfg.initial_window) * mss,
                // RFC 5681 §3.1: the initial value of ssthresh SHOULD be set arbitrarily high.
                ssthresh: u64::MAX / 2,
                mss,
                max_cwnd: u64::from(cfg.max_cwnd) * mss,
            },
            cc: AnyCc::new(cfg.cc),
            dupacks: 0,
            recovery: None,
            retransmit_due: false,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity),
            rtt_probe: None,
            rto_deadline: None,
            syn_due: false,
            syn_sent_at: None,
            syn_retries: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            peer_fin: None,
            ack_now: false,
            unacked_segments: 0,
            delack_deadline: None,
            events: SocketEvents::default(),
            counters: TcpCounters::default(),
            cfg,
        }
    }

    // ------------------------------------------------------------------
    // Application interface
    // ------------------------------------------------------------------

    /// Active open: send a SYN (RFC 793 §3.4).
    pub fn connect(&mut self, now: SimTime) {
        debug_assert_eq!(self.state, TcpState::Closed);
        let _ = now;
        self.state = TcpState::SynSent;
        self.syn_due = true;
    }

    /// Passive open: wait for a SYN.
    pub fn listen(&mut self) {
        debug_assert_eq!(self.state, TcpState::Closed);
        self.state = TcpState::Listen;
    }

    /// The application writes `bytes` more bytes.
    pub fn send(&mut self, bytes: u64) {
        debug_assert!(!self.fin_requested, "send after close");
        self.app_end += bytes;
    }

    /// The application writes without end (an unlimited bulk source).
    pub fn send_unlimited(&mut self) {
        self.unlimited = true;
    }

    /// The application is done writing: a FIN follows the data.
    pub fn close(&mut self) {
        if !self.unlimited {
            self.fin_requested = true;
        }
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
    /// True while in fast recovery.
    #[must_use]
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }
    /// Bytes sent and not yet acknowledged (FlightSize of RFC 5681).
    #[must_use]
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
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

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// The earliest instant at which [`TcpSocket::on_timer`] has work.
    #[must_use]
    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.rto_deadline, self.delack_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Run every timer due at `now`.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            // RFC 5681 §4.2: the delayed-ACK timer expired: ACK now.
            self.delack_deadline = None;
            self.ack_now = true;
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
    }

    fn arm_rto(&mut self, now: SimTime) {
        self.rto_deadline = Some(now + self.rtt.rto());
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
                self.syn_due = true;
                self.arm_rto(now);
            }
            _ if self.snd_una < self.snd_max => {
                self.counters.rto_count += 1;
                let first = self.rtt.backoffs() == 0;
                let flight = self.flight_size();
                self.cc.on_rto(&mut self.win, flight, first);
                // RFC 5681 §3.2 note / RFC 6582: a timeout ends fast recovery.
                self.recovery = None;
                self.retransmit_due = false;
                self.dupacks = 0;
                // RFC 6298 §5.4: retransmit the earliest segment not acknowledged;
                // everything after it is resent as the window reopens (go-back-N).
                self.snd_nxt = self.snd_una;
                // RFC 6298 §3 (Karn): a retransmitted segment gives no RTT sample.
                self.rtt_probe = None;
                // RFC 6298 §5.5: RTO <- RTO * 2 (bounded by the maximum).
                self.rtt.on_backoff();
                // RFC 6298 §5.6: start the timer with the new RTO.
                self.arm_rto(now);
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------
    // Segment arrival
    // ------------------------------------------------------------------

    /// Process an arriving segment.
    pub fn on_segment(&mut self, now: SimTime, h: &TcpHeader) {
        let flags = h.flags;
        match self.state {
            TcpState::Closed => {}
            TcpState::Listen => {
                // RFC 793 §3.4: a SYN in LISTEN -> SYN-RECEIVED, answer with SYN-ACK.
                if flags.contains(TcpFlags::SYN) && !flags.contains(TcpFlags::ACK) {
                    self.rcv_nxt = h.seq + 1;
                    self.snd_wnd = h.window;
                    self.state = TcpState::SynReceived;
                    self.syn_due = true;
                }
            }
            TcpState::SynSent => {
                if flags.contains(TcpFlags::SYN | TcpFlags::ACK) && h.ack == ISS + 1 {
                    self.rcv_nxt = h.seq + 1;
                    self.snd_una = h.ack;
                    self.snd_nxt = self.snd_nxt.max(h.ack);
                    self.snd_wnd = h.window;
                    self.handshake_done(now);
                    // RFC 793 §3.4: the third segment of the handshake ACKs the SYN-ACK.
                    self.ack_now = true;
                }
            }
            TcpState::SynReceived => {
                if flags.contains(TcpFlags::SYN) && !flags.contains(TcpFlags::ACK) {
                    // A retransmitted SYN: our SYN-ACK was lost; answer again (as Linux does).
                    self.syn_due = true;
                    return;
                }
                if flags.contains(TcpFlags::ACK) && h.ack == ISS + 1 {
                    self.snd_una = h.ack;
                    self.snd_nxt = self.snd_nxt.max(h.ack);
                    self.handshake_done(now);
                    self.on_synchronized_segment(now, h);
                }
            }
            _ => {
                if flags.contains(TcpFlags::SYN) {
                    // A retransmitted SYN-ACK after our ACK was lost: re-ACK it.
                    self.ack_now = true;
                    return;
                }
                self.on_synchronized_segment(now, h);
            }
        }
    }

    fn handshake_done(&mut self, now: SimTime) {
        self.state = TcpState::Established;
        self.events.connected = true;
        self.rto_deadline = None;
        if self.syn_retries == 0 {
            // RFC 6298 §3 (Karn): only a SYN sent once gives a valid sample.
            if let Some(t) = self.syn_sent_at {
                self.rtt.on_sample(now.saturating_since(t));
            }
        } else if self.cfg.initial_rto < SimDuration::from_secs(3) {
            // RFC 6298 §5.7: after a retransmitted SYN with an RTO below 3 s, RTO is re-initialised to 3 s.
            self.rtt.reset_rto(SimDuration::from_secs(3));
        } else {
            self.rtt.reset_rto(self.cfg.initial_rto);
        }
    }

    fn on_synchronized_segment(&mut self, now: SimTime, h: &TcpHeader) {
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
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.snd_wnd = h.window;
            self.dupacks = 0;
            // RFC 6298 §3 (Karn) / §2: an ACK covering the timed segment gives a sample.
            if let Some((end, sent)) = self.rtt_probe {
                if ack >= end {
                    self.rtt.on_sample(now.saturating_since(sent));
                    self.rtt_probe = None;
                }
            }
            match self.recovery {
                Some(recover) => {
                    let full = ack >= recover;
                    match self.cc.on_ack_in_recovery(&mut self.win, acked, full) {
                        RecoveryAck::Exit => self.recovery = None,
                        RecoveryAck::RetransmitAndStay => {
                            if full {
                                self.recovery = None;
                            } else {
                                self.retransmit_due = true;
                            }
                        }
                    }
                }
                None => self.cc.on_ack(&mut self.win, acked),
            }
            if self.snd_una == self.snd_max {
                // RFC 6298 §5.2: all outstanding data acknowledged: turn off the timer.
                self.rto_deadline = None;
            } else {
                // RFC 6298 §5.3: an ACK of new data restarts the timer.
                self.arm_rto(now);
            }
            self.on_fin_acked();
            if self.snd_una >= self.data_end() + u64::from(self.fin_requested) && !self.unlimited {
                self.events.all_acked = true;
            }
            return;
        }
        // RFC 5681 §2: a duplicate ACK acknowledges SND.UNA, carries no data, no SYN/FIN,
        // does not change the window, and arrives while data is outstanding.
        let is_dup = ack == self.snd_una
            && h.payload == 0
            && !h.flags.contains(TcpFlags::FIN)
            && h.window == self.snd_wnd
            && self.snd_max > self.snd_una;
        self.snd_wnd = h.window;
        if !is_dup {
            return;
        }
        self.dupacks += 1;
        if self.recovery.is_some() {
            // RFC 5681 §3.2 step 4: inflate per additional duplicate ACK.
            self.cc.on_dupack_in_recovery(&mut self.win);
        } else if self.dupacks == self.cfg.dupack_threshold {
            // RFC 5681 §3.2 step 2-3: fast retransmit.
            self.counters.fast_retransmits += 1;
            let flight = self.flight_size();
            match self.cc.on_dupack_threshold(&mut self.win, flight) {
                LossResponse::FastRecovery => {
                    self.recovery = Some(self.snd_max);
                    self.retransmit_due = true;
                }
                LossResponse::SlowStart => {
                    self.snd_nxt = self.snd_una;
                }
            }
            // RFC 6298 §3 (Karn): a retransmission invalidates the sample in progress.
            self.rtt_probe = None;
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
            self.peer_fin = Some(end);
        }
        if h.payload > 0 {
            let before = self.rcv_nxt;
            let had_hole = !self.ooo.is_empty();
            if end <= self.rcv_nxt {
                // RFC 5681 §4.2 / RFC 793: a duplicate segment is ACKed at once.
                self.ack_now = true;
            } else if start <= self.rcv_nxt {
                self.rcv_nxt = end;
                // Pull in what the out-of-order queue now makes contiguous.
                while let Some(&(s, e)) = self.ooo.first() {
                    if s > self.rcv_nxt {
                        break;
                    }
                    self.rcv_nxt = self.rcv_nxt.max(e);
                    self.ooo.remove(0);
                }
                if had_hole {
                    // RFC 5681 §4.2: a segment that fills (part of) a gap is ACKed immediately.
                    self.ack_now = true;
                } else {
                    self.schedule_ack(now, h.payload);
                }
            } else if end - self.rcv_nxt <= self.cfg.rcv_window {
                self.insert_ooo(start, end);
                // RFC 5681 §4.2: an out-of-order segment is ACKed immediately (a duplicate ACK).
                self.ack_now = true;
            } else {
                // Beyond the window: dropped, but ACKed (RFC 793 §3.9).
                self.ack_now = true;
            }
            let delivered = self.rcv_nxt - before;
            if delivered > 0 {
                self.counters.bytes_delivered += delivered;
                self.events.received = true;
            }
        }
        if let Some(fin) = self.peer_fin {
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

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e < start);
        let mut s = start;
        let mut e = end;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once((s, e)));
    }

    fn schedule_ack(&mut self, now: SimTime, payload: u32) {
        if !self.cfg.delayed_ack {
            self.ack_now = true;
            return;
        }
        if payload >= self.cfg.mss {
            self.unacked_segments += 1;
        }
        // RFC 5681 §4.2: an ACK SHOULD be generated for at least every second full-sized segment.
        if self.unacked_segments >= 2 {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            // RFC 5681 §4.2: ... and MUST be generated within 500 ms of the arrival of the first unacknowledged packet.
            self.delack_deadline = Some(now + self.cfg.delayed_ack_timeout);
        }
    }

    // ------------------------------------------------------------------
    // Transmission
    // ------------------------------------------------------------------

    /// The next segment to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            TcpState::Closed | TcpState::Listen => None,
            TcpState::SynSent | TcpState::SynReceived => self.poll_handshake(now),
            _ => self.poll_data(now).or_else(|| self.poll_ack()),
        }
    }

    fn poll_handshake(&mut self, now: SimTime) -> Option<Segment> {
        if !self.syn_due {
            return None;
        }
        self.syn_due = false;
        if self.syn_sent_at.is_none() {
            self.syn_sent_at = Some(now);
        }
        // RFC 6298 §5.1: start the timer if it is not running (the SYN occupies sequence space).
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
        self.snd_max = self.snd_max.max(ISS + 1);
        self.snd_nxt = self.snd_nxt.max(ISS + 1);
        let mut header = self.header(ISS, 0);
        if self.state == TcpState::SynSent {
            header.flags = TcpFlags::SYN;
            header.ack = 0;
        } else {
            header.flags = TcpFlags::SYN | TcpFlags::ACK;
        }
        self.counters.segments_sent += 1;
        Some(Segment { header, ecn: Ecn::NotEct })
    }

    fn header(&self, seq: u64, payload: u32) -> TcpHeader {
        TcpHeader {
            seq,
            ack: self.rcv_nxt,
            flags: TcpFlags::ACK,
            window: self.cfg.rcv_window,
            payload,
            ..TcpHeader::default()
        }
    }

    /// Whether this endpoint may still send data or its FIN.
    fn can_send(&self) -> bool {
        matches!(
            self.state,
            TcpState::Established | TcpState::CloseWait | TcpState::FinWait1 | TcpState::Closing | TcpState::LastAck
        )
    }

    fn poll_data(&mut self, now: SimTime) -> Option<Segment> {
        if !self.can_send() {
            return None;
        }
        let mss = u64::from(self.cfg.mss);
        let data_end = self.data_end();
        let seq = if self.retransmit_due {
            // RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 5: retransmit the segment at SND.UNA.
            self.retransmit_due = false;
            self.snd_una
        } else {
            // RFC 5681 §3.1 / §3.2: send while the usable window allows.
            let wnd = self.win.cwnd.min(self.snd_wnd).min(self.win.max_cwnd);
            let limit = self.snd_una + wnd;
            let seq = self.snd_nxt;
            let len = mss.min(data_end.saturating_sub(seq));
            let fin_only = len == 0 && self.fin_seq() == Some(seq);
            // A full segment, or the last piece of data, or a lone FIN (one sequence
            // number) must fit in the window.
            if (len == 0 && !fin_only) || seq + len.max(1) > limit {
                return None;
            }
            seq
        };
        let len = mss.min(data_end.saturating_sub(seq));
        let with_fin = self.fin_seq() == Some(seq + len);
        if len == 0 && !with_fin {
            return None;
        }
        let end = seq + len + u64::from(with_fin);
        let is_retransmit = seq < self.snd_max;
        let payload = u32::try_from(len).expect("len <= mss");
        let mut header = self.header(seq, payload);
        if with_fin {
            header.flags.insert(TcpFlags::FIN);
            // RFC 793 §3.5: sending our FIN.
            self.state = match self.state {
                TcpState::Established => TcpState::FinWait1,
                TcpState::CloseWait => TcpState::LastAck,
                s => s,
            };
        }
        self.snd_nxt = self.snd_nxt.max(end);
        self.snd_max = self.snd_max.max(end);
        // Counters.
        self.counters.segments_sent += 1;
        if len > 0 {
            self.counters.data_packets_sent += 1;
            self.counters.data_bytes_sent += len;
        }
        if is_retransmit {
            self.counters.retransmitted_packets += 1;
            self.counters.retransmitted_bytes += len;
            // RFC 6298 §3 (Karn): never time a retransmitted segment.
            self.rtt_probe = None;
        } else if self.rtt_probe.is_none() {
            self.rtt_probe = Some((end, now));
        }
        // RFC 6298 §5.1: each time a segment with data is sent, start the timer if not running.
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
        self.ack_sent();
        Some(Segment { header, ecn: Ecn::NotEct })
    }

    fn poll_ack(&mut self) -> Option<Segment> {
        if !self.ack_now {
            return None;
        }
        let header = self.header(self.snd_nxt, 0);
        self.counters.segments_sent += 1;
        self.counters.acks_sent += 1;
        self.ack_sent();
        Some(Segment { header, ecn: Ecn::NotEct })
    }

    /// Any segment we send carries the current ACK.
    fn ack_sent(&mut self) {
        self.ack_now = false;
        self.unacked_segments = 0;
        self.delack_deadline = None;
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
            initial_window: 1,
            min_rto: SimDuration::from_millis(200),
            initial_rto: SimDuration::from_secs(1),
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
            s.on_segment(now, h);
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
        TcpHeader { seq: 1, ack: rcv_nxt, flags: TcpFlags::ACK, window: cfg().rcv_window, ..TcpHeader::default() }
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
    fn established_three_dupacks_fast_retransmit_and_recovery() {
        let (mut a, _b) = established();
        a.send(100 * MSS);
        a.win.cwnd = 10 * MSS;
        let segs = drain(&mut a, t(200));
        assert_eq!(segs.len(), 10);
        // Segment 1 (seq 1) lost: three duplicate ACKs for 1.
        for i in 0..2 {
            a.on_segment(t(300 + i), &ack_for(1));
            assert!(drain(&mut a, t(300 + i)).is_empty());
        }
        a.on_segment(t(302), &ack_for(1));
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
            a.on_segment(t(303 + i), &ack_for(1));
        }
        assert_eq!(a.cwnd(), 11 * MSS);
        assert_eq!(drain(&mut a, t(306)).len(), 1);
        // The ACK of the retransmission deflates to ssthresh and exits recovery.
        a.on_segment(t(400), &ack_for(1 + 10 * MSS));
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
        b.on_segment(t(200), &seg(1001));
        b.on_segment(t(200), &seg(2001));
        let dups = drain(&mut b, t(200));
        assert_eq!(dups.last().unwrap().ack, 1, "duplicate ACK for the hole");
        b.on_segment(t(210), &seg(1));
        let ack = drain(&mut b, t(210));
        assert_eq!(ack.last().unwrap().ack, 3001);
        assert_eq!(b.counters.bytes_delivered, 3000);
        // A duplicate of delivered data is not delivered twice.
        b.on_segment(t(220), &seg(1001));
        assert_eq!(b.counters.bytes_delivered, 3000);
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
        b.on_segment(t(200), &seg(1));
        assert!(drain(&mut b, t(200)).is_empty());
        assert_eq!(b.next_deadline(), Some(t(400)));
        b.on_segment(t(210), &seg(1001));
        assert_eq!(drain(&mut b, t(210)).len(), 1);
        b.on_segment(t(300), &seg(2001));
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
}
