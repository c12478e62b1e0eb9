//! Tahoe: slow start and congestion avoidance; a loss detected by duplicate
//! ACKs is handled like a timeout, without fast recovery.
//!
//! Read first: Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988;
//! RFC 5681 §3.1 for the window rules it shares with Reno.

use super::{halved_ssthresh, CongestionControl, LossResponse, RecoveryAck, Window};

/// Tahoe. Stateless: everything lives in the [`Window`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Tahoe;

impl CongestionControl for Tahoe {
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse {
        // Jacobson88 / RFC 5681 §3.1 eq. (4): ssthresh = max (FlightSize / 2, 2*SMSS).
        w.ssthresh = halved_ssthresh(flight, w.mss);
        // Jacobson88: after a loss, slow start from one segment.
        w.cwnd = w.mss;
        LossResponse::SlowStart
    }

    fn on_dupack_threshold_after_ecn(&mut self, w: &mut Window, _dupacks: u32) -> LossResponse {
        // ns-2 tcp.cc dupack_action() after an ECN reduction: slowdown(CLOSE_CWND_ONE), go-back-N,
        // ssthresh kept (RFC 3168 §6.1.2: one reduction of ssthresh per round trip).
        w.cwnd = w.mss;
        LossResponse::SlowStart
    }

    fn on_ack_in_recovery(&mut self, w: &mut Window, acked_bytes: u64, _flight: u64, _full: bool) -> RecoveryAck {
        // Tahoe never enters fast recovery; grow as usual if asked.
        super::grow(w, acked_bytes);
        RecoveryAck::Exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    #[test]
    fn three_dupacks_restart_slow_start_from_one_segment() {
        let mut w = Window::new(20_000, u64::MAX / 2, 1000, u64::MAX, CaIncrease::PerAck);
        assert_eq!(Tahoe.on_dupack_threshold(&mut w, 20_000), LossResponse::SlowStart);
        assert_eq!((w.cwnd, w.ssthresh), (1000, 10_000));
    }
}
