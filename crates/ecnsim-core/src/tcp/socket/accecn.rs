//! The socket's side of Accurate ECN (RFC 9768): the points of the handshake and of segment
//! arrival and sending where AccECN replaces RFC 3168's feedback. The counters, encodings and
//! decoding rules themselves are in `tcp/accecn.rs`.
//!
//! An AccECN connection (`TcpSocket::accecn` is set) differs from an RFC 3168 one in three
//! places only: the handshake (RFC 9768 §3.1), how an arriving segment's ECN flags and option
//! are read (§3.2: into a count of new CE marks, which the rest of the socket sees as an ECE
//! flag on the ACK that reported them, so that RFC 3168's once-per-window response applies to
//! every congestion control but DCTCP, which takes the exact counts), and what a sent segment
//! carries (the ACE field, the option, never CWR: §3.1.5).

use super::{TcpSocket, Transmit};
use crate::packet::{Ecn, TcpFlags, TcpHeader};
use crate::spec::{EcnFeedback, EcnPolicy};
use crate::tcp::accecn::{self, AccEcn, AccEcnCounts, Mode};
use crate::tcp::state::TcpState;
use crate::time::SimTime;

impl TcpSocket {
    /// True if AccECN feedback was negotiated on this connection (RFC 9768 §3.1).
    #[must_use]
    pub fn accecn_negotiated(&self) -> bool {
        self.accecn.is_some()
    }

    /// The marks this end's peer has fed back so far by AccECN (as the Data Sender), if AccECN
    /// was negotiated.
    #[must_use]
    pub fn accecn_counts(&self) -> Option<AccEcnCounts> {
        self.accecn.as_deref().map(AccEcn::counts)
    }

    /// This end asks for AccECN in its SYN (RFC 9768 §3.1.1).
    pub(super) fn requests_accecn(&self) -> bool {
        self.cfg.ecn == EcnPolicy::Request && self.cfg.ecn_feedback == EcnFeedback::Accecn
    }

    /// Enter AccECN mode with `state`.
    fn enter_accecn(&mut self, state: AccEcn) {
        self.ecn.ok = true;
        self.accecn = Some(Box::new(state));
        if let Some(d) = self.cc_state.dctcp() {
            d.use_accecn();
        }
    }

    /// Without a handshake (`assume_negotiated`): AccECN as the handshake would have set it up,
    /// each end's options taken as available if it sends them.
    pub(super) fn assume_accecn(&mut self) {
        if self.cfg.ecn_feedback == EcnFeedback::Accecn {
            self.enter_accecn(AccEcn::new(self.cfg.accecn_option));
        }
    }

    /// Server, a SYN in LISTEN that arrived with `ecn`: RFC 9768 Table 2's third block; true if it
    /// asks for AccECN and this end offers it (then the mode is AccECN).
    pub(super) fn accecn_on_syn(&mut self, h: &TcpHeader, ecn: Ecn) -> bool {
        if self.cfg.ecn == EcnPolicy::Off || self.cfg.ecn_feedback != EcnFeedback::Accecn {
            return false;
        }
        let Mode::AccEcn(_) = accecn::server_mode(accecn::ace_of(h)) else { return false };
        // RFC 9768 §3.1.1: both half connections into AccECN mode; the peer's options are known
        // available once the first ACK of our ISN carries one (§3.2.3.2.3).
        let mut a = AccEcn::new(false);
        // RFC 9768 §3.1.1: the SYN-ACK feeds back the SYN's IP-ECN field (§3.2.2.2: a CE-marked
        // SYN does not count in r.cep).
        a.syn_ecn = ecn;
        self.enter_accecn(a);
        true
    }

    /// Server, another SYN in SYN-RECEIVED.
    pub(super) fn accecn_on_syn_again(&mut self, h: &TcpHeader, ecn: Ecn) {
        if let Some(a) = self.accecn.as_deref_mut() {
            // RFC 9768 §3.1.5: feed back the IP-ECN field of the latest valid SYN.
            a.syn_ecn = ecn;
            if accecn::ace_of(h) == 0 {
                // RFC 9768 §3.1.5: after a (0,0,0) SYN a server in AccECN mode MUST NOT set ECT.
                a.send_ect = false;
            }
        }
    }

    /// Server, the SYN-ACK's ECN flags and option (RFC 9768 Table 2's top block, §3.2.3.2.1).
    pub(super) fn accecn_write_synack(&self, h: &mut TcpHeader) {
        if let Some(a) = self.accecn.as_deref() {
            accecn::set_ace(h, accecn::handshake_ace(a.syn_ecn));
            // RFC 9768 §3.2.3.2.1: a server confirming AccECN SHOULD include the option on the SYN-ACK.
            h.accecn = if self.cfg.accecn_option { a.option(true) } else { Default::default() };
        }
    }

    /// Client, a SYN-ACK in SYN-SENT that arrived with `ecn`, having asked for AccECN. Returns
    /// false, having changed nothing, unless it confirms AccECN (RFC 9768 Table 2's top block,
    /// §3.1.3's reserved combination); a Classic or no-ECN answer goes on as RFC 3168's.
    pub(super) fn accecn_on_synack(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) -> bool {
        let Mode::AccEcn(syn_ecn) = accecn::client_mode(accecn::ace_of(h)) else { return false };
        // RFC 9768 §3.1.1 / §3.2.3.2.3: the options are available if the SYN-ACK carries one.
        self.enter_accecn(AccEcn::client(h.accecn.is_present(), ecn));
        self.sack_ok = h.sack_permitted && self.cfg.offers_sack();
        self.rcv_nxt = h.seq + 1;
        self.snd_una = h.ack;
        self.snd_nxt = self.snd_nxt.max(h.ack);
        self.snd_wnd = u64::from(h.window);
        self.handshake_done(now);
        if syn_ecn == Some(Ecn::Ce) {
            // RFC 9768 §3.2.2.2: feedback of a CE-marked SYN "triggers the congestion control
            // actions necessary"; ecnsim's choice of action is RFC 5562 §3.2's for a CE-marked
            // SYN-ACK: an initial window of one segment.
            self.win.cwnd = self.win.mss;
        }
        // RFC 793 §3.4: the third segment of the handshake ACKs the SYN-ACK (a pure ACK first,
        // `poll_accecn_handshake_ack`).
        self.ack_now = true;
        true
    }

    /// Client, a SYN-ACK arriving again once ESTABLISHED (our ACK of it was lost).
    pub(super) fn accecn_on_synack_again(&mut self, ecn: Ecn) {
        if let Some(a) = self.accecn.as_deref_mut() {
            // RFC 9768 §3.2.2.1: the pure ACK of any retransmitted SYN-ACK uses the handshake encoding.
            a.handshake_ack = Some(accecn::handshake_ace(ecn));
        }
    }

    /// Server, the ACK that completes the handshake: RFC 9768 Table 4 for a pure ACK without SACK
    /// blocks. Returns the segment to process further with its ACE field cleared (it is no ECN-Echo).
    pub(super) fn accecn_on_handshake_ack(&mut self, h: &TcpHeader) -> Option<TcpHeader> {
        let a = self.accecn.as_deref_mut()?;
        // RFC 9768 §3.2.3.2.3: options are available if the first segment to acknowledge the ISN has one.
        a.set_peer_option(h.accecn.is_present());
        if h.payload == 0 && h.sack_len == 0 && a.on_handshake_ack(accecn::ace_of(h)) {
            // RFC 9768 §3.2.2.2: a server told of a CE-marked SYN-ACK "triggers the congestion
            // control actions necessary": RFC 5562 §3.2's initial window of one segment (as
            // `handshake_done` applies it), without RFC 5562's resent SYN-ACK.
            self.ecn_setup.synack_marked = true;
        }
        let mut rest = *h;
        accecn::set_ace(&mut rest, 0);
        Some(rest)
    }

    /// Client: the pure ACK of the SYN-ACK with RFC 9768 §3.2.2.1's handshake encoding, due before
    /// any data (the SHOULD of §3.2.2.1: "it SHOULD first send a pure ACK").
    pub(super) fn poll_accecn_handshake_ack(&mut self, header: &mut TcpHeader) -> Option<Transmit> {
        let code = self.accecn.as_deref_mut()?.handshake_ack.take()?;
        self.write_header(header, self.snd_nxt, 0);
        accecn::set_ace(header, code);
        self.counters.segments_sent += 1;
        self.counters.acks_sent += 1;
        self.ack_sent();
        Some(Transmit { ecn: self.control_ecn(), last: false })
    }

    /// Write the ACE field and the option of a segment with SYN = 0 (RFC 9768 §3.2.2.2, §3.2.3.3).
    #[inline]
    pub(super) fn accecn_write(&self, h: &mut TcpHeader) {
        if let Some(a) = self.accecn.as_deref() {
            a.write(h, self.cfg.accecn_option);
        }
    }

    /// Any segment sent carries the current feedback.
    pub(super) fn accecn_ack_sent(&mut self) {
        if let Some(a) = self.accecn.as_deref_mut() {
            a.on_ack_sent();
        }
    }

    /// Whether data may go ECT (RFC 9768 §3.1.5, Table 4 Note 1).
    pub(super) fn accecn_sends_ect(&self) -> bool {
        self.accecn.as_deref().is_none_or(|a| a.send_ect)
    }

    /// A segment on a synchronized AccECN connection (in place of RFC 3168 §6.1.3's echo and
    /// RFC 8257 §3.2's receiver): count what arrived as the Data Receiver, decode the feedback as
    /// the Data Sender, then process the segment with its ECN flags read as one ECN-Echo, set if
    /// the ACK reports new CE marks.
    pub(super) fn accecn_on_segment(&mut self, now: SimTime, h: &TcpHeader, ecn: Ecn) {
        let (mss, snd_una, snd_max) = (self.win.mss, self.snd_una, self.snd_max);
        let a = self.accecn.as_deref_mut().expect("an AccECN connection");
        // RFC 9768 §3.2.2.5.1: change-triggered ACK.
        let mut ack_now = a.on_arrival(ecn, h.payload) && self.state.can_receive();
        let mut rest = *h;
        accecn::set_ace(&mut rest, 0);
        // RFC 9768 Appendix A.1: the feedback of an ACK that acknowledges nothing new is not read
        // (it may be superseded); the counters are cumulative, so the next ACK of new data carries it.
        if h.flags.contains(TcpFlags::ACK) && h.ack > snd_una && h.ack <= snd_max {
            let d = a.on_feedback(h, h.ack - snd_una, mss);
            if d.packets > 0 {
                rest.flags.insert(TcpFlags::ECE);
            }
            if let Some(dctcp) = self.cc_state.dctcp() {
                dctcp.on_accecn_feedback(d.packets, d.bytes);
            }
            if let Some(prague) = self.cc_state.prague() {
                prague.on_accecn_feedback(d.packets);
            }
        }
        if rest.flags.contains(TcpFlags::ACK) {
            self.on_ack(now, &rest);
        }
        if self.state.can_receive() || self.peer_fin.is_some() {
            self.on_data(now, &rest);
        }
        // RFC 9768 §3.2.2.5.1: increment-triggered ACK (n = 2 with data to acknowledge, else 3).
        let data_unacked = self.unacked_segments > 0 || self.delack_deadline.is_some();
        ack_now |= self.accecn.as_deref().is_some_and(|a| a.increment_trigger(data_unacked));
        if ack_now && self.state != TcpState::Closed {
            self.ack_now = true;
        }
    }
}
