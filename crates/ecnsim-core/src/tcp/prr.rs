//! Proportional Rate Reduction (RFC 6937): how much a sender in SACK-based fast recovery may
//! send on each ACK (`tcp.recovery_rate = "rfc6937_ssrb"` or `"rfc6937_crb"`), in place of
//! RFC 6675 §5 step (C)'s `cwnd - pipe >= 1 SMSS`.
//!
//! Read first: RFC 6937 §2 (DeliveredData, sndcnt) and §3 (the algorithm and its examples).
//! The state lives in the SACK scoreboard (allocated on the first recovery), so a connection
//! that never recovers carries none of it; `TcpSocket` feeds it on every ACK in recovery and
//! on every segment sent in recovery.

use crate::spec::RecoveryRate;

/// One recovery's PRR state, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prr {
    /// RFC 6937 §3: RecoverFS, the FlightSize at the start of recovery.
    recover_fs: u64,
    /// RFC 6937 §3: prr_delivered, bytes delivered to the receiver during recovery.
    delivered: u64,
    /// RFC 6937 §3: prr_out, bytes sent during recovery.
    out: u64,
    /// RFC 6937 §2: sndcnt, bytes the last ACK allows, less what has been sent since.
    sndcnt: u64,
}

impl Prr {
    /// RFC 6937 §3 "at the beginning of recovery": prr_delivered = prr_out = 0, RecoverFS =
    /// `recover_fs`, the FlightSize ssthresh was computed from (snd.nxt - snd.una less what
    /// Limited Transmit sent, RFC 5681 §3.2 step 2, as in RFC 6937 §3.1's examples).
    pub(crate) fn start(recover_fs: u64) -> Self {
        Prr { recover_fs: recover_fs.max(1), delivered: 0, out: 0, sndcnt: 0 }
    }

    /// RFC 6937 §3 "on every ACK during recovery": `delivered` is this ACK's DeliveredData
    /// (RFC 6937 §2: the change in snd.una plus the signed change in SACKed bytes), `pipe`
    /// RFC 6675's SetPipe() after the ACK. Sets sndcnt.
    pub(crate) fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64, rate: RecoveryRate) {
        // RFC 6937 §3: prr_delivered += DeliveredData.
        self.delivered += delivered;
        self.sndcnt = if pipe > ssthresh {
            // RFC 6937 §3: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let share = u128::from(self.delivered) * u128::from(ssthresh);
            let allowed = share.div_ceil(u128::from(self.recover_fs));
            u64::try_from(allowed).unwrap_or(u64::MAX).saturating_sub(self.out)
        } else {
            let banked = self.delivered.saturating_sub(self.out);
            let limit = match rate {
                // RFC 6937 §3 PRR-CRB: limit = prr_delivered - prr_out.
                RecoveryRate::Rfc6937Crb => banked,
                // RFC 6937 §3 PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS.
                RecoveryRate::Rfc6937Ssrb | RecoveryRate::Rfc6675 => banked.max(delivered) + mss,
            };
            // RFC 6937 §3: sndcnt = MIN(ssthresh - pipe, limit).
            (ssthresh - pipe).min(limit)
        };
    }

    /// Whether `len` more bytes may go on the current ACK's allowance.
    pub(crate) fn allows(&self, len: u64) -> bool {
        self.sndcnt >= len
    }

    /// RFC 6937 §3 "on any data transmission or retransmission": prr_out += data sent.
    /// The fast retransmission itself is sent whatever sndcnt says (RFC 6675 §5 step 4.3,
    /// Linux `tcp_cwnd_reduction()`: "Force a fast retransmit upon entering fast recovery").
    pub(crate) fn on_sent(&mut self, len: u64) {
        self.out += len;
        self.sndcnt = self.sndcnt.saturating_sub(len);
    }
}

#[cfg(test)]
mod tests {
    //! RFC 6937 §3.1's examples, segment by segment: cwnd = FlightSize = pipe = 20 segments,
    //! ssthresh 10 after the loss, Limited Transmit sends one new segment on each of the first
    //! two duplicate ACKs, the third starts recovery. Units are segments (MSS = 1), pipe is
    //! RFC 6675's (SACKed segments leave it, segments below the loss threshold leave it until
    //! retransmitted).

    use super::*;

    /// RFC 6937 §3.1, single loss: PRR spreads the window reduction over the whole round trip,
    /// one segment on every other ACK, where RFC 6675 is silent for half a window; the window
    /// ends at ssthresh (§4: "PRR will converge to exactly the target window").
    #[test]
    fn rfc6937_single_loss_sends_on_every_other_ack_and_ends_at_ssthresh() {
        let (ssthresh, mss) = (10u64, 1u64);
        // RecoverFS is the FlightSize ssthresh was computed from, 20: RFC 5681 §3.2 step 2 leaves
        // the two segments Limited Transmit sent out of it (as ssthresh = 10 does).
        let mut prr = Prr::start(20);
        // The ACK of segment 3 starts recovery with pipe 18 (22 sent, 3 SACKed, segment 0 lost).
        let mut pipe = 18u64;
        let mut sent = Vec::new();
        for ack in 3..20u64 {
            if ack > 3 {
                pipe -= 1; // each ACK SACKs one segment
            }
            prr.on_ack(1, pipe, ssthresh, mss, RecoveryRate::Rfc6937Ssrb);
            let mut n = 0;
            while prr.allows(1) {
                prr.on_sent(1);
                n += 1;
            }
            pipe += n;
            sent.push((ack, n));
        }
        // RFC 6937 §3.1 "PRR" row: the retransmission on ACK 3, then one new segment on ACKs 5, 7,
        // ..., 15 (the proportional part, ssthresh / RecoverFS = 1/2).
        let on: Vec<u64> = sent.iter().filter(|&&(_, n)| n > 0).map(|&(a, _)| a).collect();
        assert!(sent.iter().all(|&(_, n)| n <= 1), "{sent:?}");
        assert_eq!(on[..7], [3, 5, 7, 9, 11, 13, 15], "{sent:?}");
        // The figure puts the last sends on ACKs 18 and 19 ("s"); its own pseudocode (§3)
        // sends on ACK 17, where pipe (11) is still above ssthresh and
        // CEIL(15 * 10 / 20) - 7 = 1, after which pipe stays at ssthresh: the figure's pipe row
        // (12, 11, 10 after ACKs 17, 18, 19) agrees with the pseudocode, not with its sent row.
        assert_eq!(on[7..], [17], "{sent:?}");
        assert_eq!(pipe, ssthresh, "PRR ends recovery with pipe at ssthresh");
    }

    /// RFC 6937 §3.1, 15 segments lost (0-14): five ACKs return, the third (of segment 17)
    /// starts recovery with pipe 4 below ssthresh. PRR-CRB sends one segment per ACK (pipe
    /// stays at 4, "RB: b"); PRR-SSRB sends two (pipe 4, 5, 6, "RB: bd d d").
    #[test]
    fn rfc6937_burst_loss_crb_conserves_and_ssrb_slow_starts() {
        let (ssthresh, mss) = (10u64, 1u64);
        for (rate, pipes, sends) in
            [(RecoveryRate::Rfc6937Crb, [4, 4, 4], [1, 1, 1]), (RecoveryRate::Rfc6937Ssrb, [4, 5, 6], [2, 2, 2])]
        {
            let mut prr = Prr::start(22);
            // After the ACK of segment 17: 22 sent, 3 SACKed, 15 lost.
            let mut pipe = 4u64;
            for (i, (&want_pipe, &want_sent)) in pipes.iter().zip(&sends).enumerate() {
                if i > 0 {
                    pipe -= 1; // the ACK SACKs one more segment
                }
                assert_eq!(pipe, want_pipe, "{rate:?} ACK {}", 17 + i);
                prr.on_ack(1, pipe, ssthresh, mss, rate);
                let mut n = 0;
                while prr.allows(1) {
                    prr.on_sent(1);
                    n += 1;
                }
                assert_eq!(n, want_sent, "{rate:?} ACK {}", 17 + i);
                pipe += n;
            }
        }
    }

    /// RFC 6937 §3: in the proportional part prr_out follows prr_delivered * ssthresh /
    /// RecoverFS, rounded up, whatever the ACK sizes (here CUBIC's 0.7: 14 of 20).
    #[test]
    fn rfc6937_proportional_part_tracks_the_ratio_in_bytes() {
        let mss = 1000u64;
        let (recover_fs, ssthresh) = (20 * mss, 14 * mss);
        let mut prr = Prr::start(recover_fs);
        let mut delivered = 0;
        for d in [mss, 2 * mss, 500, mss, 3 * mss, 1500] {
            delivered += d;
            // pipe stays above ssthresh throughout.
            prr.on_ack(d, 19 * mss, ssthresh, mss, RecoveryRate::Rfc6937Ssrb);
            let allowed = (delivered * ssthresh).div_ceil(recover_fs);
            assert_eq!(prr.out + prr.sndcnt, allowed.max(prr.out));
            prr.on_sent(prr.sndcnt);
        }
        assert_eq!(prr.out, (delivered * ssthresh).div_ceil(recover_fs));
    }
}
