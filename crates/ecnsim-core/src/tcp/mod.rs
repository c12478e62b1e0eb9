//! TCP, sans-IO: a socket never reads a clock or schedules anything; the
//! simulation passes `now` in, pulls segments out with
//! [`TcpSocket::poll_transmit`] and asks [`TcpSocket::next_deadline`] when to
//! call [`TcpSocket::on_timer`].

pub mod cc;
mod rtt;
mod socket;
mod state;

pub use rtt::RttEstimator;
pub use socket::{Segment, SocketEvents, TcpCounters, TcpSocket};
pub use state::TcpState;

use crate::spec::CcKind;
use crate::time::SimDuration;

/// Fully resolved TCP parameters of one connection (both ends use the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Congestion control and loss recovery.
    pub cc: CcKind,
    /// Maximum segment size: payload bytes per segment.
    pub mss: u32,
    /// IP + TCP header bytes added to every segment.
    pub header_bytes: u32,
    /// Initial congestion window, in segments.
    pub initial_window: u32,
    /// Largest congestion window, in segments.
    pub max_cwnd: u32,
    /// Receive window each end advertises, in bytes.
    pub rcv_window: u64,
    /// RTO before the first RTT sample, and for SYN / SYN-ACK.
    pub initial_rto: SimDuration,
    /// Lower bound on the RTO.
    pub min_rto: SimDuration,
    /// Upper bound on the RTO (and on backed-off values).
    pub max_rto: SimDuration,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: SimDuration,
    /// SYN / SYN-ACK retransmissions before giving up.
    pub syn_retries: u32,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Whether the receiver delays ACKs.
    pub delayed_ack: bool,
    /// Delayed-ACK timer.
    pub delayed_ack_timeout: SimDuration,
}
