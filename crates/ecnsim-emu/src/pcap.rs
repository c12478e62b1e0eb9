//! Capture files of the real packets on a TUN device, as `tcpdump -i` on it
//! would write them: classic pcap with nanosecond timestamps and raw IP
//! frames (the TUN device has no link-layer header).
//!
//! Read first: the pcap file format (IETF draft-ietf-opsawg-pcap, §4 file
//! header and §5 packet records) and LINKTYPE_RAW (101, a raw IPv4 or IPv6
//! packet) of the link-type registry.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// draft-ietf-opsawg-pcap §4: the magic number of a file with nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record is an IP packet.
const LINKTYPE_RAW: u32 = 101;
/// Largest packet captured whole.
pub(crate) const SNAPLEN: u32 = 65_535;

/// A pcap file being written (buffered; nothing is allocated per packet).
#[derive(Debug)]
pub(crate) struct PcapWriter {
    out: BufWriter<File>,
    packets: u64,
}

impl PcapWriter {
    pub(crate) fn create(path: &Path) -> io::Result<Self> {
        let file = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // §4: magic, version 2.4, two reserved words, snaplen, link type (all in our byte order).
        out.write_all(&MAGIC_NANOS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&SNAPLEN.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(Self { out, packets: 0 })
    }

    /// Append `pkt`, seen at `unix_ns` nanoseconds since the Unix epoch.
    pub(crate) fn write(&mut self, unix_ns: u64, pkt: &[u8]) -> io::Result<()> {
        let len = u32::try_from(pkt.len()).unwrap_or(u32::MAX).min(SNAPLEN);
        // §5: seconds, nanoseconds, captured length, original length.
        let secs = u32::try_from(unix_ns / 1_000_000_000).unwrap_or(u32::MAX);
        let nanos = u32::try_from(unix_ns % 1_000_000_000).expect("below 1e9");
        self.out.write_all(&secs.to_le_bytes())?;
        self.out.write_all(&nanos.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&u32::try_from(pkt.len()).unwrap_or(u32::MAX).to_le_bytes())?;
        self.out.write_all(&pkt[..len as usize])?;
        self.packets += 1;
        Ok(())
    }

    pub(crate) fn packets(&self) -> u64 {
        self.packets
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_and_records() {
        let dir = std::env::temp_dir().join(format!("ecnsim-emu-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let mut w = PcapWriter::create(&path).unwrap();
        let pkt = crate::ipv4::tests::packet(2, 0x10, 10);
        w.write(1_700_000_000_123_456_789, &pkt).unwrap();
        w.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(bytes.len(), 24 + 16 + pkt.len());
        assert_eq!(&bytes[..4], &MAGIC_NANOS.to_le_bytes());
        assert_eq!(&bytes[20..24], &101u32.to_le_bytes());
        assert_eq!(&bytes[24..28], &1_700_000_000u32.to_le_bytes());
        assert_eq!(&bytes[28..32], &123_456_789u32.to_le_bytes());
        assert_eq!(&bytes[40..], &pkt[..]);
        assert_eq!(w.packets(), 1);
    }
}
