//! NewReno: Reno whose fast recovery survives partial acknowledgments.
//!
//! Read first: RFC 6582 §3.2 (the algorithm: steps 1-6), RFC 5681 §3.2.

use super::{halved_ssthresh, CongestionControl, LossResponse, RecoveryAck, Window};
use crate::spec::NewrenoPartialAck;

/// NewReno. Stateless apart from its option; the recovery point lives in the socket.
#[derive(Clone, Copy, Debug)]
pub struct NewReno {
    /// What a partial ACK and the end of recovery do (`tcp.newreno_partial_ack`).
    pub partial_ack: NewrenoPartialAck,
}

impl CongestionControl for NewReno {
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse {
        // RFC 6582 §3.2 step 2 (RFC 5681 §3.2 step 2): ssthresh = max (FlightSize / 2, 2*SMSS).
        w.ssthresh = halved_ssthresh(flight, w.mss);
        // RFC 6582 §3.2 step 2 (RFC 5681 §3.2 step 3): cwnd = ssthresh + 3*SMSS.
        w.cwnd = w.ssthresh + 3 * w.mss;
        LossResponse::FastRecovery
    }

    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        // RFC 6582 §3.2 step 3: for each additional duplicate ACK, cwnd += SMSS.
        w.cwnd += w.mss;
    }

    fn on_ack_in_recovery(&mut self, w: &mut Window, acked_bytes: u64, flight: u64, full: bool) -> RecoveryAck {
        if self.partial_ack == NewrenoPartialAck::Ns2 {
            // ns-2 tcp-newreno.cc recv(), partial_window_deflation_ 0: a partial ACK zeroes dupwnd_,
            // so the window falls back to cwnd_ = ssthresh_ (set together by slowdown()); the ACK that
            // ends recovery zeroes it too (exit_recovery_fix_ 0) and then opens the window in
            // recv_newack_helper() like any new ACK.
            w.cwnd = w.ssthresh;
            return if full { RecoveryAck::ExitAndGrow } else { RecoveryAck::RetransmitAndStay };
        }
        if full {
            // RFC 6582 §3.2 step 6, option (1): cwnd = min (ssthresh, max(FlightSize, SMSS) + SMSS).
            w.cwnd = w.ssthresh.min(flight.max(w.mss) + w.mss);
            RecoveryAck::Exit
        } else {
            // RFC 6582 §3.2 step 5: deflate by the amount of new data acknowledged ...
            w.cwnd = w.cwnd.saturating_sub(acked_bytes);
            // ... and add back SMSS bytes if at least one SMSS was acknowledged.
            if acked_bytes >= w.mss {
                w.cwnd += w.mss;
            }
            w.cwnd = w.cwnd.max(w.mss);
            RecoveryAck::RetransmitAndStay
        }
    }

    fn checks_recover(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;

    const MSS: u64 = 1000;

    fn rfc() -> NewReno {
        NewReno { partial_ack: NewrenoPartialAck::Rfc6582 }
    }

    fn ns2() -> NewReno {
        NewReno { partial_ack: NewrenoPartialAck::Ns2 }
    }

    #[test]
    fn partial_ack_deflates_by_acked_and_adds_one_segment() {
        let mut w = Window::new(13 * MSS, 5 * MSS, MSS, u64::MAX, CaIncrease::PerAck);
        assert_eq!(rfc().on_ack_in_recovery(&mut w, 2 * MSS, 8 * MSS, false), RecoveryAck::RetransmitAndStay);
        assert_eq!(w.cwnd, 12 * MSS);
        // Less than one SMSS acknowledged: no segment added back.
        assert_eq!(rfc().on_ack_in_recovery(&mut w, 500, 8 * MSS, false), RecoveryAck::RetransmitAndStay);
        assert_eq!(w.cwnd, 12 * MSS - 500);
    }

    #[test]
    fn ns2_partial_and_full_acks_hold_cwnd_at_ssthresh() {
        let mut w = Window::new(13 * MSS, 5 * MSS, MSS, u64::MAX, CaIncrease::PerAckTruncated);
        assert_eq!(ns2().on_ack_in_recovery(&mut w, 2 * MSS, 8 * MSS, false), RecoveryAck::RetransmitAndStay);
        assert_eq!(w.cwnd, 5 * MSS);
        w.cwnd += 2 * MSS;
        assert_eq!(ns2().on_ack_in_recovery(&mut w, MSS, 2 * MSS, true), RecoveryAck::ExitAndGrow);
        assert_eq!(w.cwnd, 5 * MSS);
    }

    #[test]
    fn full_ack_sets_cwnd_to_min_of_ssthresh_and_flight_plus_one() {
        let mut w = Window::new(13 * MSS, 5 * MSS, MSS, u64::MAX, CaIncrease::PerAck);
        assert_eq!(rfc().on_ack_in_recovery(&mut w, MSS, 2 * MSS, true), RecoveryAck::Exit);
        assert_eq!(w.cwnd, 3 * MSS);
        let mut w = Window::new(13 * MSS, 5 * MSS, MSS, u64::MAX, CaIncrease::PerAck);
        rfc().on_ack_in_recovery(&mut w, MSS, 9 * MSS, true);
        assert_eq!(w.cwnd, 5 * MSS);
    }
}
