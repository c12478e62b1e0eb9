//! Reno: slow start, congestion avoidance, fast retransmit and fast recovery.
//!
//! Read first: RFC 5681 §3.1 (slow start and congestion avoidance) and §3.2
//! (fast retransmit / fast recovery).

use super::{halved_ssthresh, CongestionControl, LossResponse, RecoveryAck, Window};

/// RFC 5681 Reno. Stateless: everything lives in the [`Window`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse {
        // RFC 5681 §3.2 step 2: ssthresh = max (FlightSize / 2, 2*SMSS).
        w.ssthresh = halved_ssthresh(flight, w.mss);
        // RFC 5681 §3.2 step 3: cwnd = ssthresh + 3*SMSS ("inflates" by the segments that left).
        w.cwnd = w.ssthresh + 3 * w.mss;
        LossResponse::FastRecovery
    }

    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        // RFC 5681 §3.2 step 4: for each additional duplicate ACK, cwnd += SMSS.
        w.cwnd += w.mss;
    }

    fn on_ack_in_recovery(&mut self, w: &mut Window, _acked_bytes: u64, _flight: u64, _full: bool) -> RecoveryAck {
        // RFC 5681 §3.2 step 6: the next ACK of new data sets cwnd to ssthresh ("deflating").
        w.cwnd = w.ssthresh;
        RecoveryAck::Exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    const MSS: u64 = 1000;

    fn win(cwnd: u64, ssthresh: u64) -> Window {
        Window::new(cwnd, ssthresh, MSS, 1_000_000 * MSS, CaIncrease::PerAck)
    }

    #[test]
    fn slow_start_adds_one_mss_per_full_ack() {
        let mut w = win(2 * MSS, 100 * MSS);
        Reno.on_ack(&mut w, MSS);
        assert_eq!(w.cwnd, 3 * MSS);
        // A stretch ACK of 3 segments still adds only one SMSS (RFC 5681 eq. 2).
        Reno.on_ack(&mut w, 3 * MSS);
        assert_eq!(w.cwnd, 4 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_window() {
        let mut w = win(10 * MSS, 5 * MSS);
        for _ in 0..10 {
            Reno.on_ack(&mut w, MSS);
        }
        // Ten ACKs of one window add just under one MSS (cwnd grows as it goes).
        assert!(w.cwnd > 10 * MSS + 900 && w.cwnd <= 11 * MSS, "cwnd {}", w.cwnd);
    }

    #[test]
    fn three_dupacks_halve_and_inflate() {
        let mut w = win(20 * MSS, 100 * MSS);
        assert_eq!(Reno.on_dupack_threshold(&mut w, 20 * MSS), LossResponse::FastRecovery);
        assert_eq!(w.ssthresh, 10 * MSS);
        assert_eq!(w.cwnd, 13 * MSS);
        Reno.on_dupack_in_recovery(&mut w);
        assert_eq!(w.cwnd, 14 * MSS);
        assert_eq!(Reno.on_ack_in_recovery(&mut w, MSS, 5 * MSS, false), RecoveryAck::Exit);
        assert_eq!(w.cwnd, 10 * MSS);
    }

    #[test]
    fn ssthresh_never_below_two_segments() {
        let mut w = win(2 * MSS, 100 * MSS);
        Reno.on_dupack_threshold(&mut w, 2 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    #[test]
    fn timeout_sets_loss_window_and_holds_ssthresh_on_repeat() {
        let mut w = win(20 * MSS, 100 * MSS);
        Reno.on_rto(&mut w, 20 * MSS, true);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 10 * MSS));
        Reno.on_rto(&mut w, 20 * MSS, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 10 * MSS));
    }

    #[test]
    fn growth_is_capped_by_max_cwnd() {
        let mut w = Window::new(10 * MSS, 100 * MSS, MSS, 10 * MSS, CaIncrease::PerAck);
        Reno.on_ack(&mut w, MSS);
        assert_eq!(w.cwnd, 10 * MSS);
    }
}
