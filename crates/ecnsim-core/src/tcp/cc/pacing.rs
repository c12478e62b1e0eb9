//! The departure clock of a paced sender (BBR, Prague): each data segment may leave no earlier
//! than the previous one's departure plus its length at the pacing rate, as Linux's
//! earliest-departure-time pacing does (`tcp_update_skb_after_send()`, `tcp_pacing_check()`).

use crate::time::{SimDuration, SimTime};

/// Linux tcp_output.c `tcp_update_skb_after_send()`: the first 10 data segments are not paced
/// (`tp->data_segs_out >= 10`).
const UNPACED_SEGMENTS: u64 = 10;
const NANOS: u64 = 1_000_000_000;

/// When the next data segment may leave.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacer {
    /// The earliest departure time of the next data segment (Linux `tcp_wstamp_ns`).
    next_send: SimTime,
}

impl Pacer {
    /// If a data segment may not leave before a later instant, that instant.
    #[inline]
    pub(crate) fn blocks(&self, now: SimTime) -> Option<SimTime> {
        (self.next_send > now).then_some(self.next_send)
    }

    /// The earliest departure time of the next data segment.
    pub(crate) fn next_send(&self) -> SimTime {
        self.next_send
    }

    /// A data segment of `len` bytes left at `now`, the `segs_out`-th (counting it), with the
    /// connection's pacing rate `rate` bytes/s (0: not paced yet).
    pub(crate) fn on_sent(&mut self, now: SimTime, len: u64, rate: u64, segs_out: u64) {
        // Linux tcp_update_skb_after_send(): the next departure is len / pacing_rate later, from
        // the later of now and the last departure time (the first 10 segments are not paced);
        // a sender that was late gets up to half a segment's time back ("OS jitter" credit).
        if segs_out >= UNPACED_SEGMENTS && rate > 0 {
            let len_ns = mul_div(len, NANOS, rate);
            let stamp = self.next_send.max(now);
            let credit = stamp.saturating_since(self.next_send).as_nanos();
            let len_ns = len_ns - (len_ns / 2).min(credit);
            self.next_send = stamp + SimDuration::from_nanos(len_ns);
        } else {
            self.next_send = self.next_send.max(now);
        }
    }
}

/// floor(a * b / c), in 64 bits when the product fits (the same quotient as in 128 bits, without
/// its division call: this runs several times per ACK); saturating far above any real value.
#[inline]
pub(crate) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let c = c.max(1);
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => u64::try_from(u128::from(a) * u128::from(b) / u128::from(c)).unwrap_or(u64::MAX / 4),
    }
}
