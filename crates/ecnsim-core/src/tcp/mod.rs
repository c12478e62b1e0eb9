//! TCP, sans-IO: a socket never reads a clock or schedules anything; the
//! simulation passes `now` in, pulls segments out with
//! [`TcpSocket::poll_transmit`] and asks [`TcpSocket::next_deadline`] when to
//! call [`TcpSocket::on_timer`].

mod accecn;
#[cfg(test)]
mod accecn_dialogues;
#[cfg(test)]
mod bbr_dialogues;
pub mod cc;
#[cfg(test)]
mod dialogues;
mod hystart;
#[cfg(test)]
mod hystart_dialogues;
#[cfg(test)]
mod linux6_dialogues;
mod ooo;
mod opt;
#[cfg(test)]
mod prague_dialogues;
mod prr;
mod rack;
#[cfg(test)]
mod rack_dialogues;
mod rtt;
mod rtt_ns2;
mod sack;
mod socket;
mod state;
#[cfg(test)]
mod tso_dialogues;

pub use rtt::{Rfc6298Estimator, RttEstimator};
pub use rtt_ns2::Ns2Estimator;
pub use socket::{Segment, SocketEvents, TcpCounters, TcpSocket, Transmit};

pub use state::TcpState;

pub use accecn::AccEcnCounts;
pub(crate) use opt::Opt;

use crate::spec::{
    CaIncrease, CarryRtt, CcKind, CubicInitialGrowth, CubicTimeout, DctcpFraction, EceGrowth, EcnFeedback,
    EcnOneSegment, EcnPolicy, EcnSynAck, EctCodepoint, LossDetection, NewrenoCareful, NewrenoPartialAck,
    PragueEcnFallback, Quickack, Recovery, RecoveryRate, ReductionBasis, RtoEstimator, RtoRearm, SackAfterTimeout,
    SackRecoveryGuard, SackVariant, SlowStartExit, SlowStartIncrease, TimeoutAfterEcn,
};
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
    /// Initial congestion window.
    pub initial_window: InitialWindow,
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
    /// This end's ECN policy (RFC 3168 §6.1.1).
    pub ecn: EcnPolicy,
    /// ECN-capable SYN-ACK behaviour (RFC 5562 / ECN+).
    pub ecn_synack: EcnSynAck,
    /// The ECT codepoint of data segments (RFC 3168's ECT(0), or ECT(1) for L4S, RFC 9331 §4.1).
    pub ect_codepoint: EctCodepoint,
    /// The ECN feedback asked for and offered: RFC 3168's, or AccECN (RFC 9768).
    pub ecn_feedback: EcnFeedback,
    /// An AccECN receiver sends the AccECN option (RFC 9768 §3.2.3).
    pub accecn_option: bool,
    /// RFC 5681 §4.1 restart window after an idle period.
    pub restart_after_idle: bool,
    /// The guard on a new fast retransmit (NewReno and SACK): RFC 6582 §3.2 step 2 and §4.1.
    pub newreno_careful: NewrenoCareful,
    /// NewReno's partial ACKs and end of recovery.
    pub newreno_partial_ack: NewrenoPartialAck,
    /// What data segments carry as their RTT hint (ms).
    pub carry_rtt: CarryRtt,
    /// The retransmission-timer estimator.
    pub rto_estimator: RtoEstimator,
    /// CWR may go on a retransmitted segment (ns-2), not only on new data (RFC 3168).
    pub ecn_cwr_on_retransmit: bool,
    /// Retransmitted data segments are ECT (ns-2), not Not-ECT (RFC 3168 §6.1.5).
    pub ecn_ect_on_retransmit: bool,
    /// Without a handshake, the first data segment is Not-ECT (ns-2's one-way TCP).
    pub ecn_first_segment_not_ect: bool,
    /// Which ACKs carrying ECE may still open the window.
    pub ecn_ece_growth: EceGrowth,
    /// What an ECN-Echo does at a one-segment window.
    pub ecn_one_segment: EcnOneSegment,
    /// The first ECN-Echo after a timeout starts a reduction even within the resent window (ns-2).
    pub ecn_after_timeout: bool,
    /// Which timeouts after an ECN reduction keep ssthresh (and are not counted by ns-2).
    pub timeout_after_ecn: TimeoutAfterEcn,
    /// A fast retransmit in a window already reduced for ECN-Echo keeps that reduction's
    /// `recover` (ns-2), instead of moving it to the highest sequence sent (RFC 6582).
    pub ecn_keeps_recover: bool,
    /// An ECN-Echo on a duplicate ACK is answered before the duplicate is counted (ns-2), not after.
    pub ecn_echo_before_dupack: bool,
    /// ns-2 `bugFix_`: no new Tahoe/Reno fast retransmit until an ACK covers more than `recover`.
    pub reno_bugfix: bool,
    /// How congestion avoidance grows the window.
    pub ca_increase: CaIncrease,
    /// What window reductions halve.
    pub reduction_basis: ReductionBasis,
    /// RFC 3042 Limited Transmit.
    pub limited_transmit: bool,
    /// The three-way handshake is exchanged (ns-2 `syn_`).
    pub handshake: bool,
    /// Data segments carry `header_bytes` on the wire (ns-2 `useHeaders_`).
    pub headers_on_data: bool,
    /// The loss recovery of `cc` = CUBIC or DCTCP (the older kinds carry their own).
    pub recovery: Recovery,
    /// The SACK-based recovery of a SACK connection (RFC 6675, or ns-2's `Sack1`).
    pub sack_variant: SackVariant,
    /// How much SACK-based fast recovery sends per ACK (RFC 6675, or RFC 6937's PRR).
    pub recovery_rate: RecoveryRate,
    /// A SACK sender's scoreboard at a retransmission timeout (RFC 2018 §8, or RFC 6675 §5.1 / Linux).
    pub sack_after_timeout: SackAfterTimeout,
    /// How a SACK sender detects losses (duplicate ACKs, or RFC 8985 RACK-TLP).
    pub loss_detection: LossDetection,
    /// The receiver's quick-ACK mode (Linux's, or none).
    pub quickack: Quickack,
    /// When the retransmission timer restarts (RFC 6298's events, or Linux's too).
    pub rto_rearm: RtoRearm,
    /// CUBIC's beta_cubic, in units of 1/[`FRACTION_SCALE`].
    pub cubic_beta: u32,
    /// CUBIC's C (segments per second cubed), in units of 1/[`FRACTION_SCALE`].
    pub cubic_c: u32,
    /// CUBIC's fast convergence (RFC 9438 §4.7).
    pub cubic_fast_convergence: bool,
    /// What a timeout does to CUBIC's ssthresh.
    pub cubic_timeout: CubicTimeout,
    /// How slow start may end before a loss (HyStart, HyStart++).
    pub slow_start_exit: SlowStartExit,
    /// How slow start grows the window per ACK (RFC 5681's min(N, SMSS), or Linux's N).
    pub slow_start_increase: SlowStartIncrease,
    /// CUBIC's growth while it has no W_max (RFC 9438's curve, or Linux's 5 % floor).
    pub cubic_initial_growth: CubicInitialGrowth,
    /// What guards a new SACK recovery after a timeout (`newreno_careful`'s rule, or RFC 6675 §5.1).
    pub sack_recovery_guard: SackRecoveryGuard,
    /// DCTCP's gain g = 2^-shift.
    pub dctcp_shift_g: u32,
    /// What DCTCP's marked fraction counts.
    pub dctcp_fraction: DctcpFraction,
    /// DCTCP's SYN, SYN-ACK and pure ACKs are ECT(0).
    pub dctcp_ect_control: bool,
    /// Prague's reference RTT (zero: no RTT independence).
    pub prague_rtt_target: SimDuration,
    /// Rounds after slow start before Prague's RTT independence applies.
    pub prague_rtt_transition: u32,
    /// Prague's Classic-ECN-bottleneck detection and fallback.
    pub prague_ecn_fallback: PragueEcnFallback,
    /// Segmentation offload: the largest burst of new data, in segments, that the sender hands
    /// its NIC at once, deferring smaller ones while an ACK is due (1: off, a segment at a time).
    pub tso_segments: u32,
}

/// The denominator of the fractions in [`TcpConfig`] (`cubic_beta`, `cubic_c`): 1.024e9, so that
/// both decimal fractions of up to six digits (RFC 9438's 0.7 and 0.4) and Linux's multiples of
/// 1/1024 (beta 717/1024, C 410/1024) are exact.
pub const FRACTION_SCALE: u64 = 1_024_000_000;

impl TcpConfig {
    /// SACK is offered in the handshake (RFC 2018 §2): `cc = "sack"`, or a window algorithm on
    /// SACK recovery.
    #[must_use]
    pub fn offers_sack(&self) -> bool {
        self.cc == CcKind::Sack || (self.cc.takes_recovery() && self.recovery == Recovery::Sack)
    }
}

/// The initial congestion window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// A fixed number of segments.
    Segments(u32),
    /// RFC 3390 §1: min(4*MSS, max(2*MSS, 4380 bytes)).
    Rfc3390,
}

impl InitialWindow {
    /// The window in bytes for a given MSS.
    #[must_use]
    pub fn bytes(self, mss: u32) -> u64 {
        let mss = u64::from(mss);
        match self {
            InitialWindow::Segments(n) => u64::from(n) * mss,
            // RFC 3390 §1: min (4*MSS, max (2*MSS, 4380 bytes)).
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)),
        }
    }
    /// The window in whole segments (rounded down, at least 1).
    #[must_use]
    pub fn segments(self, mss: u32) -> u32 {
        u32::try_from((self.bytes(mss) / u64::from(mss)).max(1)).unwrap_or(u32::MAX)
    }
}
