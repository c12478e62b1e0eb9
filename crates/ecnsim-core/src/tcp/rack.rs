//! RACK-TLP loss detection (RFC 8985), `tcp.loss_detection = "rack"` on a SACK connection.
//!
//! Read first: RFC 8985 §5 (the per-segment and per-connection state), §6.2 (RACK on each ACK:
//! steps 1-5), §6.3 (the reordering timer, and the marks at a timeout), §7 (the Tail Loss Probe);
//! Linux 6.x `net/ipv4/tcp_recovery.c` (`tcp_rack_detect_loss()`, `tcp_rack_advance()`,
//! `tcp_rack_reo_wnd()`), `tcp_output.c` (`tcp_schedule_loss_probe()`, `tcp_send_loss_probe()`),
//! `tcp_input.c` (`tcp_process_tlp_ack()`).
//!
//! The record is the connection's sent segments in sequence order (RFC 8985 §5.2's per-segment
//! variables: the latest transmit time, retransmitted, lost, delivered by SACK), and a second queue
//! of the same segments in transmit-time order (Linux's `tsorted_sent_queue`), so that the loss scan
//! of §6.2 step 5 stops at the first segment sent after the most recently delivered one instead of
//! walking the whole flight. Entries of that queue are removed lazily: an entry is live while its
//! segment is outstanding, unSACKed, not already marked lost, and its transmit time is the entry's
//! (a retransmission pushes a new entry). Both queues grow by doubling to the largest flight and are
//! then reused: no allocation in steady state. The state sits behind the scoreboard's out-of-line
//! pointer, so a connection without RACK pays nothing.
//!
//! DEVIATION(RFC 8985): the receiver sends no DSACK (RFC 2883), so the reordering window's
//! multiplier `RACK.reo_wnd_mult` stays 1 (§6.2 step 4's DSACK adaptation is not modelled), and a TLP
//! retransmission is judged by the ACKs alone (§7.4: a repaired loss unless a pure duplicate ACK of
//! the probe says both copies arrived).

use std::collections::VecDeque;

use crate::time::{SimDuration, SimTime};

/// Segment flag: some transmission of it was a retransmission (RFC 8985 §5.2 `Segment.retransmitted`).
const RETRANSMITTED: u8 = 1;
/// Segment flag: marked lost (RFC 8985 §5.2 `Segment.lost`), until delivered.
const LOST: u8 = 2;
/// Segment flag: delivered by SACK.
const SACKED: u8 = 4;
/// Segment flag: its latest transmission is a retransmission still counted in flight (Linux
/// `TCPCB_SACKED_RETRANS`); cleared when that retransmission is itself marked lost.
const RXT_OUT: u8 = 8;

/// RFC 8985 §7.2: WCDelAckT, the worst-case delayed-ACK timer, 200 ms.
const WC_DEL_ACK_T: SimDuration = SimDuration::from_millis(200);
/// RFC 8985 §7.2: the PTO without an RTT sample, 1 s.
const PTO_NO_SRTT: SimDuration = SimDuration::from_secs(1);

/// One sent segment `[start, end)`.
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    end: u64,
    /// RFC 8985 §5.2 `Segment.xmit_ts`: its latest transmission, ns.
    ts: u64,
    flags: u8,
}

impl Seg {
    fn len(&self) -> u64 {
        self.end - self.start
    }
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// Whether the loss scan must still judge it: outstanding, unSACKed, and either never marked lost
    /// or retransmitted since (RFC 8985 §6.2 step 5: "not acknowledged yet", and §2.2: a lost
    /// retransmission is detected as any other segment).
    fn judged(&self) -> bool {
        !self.has(SACKED) && (!self.has(LOST) || self.has(RXT_OUT))
    }
}

/// RFC 8985 §6.2 `RACK_sent_after(t1, seq1, t2, seq2)`: (t1, seq1) was sent after (t2, seq2).
fn sent_after(t1: u64, seq1: u64, t2: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// What one ACK or timer left for the socket to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Detected {
    /// Segments newly marked lost.
    pub lost: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// The outcome of an ACK for a TLP episode (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TlpOutcome {
    /// No episode, or it goes on.
    None,
    /// The episode ended with no loss (new data probed and delivered, or both copies arrived).
    NoLoss,
    /// The probe repaired a loss: the congestion control must reduce (RFC 8985 §7.4.2).
    Repaired,
}

/// RACK-TLP's per-connection state (RFC 8985 §5.3) and its record of sent segments.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// Sent segments, outstanding, in sequence order.
    segs: VecDeque<Seg>,
    /// `(end, ts)` of transmissions in transmit-time order (entries removed lazily).
    tsorted: VecDeque<(u64, u64)>,
    /// RFC 8985 §5.3 `RACK.xmit_ts`, ns (0: nothing delivered yet).
    xmit_ts: u64,
    /// RFC 8985 §5.3 `RACK.end_seq`.
    end_seq: u64,
    /// RFC 8985 §5.3 `RACK.rtt`, ns.
    rtt: u64,
    /// RFC 8985 §6.2 step 3 `RACK.fack`: the highest end sequence delivered.
    fack: u64,
    /// RFC 8985 §5.3 `RACK.reordering_seen`.
    reordering_seen: bool,
    /// Bytes of outstanding segments SACKed, and their number.
    sacked: u64,
    sacked_segs: u64,
    /// Bytes of unSACKed segments marked lost (Linux `lost_out`).
    lost: u64,
    /// Bytes of retransmissions in flight (Linux `retrans_out`).
    retrans: u64,
    /// No lost, unretransmitted segment starts below this (where the next retransmission is sought).
    rxt_hint: u64,
    /// RFC 8985 §6.3: the reordering timer.
    reo_deadline: Option<SimTime>,
    /// RFC 8985 §7.2: the loss probe timer.
    pto_deadline: Option<SimTime>,
    /// RFC 8985 §7.3: a probe is due (the PTO fired).
    probe_due: bool,
    /// RFC 8985 §5.4 `TLP.end_seq` (none: no episode).
    tlp_end: Option<u64>,
    /// RFC 8985 §5.4 `TLP.is_retrans`.
    tlp_is_retrans: bool,
    /// Counters: probes sent, episodes that repaired a loss, segments marked lost by RACK.
    pub(crate) probes: u64,
    pub(crate) tlp_repairs: u64,
    pub(crate) marked_lost: u64,
}

impl Rack {
    // ------------------------------------------------------------------
    // Sending
    // ------------------------------------------------------------------

    /// A data segment `[seq, end)` left at `now`; `retransmit` if it resends sequence space.
    pub(crate) fn on_sent(&mut self, seq: u64, end: u64, now: SimTime, retransmit: bool) {
        let ts = now.as_nanos();
        let last = self.segs.back().map_or(seq, |s| s.end);
        if retransmit || seq < last {
            // RFC 8985 §5.2: Segment.xmit_ts is the latest transmission; Segment.retransmitted set.
            let mut i = self.segs.partition_point(|s| s.end <= seq);
            while i < self.segs.len() && self.segs[i].start < end {
                let s = &mut self.segs[i];
                s.ts = ts;
                s.flags |= RETRANSMITTED;
                if !s.has(SACKED) && !s.has(RXT_OUT) {
                    s.flags |= RXT_OUT;
                    self.retrans += s.len();
                }
                self.tsorted.push_back((s.end, ts));
                i += 1;
            }
        }
        if end > last {
            let start = seq.max(last);
            self.segs.push_back(Seg { start, end, ts, flags: 0 });
            self.tsorted.push_back((end, ts));
        }
    }

    /// RFC 8985 §7.3: whether the next segment sent is the loss probe.
    pub(crate) fn probe_due(&self) -> bool {
        self.probe_due
    }

    /// RFC 8985 §7.3: the loss probe left (ending at `end` = SND.NXT after it).
    pub(crate) fn probe_sent(&mut self, end: u64, retransmit: bool) {
        self.probe_due = false;
        self.probes += 1;
        // RFC 8985 §7.3: TLP.end_seq = SND.NXT, TLP.is_retrans as sent.
        self.tlp_end = Some(end);
        self.tlp_is_retrans = retransmit;
    }

    /// RFC 8985 §7.3: the highest segment sent, to probe with when no new data may go.
    pub(crate) fn last_segment_start(&self) -> Option<u64> {
        self.segs.back().map(|s| s.start)
    }

    /// The first segment marked lost and not retransmitted since (Linux tcp_xmit_retransmit_queue():
    /// lost segments in sequence order), if any.
    pub(crate) fn next_lost(&mut self) -> Option<u64> {
        let mut i = self.segs.partition_point(|s| s.end <= self.rxt_hint);
        while let Some(s) = self.segs.get(i) {
            if s.has(LOST) && !s.has(RXT_OUT) && !s.has(SACKED) {
                self.rxt_hint = s.start;
                return Some(s.start);
            }
            i += 1;
        }
        self.rxt_hint = self.segs.back().map_or(self.rxt_hint, |s| s.end);
        None
    }

    /// Octets in flight (Linux tcp_packets_in_flight(): packets_out - (sacked_out + lost_out) +
    /// retrans_out, in bytes): RFC 6675's pipe with RACK's marks for IsLost().
    pub(crate) fn pipe(&self, outstanding: u64) -> u64 {
        (outstanding + self.retrans).saturating_sub(self.sacked + self.lost)
    }

    /// A segment marked lost has not been retransmitted since (Linux `lost_out > retrans_out`).
    pub(crate) fn lost_unretransmitted(&self) -> bool {
        self.lost > self.retrans
    }

    /// Bytes marked lost and not yet delivered (for tests).
    #[cfg(test)]
    pub(crate) fn lost_bytes(&self) -> u64 {
        self.lost
    }

    /// Bytes SACKed.
    pub(crate) fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    // ------------------------------------------------------------------
    // ACKs (RFC 8985 §6.2)
    // ------------------------------------------------------------------

    /// The state of §6.2 steps 2 and 3 before the ACK's deliveries: `fack` as it was.
    pub(crate) fn fack(&self) -> u64 {
        self.fack
    }

    /// RFC 8985 §6.2 steps 2-3 for one delivered segment: RACK.rtt, RACK.xmit_ts, RACK.end_seq,
    /// and reordering (`fack_before`: RACK.fack before this ACK).
    fn delivered(&mut self, s: Seg, now: SimTime, min_rtt: u64, fack_before: u64) {
        // RFC 8985 §6.2 step 3: a never-retransmitted segment delivered below RACK.fack was reordered.
        if s.end < fack_before && !s.has(RETRANSMITTED) {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(s.end);
        let rtt = now.as_nanos().saturating_sub(s.ts);
        // RFC 8985 §6.2 step 2: a retransmission ACKed sooner than min_RTT may be the original's ACK.
        if s.has(RETRANSMITTED) && rtt < min_rtt {
            return;
        }
        // RFC 8985 §6.2 step 2 (segments taken in transmit order: the last one sets RACK.rtt).
        if sent_after(s.ts, s.end, self.xmit_ts, self.end_seq) {
            self.rtt = rtt;
            self.xmit_ts = s.ts;
            self.end_seq = s.end;
        }
    }

    /// A cumulative ACK up to `ack`: segments below it leave the record.
    pub(crate) fn on_cum_ack(&mut self, ack: u64, now: SimTime, min_rtt: u64, fack_before: u64) {
        while let Some(&s) = self.segs.front() {
            if s.end > ack {
                if s.start < ack {
                    // A part of the segment acknowledged: trim it.
                    let cut = ack - s.start;
                    self.uncount(s, cut);
                    self.segs[0].start = ack;
                }
                break;
            }
            self.segs.pop_front();
            if !s.has(SACKED) {
                self.delivered(s, now, min_rtt, fack_before);
            }
            self.uncount(s, s.len());
            if s.has(SACKED) {
                self.sacked_segs -= 1;
            }
        }
        self.rxt_hint = self.rxt_hint.max(ack);
    }

    /// Remove `bytes` of segment `s` from the counters it is in.
    fn uncount(&mut self, s: Seg, bytes: u64) {
        if s.has(SACKED) {
            self.sacked -= bytes;
        } else {
            if s.has(LOST) {
                self.lost -= bytes;
            }
            if s.has(RXT_OUT) {
                self.retrans -= bytes;
            }
        }
    }

    /// `[left, right)` newly SACKed (not SACKed before): every segment wholly inside is delivered.
    pub(crate) fn on_sacked(&mut self, left: u64, right: u64, now: SimTime, min_rtt: u64, fack_before: u64) {
        let mut i = self.segs.partition_point(|s| s.start < left);
        while i < self.segs.len() && self.segs[i].end <= right {
            let s = self.segs[i];
            if !s.has(SACKED) {
                self.uncount(s, s.len());
                self.segs[i].flags = (s.flags | SACKED) & !RXT_OUT;
                self.sacked += s.len();
                self.sacked_segs += 1;
                self.delivered(s, now, min_rtt, fack_before);
            }
            i += 1;
        }
    }

    /// RFC 8985 §6.2 step 4 `RACK_update_reo_wnd()`, with `reo_wnd_mult` = 1 (no DSACK).
    pub(crate) fn reo_wnd(&self, in_recovery: bool, dupthresh: u32, min_rtt: u64, srtt: Option<u64>) -> u64 {
        if !self.reordering_seen {
            // RFC 8985 §6.2 step 4: no reordering seen: no window in recovery, or once DupThresh
            // segments are SACKed (Linux tcp_rack_reo_wnd(): sacked_out >= reordering).
            if in_recovery || self.sacked_segs >= u64::from(dupthresh) {
                return 0;
            }
        }
        // RFC 8985 §6.2 step 4: min(RACK.reo_wnd_mult * RACK.min_RTT / 4, SRTT).
        let w = min_rtt / 4;
        srtt.map_or(w, |s| w.min(s))
    }

    /// RFC 8985 §6.2 step 5 `RACK_detect_loss()` and §6.3's timer: marks what is lost, and arms
    /// the reordering timer for the rest of what was sent before RACK.xmit_ts.
    pub(crate) fn detect_loss(&mut self, now: SimTime, reo_wnd: u64) -> Detected {
        let mut out = Detected::default();
        let mut timeout = 0u64;
        let now_ns = now.as_nanos();
        let mut k = 0;
        while let Some(&(end, ts)) = self.tsorted.get(k) {
            if k == 0 && self.segs.front().is_none_or(|f| end <= f.start) {
                // Cumulatively acknowledged: gone from the record (no search needed).
                self.tsorted.pop_front();
                continue;
            }
            let idx = self.segs.partition_point(|s| s.end < end);
            let live = self.segs.get(idx).filter(|s| s.end == end && s.ts == ts && s.judged()).is_some();
            if !live {
                if k == 0 {
                    self.tsorted.pop_front();
                } else {
                    k += 1;
                }
                continue;
            }
            // RFC 8985 §6.2 step 5: only segments sent before the most recently delivered one.
            if !sent_after(self.xmit_ts, self.end_seq, ts, end) {
                break;
            }
            // RFC 8985 §6.2 step 5: remaining = Segment.xmit_ts + RACK.rtt + RACK.reo_wnd - Now().
            let due = ts + self.rtt + reo_wnd;
            if due <= now_ns {
                out.bytes += self.segs[idx].len();
                self.mark_lost(idx);
                out.lost += 1;
                if k == 0 {
                    self.tsorted.pop_front();
                } else {
                    k += 1;
                }
            } else {
                // RFC 8985 §6.2 step 5: timeout = max(remaining, timeout) (Linux: the same).
                timeout = timeout.max(due - now_ns);
                k += 1;
            }
        }
        // RFC 8985 §6.3: arm the reordering timer if some segment may yet be lost.
        self.reo_deadline = (timeout > 0).then(|| now + SimDuration::from_nanos(timeout));
        out
    }

    /// RFC 8985 §6.2 step 5: `Segment.lost = TRUE` (a retransmission lost again is no longer in flight).
    fn mark_lost(&mut self, idx: usize) {
        let s = self.segs[idx];
        if s.has(LOST) {
            // RFC 8985 §2.2 / Linux tcp_mark_skb_lost(): a lost retransmission.
            self.retrans -= s.len();
            self.segs[idx].flags &= !RXT_OUT;
        } else {
            if s.has(RXT_OUT) {
                self.retrans -= s.len();
                self.segs[idx].flags &= !RXT_OUT;
            }
            self.lost += s.len();
            self.segs[idx].flags |= LOST;
        }
        self.marked_lost += 1;
        self.rxt_hint = self.rxt_hint.min(s.start);
    }

    /// A retransmission timeout (RFC 8985 §6.3 `RACK_mark_losses_on_RTO()`): the first outstanding
    /// segment is lost, and every other one sent at least RACK.rtt + `reo_wnd` ago; `keep_sacked`
    /// false forgets the SACKs first (RFC 2018 §8, `tcp.sack_after_timeout = "clear"`), and then
    /// every segment is lost (they are all resent, go-back-N).
    pub(crate) fn on_rto(&mut self, now: SimTime, reo_wnd: u64, keep_sacked: bool) {
        let now_ns = now.as_nanos();
        let first = self.segs.front().map(|s| s.start);
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.has(SACKED) {
                if keep_sacked {
                    continue;
                }
                self.segs[i].flags &= !SACKED;
                self.sacked -= s.len();
                self.sacked_segs -= 1;
            }
            let lost = !keep_sacked || Some(s.start) == first || s.ts + self.rtt + reo_wnd <= now_ns || s.has(LOST);
            // (A segment not lost yet is judged by later ACKs: its entry stays in transmit order.)
            if lost && (!s.has(LOST) || s.has(RXT_OUT)) {
                self.mark_lost(i);
            }
        }
        // The lost segments left the transmit-order queue; those still judged keep their entries.
        self.tsorted.retain(|&(end, ts)| {
            let i = self.segs.partition_point(|s| s.end < end);
            self.segs.get(i).is_some_and(|s| s.end == end && s.ts == ts && s.judged())
        });
        self.reo_deadline = None;
        self.pto_deadline = None;
        self.probe_due = false;
        // RFC 8985 §7.4: a timeout ends the TLP episode.
        self.tlp_end = None;
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// The earlier of the reordering and probe timers.
    pub(crate) fn next_deadline(&self) -> Option<SimTime> {
        match (self.reo_deadline, self.pto_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the reordering timer is due at `now` (and disarm it).
    pub(crate) fn take_reo_timer(&mut self, now: SimTime) -> bool {
        let due = self.reo_deadline.is_some_and(|d| d <= now);
        if due {
            self.reo_deadline = None;
        }
        due
    }

    /// Whether the probe timer is due at `now` (and disarm it).
    pub(crate) fn take_pto(&mut self, now: SimTime) -> bool {
        let due = self.pto_deadline.is_some_and(|d| d <= now);
        if due {
            self.pto_deadline = None;
        }
        due
    }

    /// The probe timer fired: a probe is due unless one is outstanding (Linux tcp_send_loss_probe():
    /// at most one probe per flight, since 5.9). Returns whether a probe is due.
    pub(crate) fn on_pto(&mut self) -> bool {
        self.probe_due = self.tlp_end.is_none();
        self.probe_due
    }

    /// RFC 8985 §7.2: arm the PTO at `now` (none: disarm): 2·SRTT, plus WCDelAckT with one segment
    /// in flight, 1 s without an RTT sample; never later than the retransmission timer `rto_at`.
    pub(crate) fn arm_pto(
        &mut self,
        now: SimTime,
        srtt: Option<SimDuration>,
        one_segment: bool,
        rto_at: Option<SimTime>,
    ) {
        let pto = match srtt {
            // RFC 8985 §7.2: PTO = 2 * SRTT; if FlightSize is one segment, PTO += WCDelAckT.
            Some(s) => {
                SimDuration::from_nanos(2 * s.as_nanos() + if one_segment { WC_DEL_ACK_T.as_nanos() } else { 0 })
            }
            // RFC 8985 §7.2: without an RTT sample, PTO = 1 s.
            None => PTO_NO_SRTT,
        };
        let at = now + pto;
        // RFC 8985 §7.2: PTO = min(PTO, RTO) (the time left on the retransmission timer).
        self.pto_deadline = Some(rto_at.map_or(at, |r| at.min(r)));
    }

    /// Disarm the probe timer.
    pub(crate) fn disarm_pto(&mut self) {
        self.pto_deadline = None;
    }

    /// RFC 8985 §7.4 (Linux tcp_process_tlp_ack()): an ACK up to `ack`; `pure_dup` if it advanced
    /// nothing, SACKed nothing new and carried no data.
    pub(crate) fn tlp_on_ack(&mut self, ack: u64, pure_dup: bool) -> TlpOutcome {
        let Some(end) = self.tlp_end else { return TlpOutcome::None };
        if ack < end {
            return TlpOutcome::None;
        }
        if !self.tlp_is_retrans {
            // RFC 8985 §7.4.2: a probe of new data delivered: the episode ends.
            self.tlp_end = None;
            return TlpOutcome::NoLoss;
        }
        if ack > end {
            // RFC 8985 §7.4.2: the ACK passes the probe with no DSACK: a loss was repaired.
            self.tlp_end = None;
            self.tlp_repairs += 1;
            return TlpOutcome::Repaired;
        }
        if pure_dup {
            // Linux tcp_process_tlp_ack(): a pure duplicate ACK of the probe: both copies arrived.
            self.tlp_end = None;
            return TlpOutcome::NoLoss;
        }
        TlpOutcome::None
    }

    /// The PTO, if armed (for tests).
    #[cfg(test)]
    pub(crate) fn pto_deadline(&self) -> Option<SimTime> {
        self.pto_deadline
    }

    /// The reordering timer, if armed (for tests).
    #[cfg(test)]
    pub(crate) fn reo_deadline(&self) -> Option<SimTime> {
        self.reo_deadline
    }

    /// Whether reordering was seen (for tests).
    #[cfg(test)]
    pub(crate) fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
}
