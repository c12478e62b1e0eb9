//! The window rules of SACK-based loss recovery. What to send during
//! recovery (the scoreboard, pipe and NextSeg) lives in `tcp/sack.rs`.
//!
//! Read first: RFC 6675 §5 (the algorithm), RFC 2018 (the option).

use super::{halved_ssthresh, CongestionControl, LossResponse, RecoveryAck, Window};

/// RFC 6675 SACK recovery. Stateless.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sack;

impl CongestionControl for Sack {
    fn on_dupack_threshold(&mut self, w: &mut Window, flight: u64) -> LossResponse {
        // RFC 6675 §5 step 4.2: ssthresh = cwnd = (FlightSize / 2), per RFC 5681 eq. (4).
        w.ssthresh = halved_ssthresh(flight, w.mss);
        w.cwnd = w.ssthresh;
        LossResponse::FastRecovery
    }

    fn on_dupack_threshold_after_ecn(&mut self, _w: &mut Window, _dupacks: u32) -> LossResponse {
        // RFC 3168 §6.1.2: ssthresh is not reduced again in the round trip; RFC 6675 §5's
        // pipe and NextSeg recover with the window already halved (no inflation).
        LossResponse::FastRecovery
    }

    fn on_ack_in_recovery(&mut self, _w: &mut Window, _acked_bytes: u64, _flight: u64, full: bool) -> RecoveryAck {
        // RFC 6675 §5: recovery ends when a cumulative ACK covers RecoveryPoint;
        // until then pipe and NextSeg decide (no window inflation or deflation).
        if full {
            RecoveryAck::Exit
        } else {
            RecoveryAck::Stay
        }
    }

    fn checks_recover(&self) -> bool {
        // RFC 6675 §5: recovery starts only if the cumulative ACK is beyond the last RecoveryPoint.
        true
    }
}
