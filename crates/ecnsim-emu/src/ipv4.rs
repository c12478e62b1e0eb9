//! Reading and rewriting IPv4 headers in place: the fields the driver needs
//! (addresses, length, ECN, and the TCP ports and flags that name a flow),
//! and the ECN field rewritten with the header checksum updated.
//!
//! Read first: RFC 791 §3.1 (header), RFC 3168 §5 (ECN field), RFC 1071 and
//! RFC 1624 (the Internet checksum and its incremental update), RFC 9293 §3.1
//! (TCP header).

use ecnsim_core::packet::Ecn;

/// IP protocol number of TCP (RFC 790).
pub(crate) const PROTO_TCP: u8 = 6;

/// TCP flag bits (RFC 9293 §3.1; RFC 3168 §6.1 for ECE and CWR).
pub(crate) const TCP_ECE: u8 = 0x40;
/// Congestion Window Reduced.
pub(crate) const TCP_CWR: u8 = 0x80;

/// The fields of an IPv4 packet the driver uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// RFC 791: total length, header included.
    pub(crate) total_len: u16,
    pub(crate) ecn: Ecn,
    pub(crate) proto: u8,
    pub(crate) src: [u8; 4],
    pub(crate) dst: [u8; 4],
    /// TCP source and destination ports and flags (zero for other protocols
    /// and for non-first fragments).
    pub(crate) sport: u16,
    pub(crate) dport: u16,
    pub(crate) tcp_flags: u8,
    /// TCP payload bytes (0 for other protocols).
    pub(crate) tcp_payload: u16,
    /// The TCP window field as on the wire (unscaled).
    pub(crate) tcp_window: u16,
    /// The window-scale shift of a SYN's option (RFC 7323 §2.2), if it carries one.
    pub(crate) syn_wscale: Option<u8>,
}

/// RFC 9293 §3.1 flag bit of a SYN.
pub(crate) const TCP_SYN: u8 = 0x02;

/// Why a buffer is not an IPv4 packet the driver can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Shorter than its header, or than its total length.
    Truncated,
    /// Not IP version 4 (IPv6 is not routed by the emulation).
    NotIpv4,
}

fn ecn_of(tos: u8) -> Ecn {
    // RFC 3168 §5: the two low-order bits of the former TOS octet.
    match tos & 0b11 {
        0b00 => Ecn::NotEct,
        0b01 => Ecn::Ect1,
        0b10 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// Parse the IPv4 header of `buf` (one packet as read from a TUN device).
pub(crate) fn parse(buf: &[u8]) -> Result<Header, ParseError> {
    let Some(&first) = buf.first() else { return Err(ParseError::Truncated) };
    if first >> 4 != 4 {
        return Err(ParseError::NotIpv4);
    }
    // RFC 791 §3.1: IHL counts 32-bit words, at least 5.
    let ihl = usize::from(first & 0x0f) * 4;
    if ihl < 20 || buf.len() < ihl {
        return Err(ParseError::Truncated);
    }
    let total_len = u16::from_be_bytes([buf[2], buf[3]]);
    if usize::from(total_len) < ihl || buf.len() < usize::from(total_len) {
        return Err(ParseError::Truncated);
    }
    let proto = buf[9];
    let mut h = Header {
        total_len,
        ecn: ecn_of(buf[1]),
        proto,
        src: [buf[12], buf[13], buf[14], buf[15]],
        dst: [buf[16], buf[17], buf[18], buf[19]],
        sport: 0,
        dport: 0,
        tcp_flags: 0,
        tcp_payload: 0,
        tcp_window: 0,
        syn_wscale: None,
    };
    // RFC 791: fragment offset is the low 13 bits of bytes 6-7; only offset 0 has the TCP header.
    let frag_offset = u16::from_be_bytes([buf[6], buf[7]]) & 0x1fff;
    let tcp = &buf[ihl..usize::from(total_len)];
    if proto == PROTO_TCP && frag_offset == 0 && tcp.len() >= 20 {
        h.sport = u16::from_be_bytes([tcp[0], tcp[1]]);
        h.dport = u16::from_be_bytes([tcp[2], tcp[3]]);
        h.tcp_flags = tcp[13];
        // RFC 9293 §3.1: data offset in 32-bit words.
        let data_offset = usize::from(tcp[12] >> 4) * 4;
        h.tcp_payload = u16::try_from(tcp.len().saturating_sub(data_offset)).unwrap_or(0);
        h.tcp_window = u16::from_be_bytes([tcp[14], tcp[15]]);
        if h.tcp_flags & TCP_SYN != 0 {
            h.syn_wscale = window_scale(&tcp[20..data_offset.clamp(20, tcp.len())]);
        }
    }
    Ok(h)
}

/// The shift of a window-scale option (RFC 7323 §2.2: kind 3, length 3) among TCP `options`.
fn window_scale(options: &[u8]) -> Option<u8> {
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            0 => return None, // RFC 9293 §3.1: end of option list
            1 => i += 1,      // no-operation
            kind => {
                let len = usize::from(*options.get(i + 1)?);
                if len < 2 || i + len > options.len() {
                    return None;
                }
                if kind == 3 && len == 3 {
                    // RFC 7323 §2.3: a shift above 14 is used as 14.
                    return Some(options[i + 2].min(14));
                }
                i += len;
            }
        }
    }
    None
}

/// Set the ECN field of the IPv4 packet in `buf` to `ecn`, updating the
/// header checksum incrementally. `buf` must have passed [`parse`].
pub(crate) fn set_ecn(buf: &mut [u8], ecn: Ecn) {
    let old_word = u16::from_be_bytes([buf[0], buf[1]]);
    buf[1] = (buf[1] & !0b11) | ecn as u8;
    let new_word = u16::from_be_bytes([buf[0], buf[1]]);
    let old_sum = u16::from_be_bytes([buf[10], buf[11]]);
    // RFC 1624 §3 eqn. 3: HC' = ~(~HC + ~m + m').
    let mut sum = u32::from(!old_sum) + u32::from(!old_word) + u32::from(new_word);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    #[allow(clippy::cast_possible_truncation)]
    let new_sum = !(sum as u16);
    buf[10..12].copy_from_slice(&new_sum.to_be_bytes());
}

/// The RFC 1071 checksum of an IPv4 header (0 when a header with its checksum is valid).
#[cfg(test)]
pub(crate) fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    #[allow(clippy::cast_possible_truncation)]
    let s = !(sum as u16);
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A TCP/IPv4 packet 10.201.1.2:40000 -> 10.201.2.2:20000 with `payload`
    /// bytes, TOS `tos`, TCP flags `flags`, and a correct header checksum.
    pub(crate) fn packet(tos: u8, flags: u8, payload: usize) -> Vec<u8> {
        let total = 20 + 20 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&u16::try_from(total).unwrap().to_be_bytes());
        p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[12..16].copy_from_slice(&[10, 201, 1, 2]);
        p[16..20].copy_from_slice(&[10, 201, 2, 2]);
        let c = header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&20000u16.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = flags;
        p
    }

    #[test]
    fn parses_addresses_ports_flags_and_ecn() {
        let p = packet(0x02, 0x10 | TCP_CWR, 1448);
        let h = parse(&p).unwrap();
        assert_eq!(h.total_len, 1488);
        assert_eq!(h.ecn, Ecn::Ect0);
        assert_eq!((h.src, h.dst), ([10, 201, 1, 2], [10, 201, 2, 2]));
        assert_eq!((h.sport, h.dport, h.tcp_flags, h.tcp_payload), (40000, 20000, 0x90, 1448));
    }

    #[test]
    fn reads_the_window_and_a_syns_window_scale() {
        let mut p = packet(0, TCP_SYN, 0);
        // Grow the TCP header by 8 bytes of options: MSS 1460, NOP, window scale 7.
        p.splice(40..40, [2, 4, 0x05, 0xb4, 1, 3, 3, 7]);
        p[32] = 7 << 4;
        p[34..36].copy_from_slice(&64240u16.to_be_bytes());
        let total = u16::try_from(p.len()).unwrap();
        p[2..4].copy_from_slice(&total.to_be_bytes());
        let h = parse(&p).unwrap();
        assert_eq!((h.tcp_window, h.syn_wscale, h.tcp_payload), (64240, Some(7), 0));
        let plain = parse(&packet(0, 0x10, 10)).unwrap();
        assert_eq!(plain.syn_wscale, None, "only SYNs are searched");
        assert_eq!(window_scale(&[1, 1, 3, 3, 20]), Some(14));
        assert_eq!(window_scale(&[3, 9]), None, "truncated option");
        assert_eq!(window_scale(&[0, 3, 3, 5]), None, "after end of list");
    }

    #[test]
    fn rejects_short_and_non_ipv4_buffers() {
        assert_eq!(parse(&[]), Err(ParseError::Truncated));
        let mut v6 = packet(0, 0, 0);
        v6[0] = 0x60;
        assert_eq!(parse(&v6), Err(ParseError::NotIpv4));
        let p = packet(0, 0, 100);
        assert_eq!(parse(&p[..100]), Err(ParseError::Truncated), "shorter than total length");
        assert_eq!(parse(&p[..10]), Err(ParseError::Truncated));
    }

    #[test]
    fn setting_ce_keeps_the_checksum_valid_for_every_tos() {
        for tos in 0..=255u8 {
            let mut p = packet(tos, 0x10, 10);
            assert_eq!(header_checksum(&p[..20]), 0);
            set_ecn(&mut p, Ecn::Ce);
            assert_eq!(header_checksum(&p[..20]), 0, "tos {tos:#x}");
            assert_eq!(p[1], tos | 0b11, "DSCP bits are kept");
            assert_eq!(parse(&p).unwrap().ecn, Ecn::Ce);
        }
    }
}
