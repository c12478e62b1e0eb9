//! The socket's side of RACK-TLP (RFC 8985, `tcp.loss_detection = "rack"`): what each ACK, timer
//! and transmission tells [`crate::tcp::rack::Rack`], and how its marks drive SACK recovery. The
//! model and its sources are in `tcp/rack.rs` and `docs/models/rack.md`.

use super::TcpSocket;
use crate::packet::TcpHeader;
use crate::spec::LossDetection;
use crate::tcp::rack::TlpOutcome;
use crate::time::SimTime;

impl TcpSocket {
    /// RACK-TLP is in force: configured, on a SACK connection (RFC 8985 §3: it needs SACK; a
    /// connection without it detects losses by duplicate ACKs).
    #[inline]
    pub(super) fn rack_on(&self) -> bool {
        // `sack_ok` first: without SACK (the 2001 models) the configuration's line is not read.
        self.sack_ok && self.cfg.loss_detection == LossDetection::Rack
    }

    /// RACK's view of the pipe (RFC 6675 SetPipe() with RACK's lost marks for IsLost()).
    pub(super) fn rack_pipe(&self) -> u64 {
        self.scoreboard.rack().map_or(0, |r| r.pipe(self.snd_max - self.snd_una))
    }

    /// The pipe of SACK recovery: RACK's, or RFC 6675's with IsLost's threshold.
    pub(super) fn recovery_pipe(&self) -> u64 {
        if self.rack_on() {
            return self.rack_pipe();
        }
        let t = self.scoreboard.lost_threshold(self.win.mss, self.cfg.dupack_threshold);
        self.scoreboard.pipe(self.snd_una, self.snd_max, t)
    }

    /// After a timeout, until the data outstanding then is acknowledged (Linux's Loss state:
    /// `icsk_ca_state == TCP_CA_Loss` until snd_una passes high_seq).
    fn in_loss_state(&self) -> bool {
        self.ecn_reduction.after_timeout && self.snd_una < self.recover
    }

    /// RACK.min_RTT (RFC 8985 §6.2 step 1), ns: the smallest RTT measured.
    /// DEVIATION(Linux): not windowed (Linux `tcp_min_rtt()` keeps a 5-minute windowed minimum).
    fn rack_min_rtt(&self) -> u64 {
        self.min_rtt.get().map_or(0, |d| d.as_nanos())
    }

    /// An ACK's SACK blocks, before the scoreboard takes them: the segments `pieces` newly covers
    /// (`newly_sacked`, in sequence order, as RFC 8985 §6.2 step 3 takes them in ascending end_seq)
    /// are delivered (RFC 8985 §6.2 steps 2-3). Returns RACK.fack as it was before this ACK.
    #[inline(never)]
    pub(super) fn rack_sacks(&mut self, now: SimTime, pieces: &[(u64, u64)]) -> u64 {
        let min_rtt = self.rack_min_rtt();
        let rack = self.scoreboard.rack_mut();
        let fack_before = rack.fack();
        for &(l, r) in pieces {
            rack.on_sacked(l, r, now, min_rtt, fack_before);
        }
        fack_before
    }

    /// A cumulative ACK up to `ack`, before the socket processes it (so that RACK's pipe, read by
    /// BBR and PRR on this ACK, no longer counts what it acknowledges). Returns RACK.fack as it was
    /// before this ACK (`fack_before` if the SACK blocks were taken first).
    #[inline(never)]
    pub(super) fn rack_cum_ack(&mut self, now: SimTime, ack: u64, fack_before: Option<u64>) -> u64 {
        let min_rtt = self.rack_min_rtt();
        let rack = self.scoreboard.rack_mut();
        let fack_before = fack_before.unwrap_or_else(|| rack.fack());
        rack.on_cum_ack(ack, now, min_rtt, fack_before);
        fack_before
    }

    /// RFC 8985 §6.2 and §7.2-§7.4 once the ACK has been processed: the cumulative deliveries, the
    /// TLP episode, loss detection (entering recovery on a new loss) and the timers.
    #[inline(never)]
    pub(super) fn rack_after_ack(
        &mut self,
        now: SimTime,
        h: &TcpHeader,
        advanced: bool,
        new_sack: bool,
        fack_before: Option<u64>,
    ) {
        let min_rtt = self.rack_min_rtt();
        let srtt = self.rtt.srtt().map(|d| d.as_nanos());
        let in_recovery = self.in_recovery || self.in_loss_state();
        let dupthresh = self.cfg.dupack_threshold;
        let rack = self.scoreboard.rack_mut();
        let fack_before = fack_before.unwrap_or_else(|| rack.fack());
        rack.on_cum_ack(self.snd_una, now, min_rtt, fack_before);
        // RFC 8985 §7.4: the TLP episode's outcome.
        let pure_dup = !advanced && !new_sack && h.payload == 0;
        let outcome = rack.tlp_on_ack(h.ack, pure_dup);
        // RFC 8985 §6.2 steps 4-5.
        let reo_wnd = rack.reo_wnd(in_recovery, dupthresh, min_rtt, srtt);
        let detected = rack.detect_loss(now, reo_wnd);
        if detected.bytes > 0 {
            if let Some(b) = self.cc_state.bbr() {
                // Linux tcp_ack(): what tcp_rack_detect_loss() marks on an ACK is its rs->losses (the
                // reordering timer's marks, between ACKs, are in no ACK's sample).
                b.on_lost(detected.bytes);
            }
        }
        if outcome == TlpOutcome::Repaired {
            self.tlp_reduction(now);
        }
        if detected.lost > 0 && !self.in_recovery && !self.sack_timeout_recovery() {
            // RFC 8985 §6.2 step 5 / RFC 6675 §5: a segment marked lost starts fast recovery.
            self.loss_detected(now);
        }
        // RFC 8985 §7.2: (re)start the PTO on an ACK of new data.
        if advanced {
            self.rack_arm_pto(now);
        } else if self.scoreboard.rack().is_some_and(|r| r.sacked_bytes() > 0) {
            // RFC 8985 §7.2: no probe with SACKed data (RACK's reordering timer covers it).
            self.scoreboard.rack_mut().disarm_pto();
        }
        self.rack_wake();
    }

    /// RFC 8985 §7.4.2: a TLP retransmission repaired a loss: the congestion control reduces as for
    /// one congestion signal (Linux tcp_process_tlp_ack(): tcp_init_cwnd_reduction() and
    /// tcp_end_cwnd_reduction(), cwnd = ssthresh; CWR queued as for any reduction).
    fn tlp_reduction(&mut self, now: SimTime) {
        let basis = self.win.cwnd;
        self.cc.on_ecn_echo(&mut self.cc_state, &mut self.win, basis, self.snd_max, now);
        self.win.acc = 0;
        self.note_window_reduced();
        self.ecn_reduction.after_loss = false;
    }

    /// RFC 8985 §7.2: arm the probe timer if a probe may be scheduled now, else disarm it.
    fn rack_arm_pto(&mut self, now: SimTime) {
        // RFC 8985 §7.2: data outstanding, no SACKed data, not in (fast or RTO) recovery.
        let sacked = self.scoreboard.rack().is_some_and(|r| r.sacked_bytes() > 0);
        let ok = self.snd_max > self.snd_una && !sacked && !self.in_recovery && !self.in_loss_state();
        let one_segment = self.snd_max - self.snd_una <= self.win.mss;
        let srtt = self.rtt.srtt();
        let rto_at = self.rto_deadline.get();
        let rack = self.scoreboard.rack_mut();
        if ok {
            rack.arm_pto(now, srtt, one_segment, rto_at);
        } else {
            rack.disarm_pto();
        }
    }

    /// Keep the socket's wake-up at or before RACK's timers (they ride on `wake_at`, which the
    /// simulation already watches: a stale wake-up finds nothing due and re-arms).
    fn rack_wake(&mut self) {
        if let Some(d) = self.scoreboard.rack().and_then(super::super::rack::Rack::next_deadline) {
            self.wake_at = self.wake_at.earliest(crate::tcp::Opt::some(d));
        }
    }

    /// RACK's timers at `now` (RFC 8985 §6.3 the reordering timer, §7.3 the probe timer).
    #[inline(never)]
    pub(super) fn on_rack_timer(&mut self, now: SimTime) {
        if self.scoreboard.rack().is_none() {
            return;
        }
        let min_rtt = self.rack_min_rtt();
        let srtt = self.rtt.srtt().map(|d| d.as_nanos());
        let in_recovery = self.in_recovery || self.in_loss_state();
        let dupthresh = self.cfg.dupack_threshold;
        let rack = self.scoreboard.rack_mut();
        if rack.take_reo_timer(now) {
            // RFC 8985 §6.3: RACK_detect_loss_and_arm_timer() when the reordering timer expires.
            let reo_wnd = rack.reo_wnd(in_recovery, dupthresh, min_rtt, srtt);
            let detected = rack.detect_loss(now, reo_wnd);
            if detected.lost > 0 && !self.in_recovery && !self.sack_timeout_recovery() {
                self.loss_detected(now);
            }
        }
        let rack = self.scoreboard.rack_mut();
        if rack.take_pto(now) && rack.on_pto() && self.snd_max > self.snd_una {
            // RFC 8985 §7.3: send a probe now (a new segment, or the last one again).
            self.retransmit_due = true;
            // RFC 8985 §7.3: the RTO timer restarts from the probe (Linux tcp_send_loss_probe():
            // tcp_rearm_rto()).
            self.arm_rto(now);
        }
        self.rack_wake();
    }

    /// A retransmission timeout under RACK (RFC 8985 §6.3): the marks, and the first retransmission.
    /// `keep`: the SACKs are kept (`sack_after_timeout = "keep"`, and the receiver has not reneged).
    pub(super) fn rack_on_rto(&mut self, now: SimTime, keep: bool) {
        let min_rtt = self.rack_min_rtt();
        let srtt = self.rtt.srtt().map(|d| d.as_nanos());
        let dupthresh = self.cfg.dupack_threshold;
        let rack = self.scoreboard.rack_mut();
        // RFC 8985 §6.3: in RTO recovery the reordering window is 0 unless reordering was seen.
        let reo_wnd = rack.reo_wnd(true, dupthresh, min_rtt, srtt);
        rack.on_rto(now, reo_wnd, keep);
        // Linux tcp_retransmit_timer(): the head is retransmitted at once, whatever the pipe.
        self.retransmit_due = true;
    }

    /// What a due retransmission resends under RACK: the loss probe (RFC 8985 §7.3: new data if the
    /// receive window allows, else the highest segment sent), or the first segment marked lost.
    pub(super) fn rack_retransmit_seq(&mut self, data_end: u64) -> u64 {
        let snd_una = self.snd_una;
        let mss = self.win.mss;
        let (snd_max, snd_nxt, rwnd_end) = (self.snd_max, self.snd_nxt, self.snd_una + self.snd_wnd);
        let rack = self.scoreboard.rack_mut();
        if rack.probe_due() {
            let len = mss.min(data_end.saturating_sub(snd_max));
            // RFC 8985 §7.3: a previously unsent segment if the receive window allows it ...
            if len > 0 && snd_nxt == snd_max && snd_max + len <= rwnd_end {
                return snd_max;
            }
            // ... else the most recently sent segment (Linux: the tail of the write queue).
            return rack.last_segment_start().unwrap_or(snd_una);
        }
        rack.next_lost().unwrap_or(snd_una)
    }

    /// NextSeg() of SACK recovery (and of the Loss state after a timeout) under RACK: a segment
    /// marked lost, then new data, while the rate allows (PRR in fast recovery where configured,
    /// else RFC 6675 §5 step (C): cwnd - pipe >= 1 SMSS). No RFC 6675 rule (3)/(4): Linux
    /// tcp_xmit_retransmit_queue() resends only what is marked lost.
    pub(super) fn next_seg_rack(&mut self, data_end: u64) -> Option<u64> {
        let mss = self.win.mss;
        if self.sack_recovery() && self.prr_configured() {
            // RFC 6937 §3: what sndcnt allows on this ACK.
            if !self.scoreboard.prr_allows(1) {
                return None;
            }
        } else if self.win.cwnd < self.rack_pipe() + mss {
            return None;
        }
        if let Some(s) = self.scoreboard.rack_mut().next_lost() {
            return Some(s);
        }
        // RFC 6675 §4 NextSeg (2): new data, if the receive window allows.
        let seq = self.snd_max;
        let len = mss.min(data_end.saturating_sub(seq));
        (len > 0 && seq + len <= self.snd_una + self.snd_wnd.min(self.win.max_cwnd)).then_some(seq)
    }

    /// A data segment `[seq, end)` left at `now`: RACK records it; the loss probe begins its episode
    /// (RFC 8985 §7.3); new data (re)starts the probe timer (§7.2).
    #[inline(never)]
    pub(super) fn rack_after_send(&mut self, now: SimTime, seq: u64, end: u64, retransmit: bool) {
        let snd_max = self.snd_max;
        let rack = self.scoreboard.rack_mut();
        let probe = rack.probe_due();
        rack.on_sent(seq, end, now, retransmit);
        if probe {
            rack.probe_sent(snd_max, retransmit);
        } else if !retransmit {
            // RFC 8985 §7.2: the PTO is (re)started after new data is sent.
            self.rack_arm_pto(now);
        }
        self.rack_wake();
    }

    /// RACK-TLP's state (for tests).
    #[cfg(test)]
    pub(crate) fn rack_state(&self) -> Option<&crate::tcp::rack::Rack> {
        self.scoreboard.rack()
    }
}
