//! The SACK scoreboard of a sender, and the routines of RFC 6675 §4 over it.
//!
//! Read first: RFC 2018 (the option), RFC 6675 §3-§5 (scoreboard, IsLost,
//! SetPipe, NextSeg, loss recovery).
//!
//! RFC 6675 defines IsLost and SetPipe per octet; because "more than
//! (DupThresh - 1) * SMSS bytes SACKed above" is monotone in the sequence
//! number, every unSACKed octet below one threshold `T` is lost and every
//! one above is not, so pipe is computed from `T` and the SACKed ranges in
//! time proportional to the number of ranges, not of octets.

use crate::packet::SackBlock;
use crate::spec::RecoveryRate;
use crate::tcp::ooo::OooQueue;
use crate::tcp::prr::Prr;
use crate::tcp::rack::Rack;

/// SACKed ranges above SND.UNA, and the highest retransmitted octet.
///
/// Out of line and allocated on first use (the first ACK with a SACK block, or the first
/// recovery): a connection that never loses nor reorders a segment keeps 8 bytes here.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    board: Option<Box<Board>>,
}

/// The scoreboard's state once it has any.
#[derive(Clone, Debug, Default)]
struct Board {
    /// Sorted, disjoint, non-adjacent `[left, right)` ranges, all above SND.UNA.
    blocks: Vec<(u64, u64)>,
    /// RFC 6675 HighRxt, as one past the highest octet retransmitted in recovery.
    high_rxt: u64,
    /// ns-2 `Sack1`'s `pipe_` in bytes (`tcp.sack_variant = "ns2_sack1"`): a counter, not SetPipe().
    ns2_pipe: i64,
    /// ns-2 `Sack1`: the fast retransmit's own ACK sends the retransmission only (`recv()` calls
    /// `send_much()` there only with no duplicate ACKs counted); the next ACK ends the hold.
    ns2_hold: bool,
    /// RFC 6937's state for the current recovery (`tcp.recovery_rate` = PRR only).
    prr: Prr,
    /// RACK-TLP's record and state (`tcp.loss_detection = "rack"` only).
    rack: Rack,
}

impl Scoreboard {
    /// Forget everything (RFC 2018 §8: after a timeout the SACKed bits are cleared).
    pub(crate) fn clear(&mut self) {
        if let Some(b) = &mut self.board {
            b.blocks.clear();
            b.high_rxt = 0;
        }
    }

    /// The SACKed ranges (none before the first SACK block).
    fn blocks(&self) -> &[(u64, u64)] {
        self.board.as_deref().map_or(&[], |b| &b.blocks)
    }

    /// RFC 6675 HighRxt, as one past the highest octet retransmitted in recovery (0: none).
    pub(crate) fn high_rxt(&self) -> u64 {
        self.board.as_deref().map_or(0, |b| b.high_rxt)
    }

    /// Set HighRxt.
    pub(crate) fn set_high_rxt(&mut self, high_rxt: u64) {
        if self.board.is_some() || high_rxt != 0 {
            self.board.get_or_insert_with(Box::default).high_rxt = high_rxt;
        }
    }

    /// ns-2 `Sack1`'s pipe counter in bytes, or `None` while the fast retransmit's ACK holds
    /// further sending.
    pub(crate) fn ns2_pipe(&self) -> Option<i64> {
        self.board.as_deref().filter(|b| !b.ns2_hold).map(|b| b.ns2_pipe)
    }

    /// ns-2 `Sack1` enters fast recovery with `pipe` bytes in the pipe; nothing but the
    /// retransmission goes until the next ACK.
    pub(crate) fn ns2_enter(&mut self, pipe: i64) {
        let b = self.board.get_or_insert_with(Box::default);
        b.ns2_pipe = pipe;
        b.ns2_hold = true;
    }

    /// An ACK in ns-2 `Sack1`'s recovery: `delta` (negative) to the pipe, and the hold ends.
    pub(crate) fn ns2_ack(&mut self, delta: i64) {
        if let Some(b) = &mut self.board {
            b.ns2_pipe += delta;
            b.ns2_hold = false;
        }
    }

    /// A segment sent in ns-2 `Sack1`'s recovery: one more in the pipe, unless it is the fast
    /// retransmission (ns-2 `dupack_action()` sends it with `output()`, not counted).
    pub(crate) fn ns2_sent(&mut self, mss: i64) {
        if let Some(b) = &mut self.board {
            if !b.ns2_hold {
                b.ns2_pipe += mss;
            }
        }
    }

    /// RFC 6937 §2 SACKd: the octets the scoreboard holds as SACKed.
    pub(crate) fn sacked_bytes(&self) -> u64 {
        self.blocks().iter().map(|&(l, r)| r - l).sum()
    }

    /// RFC 6937 §3: a recovery begins with `recover_fs` bytes of FlightSize.
    pub(crate) fn prr_start(&mut self, recover_fs: u64) {
        self.board.get_or_insert_with(Box::default).prr = Prr::start(recover_fs);
    }

    /// RFC 6937 §3: an ACK in recovery delivered `delivered` bytes and left `pipe`.
    pub(crate) fn prr_on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64, rate: RecoveryRate) {
        if let Some(b) = &mut self.board {
            b.prr.on_ack(delivered, pipe, ssthresh, mss, rate);
        }
    }

    /// RFC 6937 §3: whether sndcnt allows `len` more bytes now.
    pub(crate) fn prr_allows(&self, len: u64) -> bool {
        self.board.as_deref().is_some_and(|b| b.prr.allows(len))
    }

    /// RFC 6937 §3: `len` bytes were sent in recovery.
    pub(crate) fn prr_sent(&mut self, len: u64) {
        if let Some(b) = &mut self.board {
            b.prr.on_sent(len);
        }
    }

    /// RACK-TLP's state (allocating the scoreboard: RACK records every segment from the first).
    pub(crate) fn rack_mut(&mut self) -> &mut Rack {
        &mut self.board.get_or_insert_with(Box::default).rack
    }

    /// RACK-TLP's state, if the scoreboard exists.
    pub(crate) fn rack(&self) -> Option<&Rack> {
        self.board.as_deref().map(|b| &b.rack)
    }

    /// Call `f` on each part of `[left, right)` not SACKed yet, in sequence order (before
    /// [`Scoreboard::update`] adds it).
    pub(crate) fn for_each_unsacked(&self, left: u64, right: u64, mut f: impl FnMut(u64, u64)) {
        let mut s = left;
        for &(l, r) in self.blocks() {
            if s >= right {
                return;
            }
            if r <= s {
                continue;
            }
            if l > s {
                f(s, l.min(right));
            }
            s = s.max(r);
        }
        if s < right {
            f(s, right);
        }
    }

    /// True if nothing is SACKed.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks().is_empty()
    }

    /// RFC 6675 §4 Update(): merge the ACK's SACK blocks and drop what SND.UNA covers. Returns
    /// whether the ACK SACKed octets above SND.UNA that were not SACKed before (RFC 6675 §2's
    /// duplicate acknowledgment).
    pub(crate) fn update(&mut self, snd_una: u64, sack: &[SackBlock]) -> bool {
        if self.board.is_none() && sack.iter().all(|b| b.right <= b.left.max(snd_una)) {
            // Nothing SACKed yet and nothing to add: nothing to drop either.
            return false;
        }
        let board = self.board.get_or_insert_with(Box::default);
        let mut new = false;
        for b in sack {
            let left = b.left.max(snd_una);
            if b.right > left {
                new |= !board.covers(left, b.right);
                board.insert(left, b.right);
            }
        }
        let keep = board.blocks.partition_point(|&(_, r)| r <= snd_una);
        board.blocks.drain(..keep);
        if let Some(first) = board.blocks.first_mut() {
            first.0 = first.0.max(snd_una);
        }
        new
    }

    /// Whether octet `s` is SACKed: at SND.UNA, the receiver has reneged on a SACK (Linux
    /// tcp_timeout_mark_lost(): the head of the retransmission queue SACKed).
    pub(crate) fn sacked_at(&self, s: u64) -> bool {
        self.blocks().iter().any(|&(l, r)| l <= s && s < r)
    }

    /// One past the highest SACKed octet (0 if none).
    pub(crate) fn highest_sacked(&self) -> u64 {
        self.blocks().last().map_or(0, |&(_, r)| r)
    }

    /// SACKed octets in `[a, b)`.
    fn sacked_in(&self, a: u64, b: u64) -> u64 {
        // The blocks are sorted and their ends increase: those ending at or before `a`, and those
        // starting at or after `b`, add nothing; the others are found by a binary search.
        let blocks = self.blocks();
        let first = blocks.partition_point(|&(_, r)| r <= a);
        blocks[first..].iter().take_while(|&&(l, _)| l < b).map(|&(l, r)| r.min(b).saturating_sub(l.max(a))).sum()
    }

    /// UnSACKed octets in `[a, b)`.
    pub(crate) fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        b.saturating_sub(a) - self.sacked_in(a, b.max(a))
    }

    /// The loss threshold `T`: RFC 6675 §4 IsLost(s) holds for an unSACKed
    /// octet `s` exactly when `s < T`, i.e. more than `(dupthresh - 1) * mss`
    /// octets above `s` are SACKed. 0 if no octet is lost.
    pub(crate) fn lost_threshold(&self, mss: u64, dupthresh: u32) -> u64 {
        let k = u64::from(dupthresh.saturating_sub(1)) * mss;
        let mut above = 0u64;
        for &(l, r) in self.blocks().iter().rev() {
            let len = r - l;
            if above + len > k {
                // SACKed octets in [x, inf) = above + (r - x) > k  <=>  x < r - (k - above).
                return r - (k - above);
            }
            above += len;
        }
        0
    }

    /// RFC 6675 §4 SetPipe(): octets believed to be in the network between
    /// `snd_una` and `snd_max`.
    pub(crate) fn pipe(&self, snd_una: u64, snd_max: u64, lost_threshold: u64) -> u64 {
        // RFC 6675 §4 SetPipe (a): an unSACKed octet not considered lost counts once.
        let from = lost_threshold.clamp(snd_una, snd_max);
        let not_lost = (snd_max - from) - self.sacked_in(from, snd_max);
        // RFC 6675 §4 SetPipe (b): an unSACKed octet at or below HighRxt counts (again).
        let rxt_end = self.high_rxt().clamp(snd_una, snd_max);
        let retransmitted = (rxt_end - snd_una) - self.sacked_in(snd_una, rxt_end);
        not_lost + retransmitted
    }

    /// The first unSACKed octet in `[from, to)`, if any.
    pub(crate) fn first_unsacked(&self, from: u64, to: u64) -> Option<u64> {
        let mut s = from;
        // The blocks ending at or before `from` are skipped by the loop; a binary search skips them.
        let blocks = self.blocks();
        let first = blocks.partition_point(|&(_, r)| r <= from);
        for &(l, r) in &blocks[first..] {
            if r <= s {
                continue;
            }
            if l > s {
                break;
            }
            s = r;
        }
        (s < to).then_some(s)
    }

    /// Where the SACKed range at or after `s` begins (or `u64::MAX`): a
    /// retransmission starting at `s` must stop there.
    pub(crate) fn next_sacked_after(&self, s: u64) -> u64 {
        // The blocks' starts increase: the first one starting after `s`, by binary search.
        let blocks = self.blocks();
        blocks.get(blocks.partition_point(|&(l, _)| l <= s)).map_or(u64::MAX, |&(l, _)| l)
    }
}

impl Board {
    /// Whether `[left, right)` is SACKed already.
    fn covers(&self, left: u64, right: u64) -> bool {
        let i = self.blocks.partition_point(|&(_, r)| r < right);
        self.blocks.get(i).is_some_and(|&(l, r)| l <= left && r >= right)
    }

    fn insert(&mut self, left: u64, right: u64) {
        crate::tcp::socket::merge_range(&mut self.blocks, left, right);
    }
}

/// The receiver's memory of which out-of-order data arrived most recently,
/// for ordering SACK blocks (RFC 2018 §4).
///
/// Out of line and allocated on first use (the first out-of-order arrival): a connection
/// that never sees a gap keeps 8 bytes here.
#[derive(Clone, Debug, Default)]
pub(crate) struct SackRecency {
    recent: Option<Box<Recent>>,
}

/// Recent out-of-order arrivals, once there was one.
#[derive(Clone, Copy, Debug, Default)]
struct Recent {
    /// Sequence numbers of recent out-of-order arrivals, most recent first.
    seqs: [u64; crate::packet::MAX_SACK_BLOCKS],
    len: usize,
}

impl SackRecency {
    /// Remember that out-of-order data starting at `seq` arrived.
    pub(crate) fn on_arrival(&mut self, seq: u64) {
        let r = self.recent.get_or_insert_with(Box::default);
        let n = r.seqs.len();
        let keep = r.len.min(n - 1);
        r.seqs.copy_within(0..keep, 1);
        r.seqs[0] = seq;
        r.len = (keep + 1).min(n);
    }

    /// Fill `out` with SACK blocks from the out-of-order ranges `ooo`: first the
    /// range holding the most recent arrival, then those of earlier arrivals,
    /// then the highest others (RFC 2018 §4: the first block reports the
    /// segment that triggered the ACK; later blocks repeat recent ones).
    pub(crate) fn blocks(&self, ooo: &OooQueue, out: &mut [SackBlock]) -> usize {
        let mut n = 0;
        let contains = |out: &[SackBlock], n: usize, l: u64| out[..n].iter().any(|b| b.left == l);
        let recent = self.recent.as_deref().map_or(&[][..], |r| &r.seqs[..r.len]);
        for &seq in recent {
            if n == out.len() {
                return n;
            }
            if let Some((l, r)) = ooo.containing(seq) {
                if !contains(out, n, l) {
                    out[n] = SackBlock { left: l, right: r };
                    n += 1;
                }
            }
        }
        for (l, r) in ooo.iter_rev() {
            if n == out.len() {
                break;
            }
            if !contains(out, n, l) {
                out[n] = SackBlock { left: l, right: r };
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn sb(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut s = Scoreboard::default();
        let sack: Vec<SackBlock> = blocks.iter().map(|&(left, right)| SackBlock { left, right }).collect();
        s.update(1, &sack);
        s
    }

    #[test]
    fn update_merges_and_prunes_below_snd_una() {
        let mut s = sb(&[(3001, 4001), (5001, 6001), (4001, 5001)]);
        assert_eq!(s.blocks(), [(3001, 6001)]);
        assert!(!s.update(4001, &[]), "no SACK block: nothing new");
        assert_eq!(s.blocks(), [(4001, 6001)]);
        s.update(7001, &[]);
        assert!(s.is_empty());
    }

    #[test]
    fn update_tells_whether_the_ack_sacked_anything_new() {
        let mut s = sb(&[(3001, 4001)]);
        let block = |left, right| [SackBlock { left, right }];
        assert!(!s.update(1, &block(3001, 4001)), "the same block again");
        assert!(!s.update(1, &block(3001, 3501)), "inside a known block");
        assert!(s.update(1, &block(3001, 5001)), "extends a known block");
        assert!(s.update(1, &block(6001, 7001)), "a new block");
        assert!(!s.update(1, &block(6001, 7001)));
    }

    #[test]
    fn is_lost_needs_more_than_two_segments_sacked_above() {
        // Segment 1 lost, segments 2..4 SACKed: 3000 > 2 * 1000 bytes above octet 1.
        let s = sb(&[(1001, 4001)]);
        let t = s.lost_threshold(MSS, 3);
        assert_eq!(t, 2001);
        assert!(1000 < t, "segment 1 (octets 1..=1000) is lost");
        // With only two segments SACKed, nothing is lost yet.
        let s = sb(&[(1001, 3001)]);
        assert_eq!(s.lost_threshold(MSS, 3), 0);
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted() {
        // Outstanding 1..10001 (10 segments); segment 1 and 3 lost; 2 and 4..10 SACKed.
        let mut s = sb(&[(1001, 2001), (3001, 10001)]);
        let t = s.lost_threshold(MSS, 3);
        // Both holes are below T: pipe = 0 before any retransmission.
        assert_eq!(s.pipe(1, 10001, t), 0);
        s.set_high_rxt(1001); // retransmitted segment 1
        assert_eq!(s.pipe(1, 10001, t), 1000);
        // New data beyond the SACKed range is in the pipe.
        assert_eq!(s.pipe(1, 12001, t), 3000);
    }

    #[test]
    fn first_unsacked_skips_sacked_ranges() {
        let s = sb(&[(1001, 2001), (3001, 4001)]);
        assert_eq!(s.first_unsacked(1, 10_000), Some(1));
        assert_eq!(s.first_unsacked(1001, 10_000), Some(2001));
        assert_eq!(s.first_unsacked(3001, 4001), None);
        assert_eq!(s.next_sacked_after(2001), 3001);
    }

    /// The binary searches give what the linear scans they replaced gave.
    #[test]
    fn searches_agree_with_linear_scans() {
        let mut rng = crate::rng::SimRng::for_component(5, "sack-scans");
        for _ in 0..300 {
            let mut sack = Vec::new();
            for _ in 0..rng.below(40) {
                let left = 1 + rng.below(200) * 100;
                sack.push(SackBlock { left, right: left + (1 + rng.below(5)) * 100 });
            }
            let s = sb(&sack.iter().map(|b| (b.left, b.right)).collect::<Vec<_>>());
            let blocks = s.blocks().to_vec();
            for _ in 0..50 {
                let (a, b) = (rng.below(21_000), rng.below(21_000));
                let linear: u64 = blocks.iter().map(|&(l, r)| r.min(b).saturating_sub(l.max(a))).sum();
                assert_eq!(s.sacked_in(a, b), linear, "sacked_in({a}, {b}) of {blocks:?}");
                let mut x = a;
                for &(l, r) in &blocks {
                    if r <= x {
                        continue;
                    }
                    if l > x {
                        break;
                    }
                    x = r;
                }
                assert_eq!(s.first_unsacked(a, b), (x < b).then_some(x), "first_unsacked({a}, {b})");
                let next = blocks.iter().find(|&&(l, _)| l > a).map_or(u64::MAX, |&(l, _)| l);
                assert_eq!(s.next_sacked_after(a), next, "next_sacked_after({a})");
            }
        }
    }

    #[test]
    fn receiver_reports_the_most_recent_block_first() {
        let mut ooo = OooQueue::default();
        for (l, r) in [(2001, 3001), (4001, 5001), (6001, 8001)] {
            ooo.insert(l, r);
        }
        let mut r = SackRecency::default();
        r.on_arrival(2001);
        r.on_arrival(6001);
        r.on_arrival(7001);
        let mut out = [SackBlock::default(); 3];
        let n = r.blocks(&ooo, &mut out);
        assert_eq!(n, 3);
        assert_eq!((out[0].left, out[0].right), (6001, 8001));
        assert_eq!((out[1].left, out[1].right), (2001, 3001));
        assert_eq!((out[2].left, out[2].right), (4001, 5001));
    }
}
