//! TCP connection states (RFC 793 §3.2), displayed with the RFC's spelling.

use std::fmt;

/// The state of one endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// No connection.
    Closed,
    /// Waiting for a SYN.
    Listen,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// Our FIN sent, not yet acknowledged.
    FinWait1,
    /// Our FIN acknowledged, waiting for the peer's.
    FinWait2,
    /// The peer's FIN received; we may still send.
    CloseWait,
    /// Both FINs sent, ours not yet acknowledged.
    Closing,
    /// Our FIN sent after the peer's, waiting for its ACK.
    LastAck,
    /// Both directions closed.
    TimeWait,
}

impl TcpState {
    /// True once the handshake has completed (any state after SYN-RECEIVED).
    #[must_use]
    pub fn is_synchronized(self) -> bool {
        !matches!(self, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
    }
    /// True if the peer may still send us data (we have not received its FIN).
    #[must_use]
    pub fn can_receive(self) -> bool {
        matches!(self, TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2)
    }
}

impl fmt::Display for TcpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TcpState::Closed => "CLOSED",
            TcpState::Listen => "LISTEN",
            TcpState::SynSent => "SYN-SENT",
            TcpState::SynReceived => "SYN-RECEIVED",
            TcpState::Established => "ESTABLISHED",
            TcpState::FinWait1 => "FIN-WAIT-1",
            TcpState::FinWait2 => "FIN-WAIT-2",
            TcpState::CloseWait => "CLOSE-WAIT",
            TcpState::Closing => "CLOSING",
            TcpState::LastAck => "LAST-ACK",
            TcpState::TimeWait => "TIME-WAIT",
        })
    }
}
