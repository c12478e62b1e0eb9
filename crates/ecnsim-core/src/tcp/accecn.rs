//! Accurate ECN feedback (AccECN, RFC 9768): the counters each end keeps, the handshake's
//! encodings, the ACE field and the AccECN option, and the Data Sender's decoding with its
//! safety rules against a wrapped ACE field. Pure functions and one state struct; the socket
//! (`tcp/socket/accecn.rs`) calls them at the points where RFC 9768 applies.
//!
//! Read first: RFC 9768 §3.1 (negotiation: Table 2 and §3.1.3's reserved combinations),
//! §3.2.1 (initial counter values), §3.2.2 (the ACE field; §3.2.2.1 the handshake encoding,
//! Tables 3 and 4; §3.2.2.5 the safety procedures), §3.2.3 (the option; §3.2.3.3 when it is
//! sent) and Appendix A.1-A.3 (the example decoding algorithms followed here). Section numbers
//! are those of RFC 9768, whose text is draft-ietf-tcpm-accurate-ecn-34.

use crate::packet::{AccEcnOption, Ecn, TcpFlags, TcpHeader};

/// RFC 9768 §3.2.1: r.cep and s.cep start at 5 (non-zero, so a zeroed field is detectable).
const CEP_INIT: u64 = 5;
/// RFC 9768 §3.2.1: r.e0b and r.e1b (and s.e0b, s.e1b) start at 1; r.ceb and s.ceb at 0.
const EB_INIT: u64 = 1;
/// RFC 9768 Appendix A.2.1: the ACE field carries r.cep modulo 2^3.
const DIVACE: u64 = 8;
/// RFC 9768 Appendix A.1: each option field carries a byte counter modulo 2^24.
const DIVOPT: u64 = 1 << 24;
/// RFC 9768 Appendix A.2.2: SAFETY_FACTOR = 2.
const SAFETY_FACTOR: u64 = 2;

/// Bits of the changed-counter mask (which byte counters have changed during the connection).
const E0B: u8 = 1;
const CEB: u8 = 2;
const E1B: u8 = 4;

/// The three ECN flags of a segment as one number: AE (4), CWR (2), ECE (1), as RFC 9768
/// Figure 3 lays out the ACE field (its least significant bit is ECE's).
#[must_use]
pub(crate) fn ace_of(h: &TcpHeader) -> u8 {
    u8::from(h.ae) << 2 | u8::from(h.flags.contains(TcpFlags::CWR)) << 1 | u8::from(h.flags.contains(TcpFlags::ECE))
}

/// Write `ace` (0..=7) into the AE, CWR and ECE flags of `h`, the other flags untouched.
pub(crate) fn set_ace(h: &mut TcpHeader, ace: u8) {
    debug_assert!(ace < 8);
    h.flags = h.flags.without(TcpFlags::CWR | TcpFlags::ECE);
    if ace & 2 != 0 {
        h.flags.insert(TcpFlags::CWR);
    }
    if ace & 1 != 0 {
        h.flags.insert(TcpFlags::ECE);
    }
    h.ae = ace & 4 != 0;
}

/// The feedback mode a handshake settles on (RFC 9768 Table 2's rightmost column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// AccECN; for a client, with the IP-ECN field its SYN arrived with (none: unknown,
    /// the reserved SYN-ACK of §3.1.3, "as if ... the IP-ECN field on the SYN had arrived unchanged").
    AccEcn(Option<Ecn>),
    /// RFC 3168 feedback.
    Classic,
    /// No ECN.
    NotEcn,
}

/// RFC 9768 Table 2 (second and fourth blocks) and §3.1.3: the mode a client that sent an
/// AccECN SYN enters on a SYN-ACK whose (AE, CWR, ECE) are `ace`.
#[must_use]
pub(crate) fn client_mode(ace: u8) -> Mode {
    match ace {
        // RFC 9768 Table 2, top block: the server confirms AccECN, feeding back the SYN's IP-ECN field.
        0b010 => Mode::AccEcn(Some(Ecn::NotEct)),
        0b011 => Mode::AccEcn(Some(Ecn::Ect1)),
        0b100 => Mode::AccEcn(Some(Ecn::Ect0)),
        0b110 => Mode::AccEcn(Some(Ecn::Ce)),
        // RFC 9768 §3.1.3: the reserved (1,0,1) ("Nonce") enables AccECN as if the SYN's field arrived unchanged.
        0b101 => Mode::AccEcn(None),
        // RFC 9768 Table 2: (0,0,1) is a Classic ECN server.
        0b001 => Mode::Classic,
        // RFC 9768 Table 2: (0,0,0) is a server without ECN; (1,1,1) a broken server that reflects the SYN's flags.
        _ => Mode::NotEcn,
    }
}

/// RFC 9768 Table 2 (third block) and §3.1.3: what a SYN with flags `ace` asks an AccECN server for.
#[must_use]
pub(crate) fn server_mode(ace: u8) -> Mode {
    match ace {
        // RFC 9768 Table 2: (0,0,0) from a client without ECN.
        0b000 => Mode::NotEcn,
        // RFC 9768 Table 2: (0,1,1) is RFC 3168's ECN-setup SYN: Classic ECN.
        0b011 => Mode::Classic,
        // RFC 9768 §3.1.1 (1,1,1), and §3.1.3: any other combination is negotiated as if it were (1,1,1).
        _ => Mode::AccEcn(None),
    }
}

/// RFC 9768 Table 2 (top block) and Table 3: the flags that feed back an IP-ECN field in the
/// handshake: on the SYN-ACK (the SYN's field) and on the client's pure ACK of the SYN-ACK
/// (the SYN-ACK's field).
#[must_use]
pub(crate) fn handshake_ace(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0b010,
        Ecn::Ect1 => 0b011,
        Ecn::Ect0 => 0b100,
        Ecn::Ce => 0b110,
    }
}

/// RFC 9768 Table 4: the server's s.cep after the pure ACK of its SYN-ACK carried `ace`;
/// none for 0b000 (Note 1: do not respond to feedback, do not send ECT).
#[must_use]
pub(crate) fn server_cep_from_handshake_ack(ace: u8) -> Option<u64> {
    match ace {
        0b000 => None,
        // RFC 9768 Table 4: 0b110, the SYN-ACK arrived CE: s.cep = 6.
        0b110 => Some(CEP_INIT + 1),
        // RFC 9768 Table 4: every other value (Notes 2, 3 for 0b001, 0b101, 0b111): s.cep = 5.
        _ => Some(CEP_INIT),
    }
}

/// What the Data Sender has learnt from the feedback so far: the marks its peer reported, in
/// packets and bytes (the s.cep, s.ceb, s.e0b and s.e1b counters of RFC 9768 §3.2 less their
/// initial values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnCounts {
    /// CE-marked packets (s.cep - 5), after the safety rules of RFC 9768 §3.2.2.5.2.
    pub ce_packets: u64,
    /// CE-marked payload bytes (s.ceb), from the AccECN option.
    pub ce_bytes: u64,
    /// ECT(0) payload bytes (s.e0b - 1), from the option.
    pub ect0_bytes: u64,
    /// ECT(1) payload bytes (s.e1b - 1), from the option.
    pub ect1_bytes: u64,
}

/// The marks one ACK newly reports, for the congestion control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delta {
    /// Newly CE-marked packets.
    pub(crate) packets: u64,
    /// Newly CE-marked bytes: from the option's ECEB field, or (without it) `packets` full-sized
    /// segments (RFC 9768 Appendix A.3's estimate with the MSS as the segment size).
    pub(crate) bytes: u64,
}

/// One end's AccECN state: Data Receiver counters (r.*) and Data Sender counters (s.*).
#[derive(Clone, Debug)]
pub(crate) struct AccEcn {
    r_cep: u64,
    r_ceb: u64,
    r_e0b: u64,
    r_e1b: u64,
    /// Which byte counters have changed since the connection began (E0B | CEB | E1B).
    changed: u8,
    /// The previous packet to arrive was CE-marked (RFC 9768 §3.2.2.5.1's change trigger).
    prev_ce: bool,
    /// CE-marked packets since our last ACK (RFC 9768 §3.2.2.5.1's increment trigger).
    ce_since_ack: u32,
    /// Client: the handshake encoding of the SYN-ACK's IP-ECN field owed on a pure ACK
    /// (RFC 9768 §3.2.2.1).
    pub(crate) handshake_ack: Option<u8>,
    /// Segments still to carry the option with all three fields (RFC 9768 §3.2.3.2.1: the
    /// client's ACK of the SYN-ACK and its first data segment).
    full_option_due: u8,
    /// Server: the IP-ECN field of the latest SYN (RFC 9768 §3.1.5: fed back on the SYN-ACK).
    pub(crate) syn_ecn: Ecn,
    s_cep: u64,
    s_ceb: u64,
    s_e0b: u64,
    s_e1b: u64,
    /// The peer sends AccECN options (RFC 9768 §3.2.3.2.3: none on the SYN-ACK, or on the first
    /// ACK of the server's ISN, means not; one arriving later means they are).
    peer_option: bool,
    /// The feedback is acted on (RFC 9768 Table 4 Note 1: not after an ACE of 0 on the ACK of the SYN-ACK).
    pub(crate) respond: bool,
    /// This end may set ECT on what it sends (RFC 9768 §3.1.5 and Table 4 Note 1).
    pub(crate) send_ect: bool,
}

impl AccEcn {
    /// On entering AccECN mode (RFC 9768 §3.2.1's initial values); `peer_option`: whether the
    /// segment that settled the mode carried the AccECN option.
    #[must_use]
    pub(crate) fn new(peer_option: bool) -> Self {
        AccEcn {
            r_cep: CEP_INIT,
            r_ceb: 0,
            r_e0b: EB_INIT,
            r_e1b: EB_INIT,
            changed: 0,
            prev_ce: false,
            ce_since_ack: 0,
            handshake_ack: None,
            full_option_due: 0,
            syn_ecn: Ecn::NotEct,
            s_cep: CEP_INIT,
            s_ceb: 0,
            s_e0b: EB_INIT,
            s_e1b: EB_INIT,
            peer_option,
            respond: true,
            send_ect: true,
        }
    }

    /// A client that has just entered AccECN mode on a SYN-ACK that arrived with `synack_ecn`.
    #[must_use]
    pub(crate) fn client(peer_option: bool, synack_ecn: Ecn) -> Self {
        let mut a = AccEcn::new(peer_option);
        // RFC 9768 §3.2.2.2: a CE-marked SYN-ACK increments r.cep, once however many arrive.
        a.r_cep += u64::from(synack_ecn == Ecn::Ce);
        // RFC 9768 §3.2.2.1: the pure ACK of the SYN-ACK feeds back its IP-ECN field (Table 3).
        a.handshake_ack = Some(handshake_ace(synack_ecn));
        // RFC 9768 §3.2.3.2.1: the option on the first ACK and on the first data segment.
        a.full_option_due = 2;
        a
    }

    /// Whether the peer's AccECN options are available (RFC 9768 §3.2.3.2.3).
    pub(crate) fn set_peer_option(&mut self, available: bool) {
        self.peer_option = available;
    }

    /// What the feedback has reported so far.
    #[must_use]
    pub(crate) fn counts(&self) -> AccEcnCounts {
        AccEcnCounts {
            ce_packets: self.s_cep - CEP_INIT,
            ce_bytes: self.s_ceb,
            ect0_bytes: self.s_e0b - EB_INIT,
            ect1_bytes: self.s_e1b - EB_INIT,
        }
    }

    // ------------------------------------------------------------------
    // Data Receiver
    // ------------------------------------------------------------------

    /// An Acceptable segment with SYN = 0 arrived with IP-ECN `ecn` and `payload` bytes:
    /// RFC 9768 §3.2's counters. Returns true if it must be ACKed at once (§3.2.2.5.1's
    /// change trigger: a CE-marked data packet after a packet that was not CE).
    pub(crate) fn on_arrival(&mut self, ecn: Ecn, payload: u32) -> bool {
        let bytes = u64::from(payload);
        let (counter, bit) = match ecn {
            Ecn::NotEct => (None, 0),
            Ecn::Ect0 => (Some(&mut self.r_e0b), E0B),
            Ecn::Ect1 => (Some(&mut self.r_e1b), E1B),
            Ecn::Ce => {
                // RFC 9768 §3.2: r.cep counts every Acceptable CE packet, control packets and
                // retransmissions included.
                self.r_cep += 1;
                self.ce_since_ack += 1;
                (Some(&mut self.r_ceb), CEB)
            }
        };
        if let Some(c) = counter {
            // RFC 9768 §3.2: the byte counters count payload octets.
            *c += bytes;
            if bytes > 0 {
                self.changed |= bit;
            }
        }
        let ce = ecn == Ecn::Ce;
        // RFC 9768 §3.2.2.5.1: change-triggered ACKs, for data packets only, compared with any packet.
        let trigger = ce && payload > 0 && !self.prev_ce;
        self.prev_ce = ce;
        trigger
    }

    /// RFC 9768 §3.2.2.5.1 (increment-triggered ACKs): an ACK is due once `n` CE marks have
    /// arrived since the last one: n = 2 with data waiting to be acknowledged, 3 without.
    #[must_use]
    pub(crate) fn increment_trigger(&self, data_unacked: bool) -> bool {
        self.ce_since_ack >= if data_unacked { 2 } else { 3 }
    }

    /// Any segment sent carries the current feedback.
    pub(crate) fn on_ack_sent(&mut self) {
        self.ce_since_ack = 0;
        self.full_option_due = self.full_option_due.saturating_sub(1);
    }

    /// Write the feedback into a segment with SYN = 0: the ACE field (RFC 9768 §3.2.2.2: r.cep
    /// modulo 8) and, if `with_option`, the option.
    pub(crate) fn write(&self, h: &mut TcpHeader, with_option: bool) {
        set_ace(h, u8::try_from(self.r_cep % DIVACE).expect("below 8"));
        if with_option {
            h.accecn = self.option(self.full_option_due > 0);
        }
    }

    /// The AccECN option to send (RFC 9768 §3.2.3.3's recommended simple scheme for the fields:
    /// every byte counter that has changed during the connection, in the order that needs the
    /// fewer fields, order 0 on a tie), or none if no counter has changed; all three fields if
    /// `full` (the handshake's segments, §3.2.3.2.1).
    #[must_use]
    pub(crate) fn option(&self, full: bool) -> AccEcnOption {
        let changed = if full { E0B | CEB | E1B } else { self.changed };
        if changed == 0 {
            return AccEcnOption::default();
        }
        // RFC 9768 Table 5: order 0 is EE0B, ECEB, EE1B; order 1 EE1B, ECEB, EE0B; fields are
        // dropped from the tail only.
        let need = |first: u8, last: u8| {
            if changed & last != 0 {
                3
            } else if changed & CEB != 0 {
                2
            } else {
                u8::from(changed & first != 0)
            }
        };
        let (n0, n1) = (need(E0B, E1B), need(E1B, E0B));
        let field = |v: u64| u32::try_from(v % DIVOPT).expect("24 bits");
        let (kind, n, fields) = if n0 <= n1 {
            (AccEcnOption::KIND_ORDER_0, n0, [self.r_e0b, self.r_ceb, self.r_e1b])
        } else {
            (AccEcnOption::KIND_ORDER_1, n1, [self.r_e1b, self.r_ceb, self.r_e0b])
        };
        // RFC 9768 Appendix A.1: each field is the counter modulo 2^24.
        AccEcnOption { kind, len: 2 + 3 * n, fields: fields.map(field) }
    }

    // ------------------------------------------------------------------
    // Data Sender
    // ------------------------------------------------------------------

    /// An ACK with SYN = 0 that acknowledges `newly_acked` > 0 new bytes (so it is not
    /// superseded, RFC 9768 Appendix A.1): decode its ACE field and option into the s.*
    /// counters, and return the marks it newly reports (none if the feedback is not acted on).
    pub(crate) fn on_feedback(&mut self, h: &TcpHeader, newly_acked: u64, mss: u64) -> Delta {
        debug_assert!(newly_acked > 0);
        // RFC 9768 Appendix A.1: d = (field + DIVOPT - (s % DIVOPT)) % DIVOPT, per field present.
        let d_ceb = if h.accecn.is_present() {
            // RFC 9768 §3.2.3.2.3: an option arriving later shows options are no longer blocked.
            self.peer_option = true;
            let (e0b, ceb, e1b) = option_fields(&h.accecn);
            let step = |s: &mut u64, field: Option<u32>| {
                let d = field.map_or(0, |f| (u64::from(f) + DIVOPT - *s % DIVOPT) % DIVOPT);
                *s += d;
                d
            };
            step(&mut self.s_e0b, e0b);
            step(&mut self.s_e1b, e1b);
            Some(step(&mut self.s_ceb, ceb))
        } else if self.peer_option {
            // RFC 9768 §3.2.3.3: an AccECN receiver puts the option on every ACK after a byte
            // counter has incremented; an ACK without one reports no new CE bytes.
            Some(0)
        } else {
            None
        };
        // RFC 9768 §3.2.2.2 / Appendix A.2.1: the least increment of s.cep the ACE field allows.
        let ace = u64::from(ace_of(h));
        let d_cep = (ace + DIVACE - self.s_cep % DIVACE) % DIVACE;
        let d = safer_cep(d_cep, d_ceb, newly_acked / mss.max(1), mss);
        self.s_cep += d;
        if !self.respond {
            return Delta::default();
        }
        Delta { packets: d, bytes: d_ceb.unwrap_or(d * mss) }
    }

    /// The server's s.cep from the pure ACK of its SYN-ACK (RFC 9768 Table 4); returns true if
    /// that ACK fed back a CE-marked SYN-ACK (a congestion response is due).
    pub(crate) fn on_handshake_ack(&mut self, ace: u8) -> bool {
        match server_cep_from_handshake_ack(ace) {
            Some(cep) => {
                self.s_cep = cep;
                cep > CEP_INIT && self.respond
            }
            None => {
                // RFC 9768 Table 4 Note 1: no ECT and no response to feedback for the rest of the
                // connection; as a Data Receiver it keeps feeding back.
                self.respond = false;
                self.send_ect = false;
                false
            }
        }
    }
}

/// The fields of an AccECN option as (EE0B, ECEB, EE1B), each if present (RFC 9768 Table 5;
/// §3.2.3: of any other length, the whole 3-octet fields that fit are used).
#[must_use]
pub(crate) fn option_fields(o: &AccEcnOption) -> (Option<u32>, Option<u32>, Option<u32>) {
    let n = usize::from(o.len.saturating_sub(2) / 3).min(3);
    let at = |i: usize| (i < n).then(|| o.fields[i]);
    if o.kind == AccEcnOption::KIND_ORDER_1 {
        (at(2), at(1), at(0))
    } else {
        (at(0), at(1), at(2))
    }
}

/// RFC 9768 §3.2.2.5.2 with the example algorithms of Appendix A.2: the number of newly CE-marked
/// packets to assume when the ACE field's least increment is `d_cep`, the ACK acknowledges
/// `acked_pkts` full-sized segments, and the option (if any) reports `d_ceb` new CE bytes.
#[must_use]
pub(crate) fn safer_cep(d_cep: u64, d_ceb: Option<u64>, acked_pkts: u64, mss: u64) -> u64 {
    // RFC 9768 §3.2.2.5.2: an ACE increment above the packets acknowledged is taken as correct.
    if acked_pkts <= d_cep {
        return d_cep;
    }
    // RFC 9768 Appendix A.2.1: dSafer.cep = newlyAckedPkt - ((newlyAckedPkt - d.cep) % DIVACE):
    // as if every acknowledged packet was marked, as far as the 3-bit field allows.
    let safer = acked_pkts - (acked_pkts - d_cep) % DIVACE;
    match d_ceb {
        // RFC 9768 Appendix A.2.2: with the option, d.cep is safe enough if the CE bytes fit in
        // d.cep segments (d.ceb <= MSS * d.cep) and spreading them over dSafer.cep segments
        // would make those smaller than MSS / SAFETY_FACTOR (compared without division).
        Some(ceb) if safer > d_cep && ceb <= mss * d_cep && ceb * SAFETY_FACTOR < mss * safer => d_cep,
        _ => safer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(ace: u8) -> TcpHeader {
        let mut h = TcpHeader { flags: TcpFlags::ACK, ..TcpHeader::default() };
        set_ace(&mut h, ace);
        h
    }

    #[test]
    fn the_ace_field_is_ae_cwr_ece_with_ece_least_significant() {
        // RFC 9768 §3.2.2, Figure 3: the least significant bit is at bit offset 9 (ECE).
        for ace in 0..8 {
            let h = header(ace);
            assert_eq!(ace_of(&h), ace);
            assert!(h.flags.contains(TcpFlags::ACK), "the other flags are kept");
        }
        let h = header(0b001);
        assert!(h.flags.contains(TcpFlags::ECE) && !h.flags.contains(TcpFlags::CWR) && !h.ae);
        assert!(header(0b100).ae);
    }

    /// RFC 9768 §3.1.2 Table 2, row by row (and §3.1.3 for the reserved combination).
    #[test]
    fn table_2_negotiation_from_the_clients_side() {
        let rows = [
            (0b010, Mode::AccEcn(Some(Ecn::NotEct))),
            (0b011, Mode::AccEcn(Some(Ecn::Ect1))),
            (0b100, Mode::AccEcn(Some(Ecn::Ect0))),
            (0b110, Mode::AccEcn(Some(Ecn::Ce))),
            // "(Reserved)": §3.1.3, AccECN as if the SYN's IP-ECN field arrived unchanged.
            (0b101, Mode::AccEcn(None)),
            (0b001, Mode::Classic),
            (0b000, Mode::NotEcn),
            // "Broken": a server reflecting the SYN's flags.
            (0b111, Mode::NotEcn),
        ];
        for (ace, mode) in rows {
            assert_eq!(client_mode(ace), mode, "SYN-ACK {ace:03b}");
        }
        // The top block: the SYN-ACK's flags for each IP-ECN field on the SYN.
        for (ecn, ace) in [(Ecn::NotEct, 0b010), (Ecn::Ect1, 0b011), (Ecn::Ect0, 0b100), (Ecn::Ce, 0b110)] {
            assert_eq!(handshake_ace(ecn), ace);
            assert_eq!(client_mode(ace), Mode::AccEcn(Some(ecn)), "round trip of {ecn:?}");
        }
    }

    #[test]
    fn table_2_negotiation_from_the_servers_side() {
        // RFC 9768 Table 2's third block and §3.1.3: (0,0,0) no ECN, (0,1,1) Classic, anything else AccECN.
        assert_eq!(server_mode(0b000), Mode::NotEcn);
        assert_eq!(server_mode(0b011), Mode::Classic);
        for ace in [0b001, 0b010, 0b100, 0b101, 0b110, 0b111] {
            assert_eq!(server_mode(ace), Mode::AccEcn(None), "SYN {ace:03b}");
        }
    }

    /// RFC 9768 §3.2.2.1 Tables 3 and 4.
    #[test]
    fn tables_3_and_4_the_ack_of_the_syn_ack() {
        // Table 3: ACE on the pure ACK of the SYN-ACK and the client's r.cep.
        for (ecn, ace, r_cep) in
            [(Ecn::NotEct, 0b010, 5), (Ecn::Ect1, 0b011, 5), (Ecn::Ect0, 0b100, 5), (Ecn::Ce, 0b110, 6)]
        {
            let a = AccEcn::client(true, ecn);
            assert_eq!((a.handshake_ack, a.r_cep), (Some(ace), r_cep), "{ecn:?}");
        }
        // Table 4: the server's s.cep for each ACE value.
        let want = [None, Some(5), Some(5), Some(5), Some(5), Some(5), Some(6), Some(5)];
        for (ace, cep) in (0..8).zip(want) {
            assert_eq!(server_cep_from_handshake_ack(ace), cep, "ACE {ace:03b}");
        }
        // Note 1: a zero stops the server's ECT and its response to feedback, not its feedback.
        let mut s = AccEcn::new(true);
        assert!(!s.on_handshake_ack(0));
        assert!(!s.respond && !s.send_ect);
        let mut s = AccEcn::new(true);
        assert!(s.on_handshake_ack(0b110), "a CE-marked SYN-ACK calls for a response");
        assert_eq!(s.counts().ce_packets, 1);
    }

    #[test]
    fn counters_start_at_the_specified_values_and_ace_carries_r_cep_mod_8() {
        // RFC 9768 §3.2.1: r.cep = 5, r.e0b = r.e1b = 1, r.ceb = 0.
        let mut a = AccEcn::new(true);
        let mut h = header(0);
        a.write(&mut h, true);
        assert_eq!(ace_of(&h), 5);
        // Nothing has changed: no option.
        assert!(!h.accecn.is_present());
        // Four CE packets: r.cep = 9, ACE = 1 (wrapped).
        for _ in 0..4 {
            a.on_arrival(Ecn::Ce, 1000);
        }
        a.write(&mut h, true);
        assert_eq!(ace_of(&h), 1);
        assert_eq!(option_fields(&h.accecn), (Some(1), Some(4000), None), "EE0B, ECEB: order 0, 8 bytes");
    }

    /// RFC 9768 §3.2.3 Table 5 and §3.2.3.3's examples: only fields that have changed, shortest order.
    #[test]
    fn the_option_carries_the_changed_counters_in_the_shorter_order() {
        let mut a = AccEcn::new(true);
        a.on_arrival(Ecn::Ect0, 1000);
        // "if ECT(0) is the only codepoint that has ever arrived ... an AccECN0 option with only EE0B".
        let o = a.option(false);
        assert_eq!((o.kind, o.len, option_fields(&o)), (172, 5, (Some(1001), None, None)));
        // "as soon as even one CE-marked packet arrives ... two fields, EE0B and ECEB".
        a.on_arrival(Ecn::Ce, 500);
        let o = a.option(false);
        assert_eq!((o.kind, o.len, option_fields(&o)), (172, 8, (Some(1001), Some(500), None)));
        // ECT(1) and CE only: order 1, EE1B then ECEB.
        let mut b = AccEcn::new(true);
        b.on_arrival(Ecn::Ect1, 1000);
        b.on_arrival(Ecn::Ce, 1000);
        let o = b.option(false);
        assert_eq!((o.kind, o.len, option_fields(&o)), (174, 8, (None, Some(1000), Some(1001))));
        // The handshake's segments carry all three fields.
        let o = AccEcn::new(true).option(true);
        assert_eq!((o.kind, o.len, option_fields(&o)), (172, 11, (Some(1), Some(0), Some(1))));
        // Fields are the counters modulo 2^24.
        let mut c = AccEcn::new(true);
        c.on_arrival(Ecn::Ect0, u32::MAX);
        c.on_arrival(Ecn::Ect0, u32::MAX);
        assert_eq!(
            option_fields(&c.option(false)).0,
            Some(u32::try_from((1 + 2 * u64::from(u32::MAX)) % (1 << 24)).unwrap())
        );
        // An option of another length: the whole fields that fit (§3.2.3).
        let odd = AccEcnOption { kind: 174, len: 7, fields: [9, 8, 7] };
        assert_eq!(option_fields(&odd), (None, None, Some(9)));
    }

    /// RFC 9768 Appendix A.1's worked example: s.ceb = 33,554,433 and ECEB = 1461 give d.ceb = 1460.
    #[test]
    fn appendix_a1_option_decoding_example() {
        let mut a = AccEcn::new(true);
        a.s_ceb = 33_554_433;
        let mut h = header(5);
        h.accecn = AccEcnOption { kind: 172, len: 8, fields: [1, 1461, 0] };
        let d = a.on_feedback(&h, 1460, 1460);
        assert_eq!((d.bytes, a.s_ceb), (1460, 33_555_893));
    }

    /// RFC 9768 Appendix A.2.1's examples: 9 segments acknowledged with d.cep = 2 leave 2;
    /// 10 segments make it 10 (the ACE field may have wrapped once more).
    #[test]
    fn appendix_a21_safety_without_the_option() {
        assert_eq!(safer_cep(2, None, 9, 1460), 2);
        assert_eq!(safer_cep(2, None, 10, 1460), 10);
        // Fewer than 8 acknowledged: no wrap possible.
        assert_eq!(safer_cep(0, None, 7, 1460), 0);
        assert_eq!(safer_cep(0, None, 8, 1460), 8);
        // §3.2.2.5.2: an increment above the packets acknowledged is taken as it is.
        assert_eq!(safer_cep(5, None, 3, 1460), 5);
    }

    /// RFC 9768 Appendix A.2.2's three examples (MSS = 1460).
    #[test]
    fn appendix_a22_safety_with_the_option() {
        // d.cep = 0, dSafer.cep = 8, d.ceb = 1460: d.cep cannot be right (s would exceed the MSS).
        assert_eq!(safer_cep(0, Some(1460), 8, 1460), 8);
        // d.cep = 2, dSafer.cep = 10, d.ceb = 1460: d.cep is safe enough.
        assert_eq!(safer_cep(2, Some(1460), 10, 1460), 2);
        // d.cep = 7, dSafer.cep = 15, d.ceb = 10200: d.cep is safe enough.
        assert_eq!(safer_cep(7, Some(10_200), 15, 1460), 7);
        // No CE bytes at all over a long stretch: no marks.
        assert_eq!(safer_cep(0, Some(0), 40, 1460), 0);
    }

    /// The ACE field wraps: 9 marks on one ACK of 9 segments read as 1 with no room for a second
    /// cycle, and as 9 when the ACK covers 16 segments without the option (A.2.1).
    #[test]
    fn ace_wrap_is_resolved_by_the_safety_rules() {
        let mut rx = AccEcn::new(true);
        for _ in 0..9 {
            rx.on_arrival(Ecn::Ce, 1000);
        }
        let mut h = header(0);
        rx.write(&mut h, true);
        // With the option: ECEB says 9000 bytes; ACE alone says 1.
        let mut tx = AccEcn::new(true);
        let d = tx.on_feedback(&h, 16 * 1000, 1000);
        assert_eq!((d.packets, d.bytes), (9, 9000), "dSafer.cep = 16 - (15 % 8) = 9 kept: 9000 B > MSS * 1");
        // Without the option: A.2.1 over 16 segments assumes 9 too.
        let mut tx = AccEcn::new(false);
        rx.write(&mut h, false);
        h.accecn = AccEcnOption::default();
        let d = tx.on_feedback(&h, 16 * 1000, 1000);
        assert_eq!((d.packets, d.bytes), (9, 9000));
        // Over 8 segments only one cycle-free reading exists: 1.
        let mut tx = AccEcn::new(false);
        assert_eq!(tx.on_feedback(&h, 8 * 1000, 1000).packets, 1);
    }

    /// RFC 9768 §3.2.2.5.1: change-triggered and increment-triggered ACKs.
    #[test]
    fn receiver_ack_triggers() {
        let mut a = AccEcn::new(true);
        assert!(!a.on_arrival(Ecn::Ect0, 1000));
        assert!(a.on_arrival(Ecn::Ce, 1000), "CE after not-CE: ACK now");
        assert!(!a.on_arrival(Ecn::Ce, 1000), "CE after CE: no change");
        assert!(a.increment_trigger(true), "2 marks since the last ACK with data unacknowledged");
        a.on_ack_sent();
        assert!(!a.on_arrival(Ecn::Ce, 0), "a CE pure ACK is no data packet");
        assert!(!a.on_arrival(Ecn::Ce, 0));
        assert!(!a.increment_trigger(false), "without data waiting, n = 3");
        a.on_arrival(Ecn::Ce, 0);
        assert!(a.increment_trigger(false));
    }
}
