//! Congestion control: how the window reacts to ACKs, duplicate ACKs and
//! timeouts. The socket ([`crate::tcp::TcpSocket`]) detects the events and
//! carries out retransmissions; an algorithm only decides window values and
//! what recovery does next. One algorithm per file, dispatched by [`AnyCc`].

mod newreno;
mod reno;
mod sack;
mod tahoe;

pub use newreno::NewReno;
pub use reno::Reno;
pub use sack::Sack;
pub use tahoe::Tahoe;

use crate::spec::CcKind;

/// The window state an algorithm works on, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: u64,
    /// Slow-start threshold.
    pub ssthresh: u64,
    /// Sender maximum segment size (SMSS).
    pub mss: u64,
    /// Largest congestion window allowed.
    pub max_cwnd: u64,
}

impl Window {
    /// True below ssthresh (RFC 5681 §3.1: slow start when cwnd < ssthresh).
    #[must_use]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What the socket does after an ACK of new data during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryAck {
    /// Leave fast recovery.
    Exit,
    /// Stay in recovery and retransmit the next unacknowledged segment
    /// (NewReno's partial ACK, RFC 6582 §3.2 step 5).
    RetransmitAndStay,
    /// Stay in recovery; the sender's own rules pick what to send (SACK, RFC 6675).
    Stay,
}

/// What the socket does on the duplicate-ACK threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossResponse {
    /// Retransmit the lost segment and enter fast recovery (Reno).
    FastRecovery,
    /// Retransmit and slow-start from the loss window, go-back-N (Tahoe).
    SlowStart,
}

/// One congestion-control algorithm. Hooks get the window to update;
/// ones an algorithm does not need keep the default body.
pub trait CongestionControl {
    /// New data was acknowledged outside fast recovery.
    fn on_ack(&mut self, w: &mut Window, acked_bytes: u64) {
        grow(w, acked_bytes);
    }
    /// The duplicate-ACK threshold was reached; `flight` is FlightSize.
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse;
    /// Another duplicate ACK arrived during fast recovery.
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        let _ = w;
    }
    /// New data was acknowledged during fast recovery: `acked_bytes` newly
    /// acknowledged, `flight` the FlightSize after it, `full` true if the ACK
    /// covers the recovery point.
    fn on_ack_in_recovery(&mut self, w: &mut Window, acked_bytes: u64, flight: u64, full: bool) -> RecoveryAck;
    /// The retransmission timer expired. `first` is false on a repeated
    /// timeout of the same segment.
    fn on_rto(&mut self, w: &mut Window, flight: u64, first: bool) {
        // RFC 5681 §3.1: on a repeated timeout of the same segment, ssthresh is held constant.
        if first {
            // RFC 5681 §3.1 eq. (4): ssthresh = max (FlightSize / 2, 2*SMSS).
            w.ssthresh = halved_ssthresh(flight, w.mss);
        }
        // RFC 5681 §3.1: cwnd is set to no more than the loss window, LW = 1 full-sized segment.
        w.cwnd = w.mss;
    }
    /// An ECN-Echo calls for a reduction (at most once per window; the socket
    /// enforces that). Returns true if cwnd was already at its minimum of one
    /// segment, in which case RFC 3168 §6.1.2 makes the sender wait for the
    /// retransmission timer before sending new data.
    fn on_ecn_echo(&mut self, w: &mut Window) -> bool {
        // RFC 3168 §6.1.2: the TCP source halves the congestion window and reduces ssthresh.
        let half = w.cwnd / 2;
        w.ssthresh = half.max(2 * w.mss);
        w.cwnd = half.max(w.mss);
        half < w.mss
    }
    /// RFC 6582 §3.2 step 1: fast retransmit only if the ACK covers more than
    /// `recover` (NewReno and SACK). Tahoe and Reno (RFC 5681) do not check.
    fn checks_recover(&self) -> bool {
        false
    }
}

/// The closed set of algorithms.
#[derive(Clone, Debug)]
pub enum AnyCc {
    /// Tahoe.
    Tahoe(Tahoe),
    /// RFC 5681 Reno.
    Reno(Reno),
    /// RFC 6582 NewReno.
    NewReno(NewReno),
    /// RFC 6675 SACK-based recovery.
    Sack(Sack),
}

impl AnyCc {
    /// The algorithm `kind`, in its initial state.
    #[must_use]
    pub fn new(kind: CcKind) -> Self {
        match kind {
            CcKind::Tahoe => AnyCc::Tahoe(Tahoe),
            CcKind::Reno => AnyCc::Reno(Reno),
            CcKind::Newreno => AnyCc::NewReno(NewReno),
            CcKind::Sack => AnyCc::Sack(Sack),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            AnyCc::Tahoe($cc) => $e,
            AnyCc::Reno($cc) => $e,
            AnyCc::NewReno($cc) => $e,
            AnyCc::Sack($cc) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    fn on_ack(&mut self, w: &mut Window, acked_bytes: u64) {
        dispatch!(self, cc => cc.on_ack(w, acked_bytes));
    }
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse {
        dispatch!(self, cc => cc.on_dupack_threshold(w, flight))
    }
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        dispatch!(self, cc => cc.on_dupack_in_recovery(w));
    }
    fn on_ack_in_recovery(&mut self, w: &mut Window, acked_bytes: u64, flight: u64, full: bool) -> RecoveryAck {
        dispatch!(self, cc => cc.on_ack_in_recovery(w, acked_bytes, flight, full))
    }
    fn on_rto(&mut self, w: &mut Window, flight: u64, first: bool) {
        dispatch!(self, cc => cc.on_rto(w, flight, first));
    }
    fn on_ecn_echo(&mut self, w: &mut Window) -> bool {
        dispatch!(self, cc => cc.on_ecn_echo(w))
    }
    fn checks_recover(&self) -> bool {
        dispatch!(self, cc => cc.checks_recover())
    }
}

/// RFC 5681 §3.1 eq. (4): ssthresh = max (FlightSize / 2, 2*SMSS).
#[must_use]
pub fn halved_ssthresh(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}

/// RFC 5681 §3.1: slow start grows cwnd by min(N, SMSS) per ACK, and
/// congestion avoidance by SMSS*SMSS/cwnd (eq. 3) per ACK, at least 1 byte.
pub fn grow(w: &mut Window, acked_bytes: u64) {
    if w.in_slow_start() {
        // RFC 5681 §3.1 eq. (2): cwnd += min (N, SMSS).
        w.cwnd += acked_bytes.min(w.mss);
    } else {
        // RFC 5681 §3.1 eq. (3): cwnd += SMSS*SMSS/cwnd.
        w.cwnd += (w.mss * w.mss / w.cwnd.max(1)).max(1);
    }
    w.cwnd = w.cwnd.min(w.max_cwnd);
}
