//! [`Opt`]: an optional instant, duration or sequence number in 8 bytes.
//!
//! `Option<u64>` takes 16 bytes; the socket's and the endpoint's per-segment
//! fields are packed into cache lines (see [`super::TcpSocket`]), so their
//! optional values use `u64::MAX` for "none" instead. No value they hold can
//! reach it: instants and durations are below the validated limit of 10^15 ns
//! plus one RTO, and sequence numbers below `u64::MAX / 2` plus a segment.

use std::marker::PhantomData;

use crate::time::{SimDuration, SimTime};

/// A value with a `u64` representation other than `u64::MAX`.
pub(crate) trait Word: Copy {
    /// The value as its word.
    fn to_word(self) -> u64;
    /// The value of a word other than `u64::MAX`.
    fn from_word(w: u64) -> Self;
}

impl Word for u64 {
    fn to_word(self) -> u64 {
        self
    }
    fn from_word(w: u64) -> Self {
        w
    }
}

impl Word for SimTime {
    fn to_word(self) -> u64 {
        self.as_nanos()
    }
    fn from_word(w: u64) -> Self {
        SimTime::from_nanos(w)
    }
}

impl Word for SimDuration {
    fn to_word(self) -> u64 {
        self.as_nanos()
    }
    fn from_word(w: u64) -> Self {
        SimDuration::from_nanos(w)
    }
}

/// `Option<T>` in one word: `u64::MAX` is `None`.
pub(crate) struct Opt<T> {
    word: u64,
    _t: PhantomData<T>,
}

impl<T> Clone for Opt<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Opt<T> {}
impl<T: Word> PartialEq for Opt<T> {
    fn eq(&self, other: &Self) -> bool {
        self.word == other.word
    }
}
impl<T: Word> Eq for Opt<T> {}

impl<T: Word + std::fmt::Debug> std::fmt::Debug for Opt<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl<T: Word> Default for Opt<T> {
    fn default() -> Self {
        Self::NONE
    }
}

impl<T: Word> Opt<T> {
    /// No value.
    pub(crate) const NONE: Self = Opt { word: u64::MAX, _t: PhantomData };

    /// The value `v`.
    #[inline]
    pub(crate) fn some(v: T) -> Self {
        let word = v.to_word();
        debug_assert_ne!(word, u64::MAX, "u64::MAX stands for none");
        Opt { word, _t: PhantomData }
    }

    /// As an `Option`.
    #[inline]
    pub(crate) fn get(self) -> Option<T> {
        (self.word != u64::MAX).then(|| T::from_word(self.word))
    }

    /// True if there is no value.
    #[inline]
    pub(crate) fn is_none(self) -> bool {
        self.word == u64::MAX
    }

    /// True if there is a value.
    #[inline]
    pub(crate) fn is_some(self) -> bool {
        self.word != u64::MAX
    }
}

impl<T: Word + Ord> Opt<T> {
    /// The smaller of two values, or the one there is (none if neither): for types whose
    /// words order as their values do, none (`u64::MAX`) is above every value.
    #[inline]
    #[must_use]
    pub(crate) fn earliest(self, other: Self) -> Self {
        Opt { word: self.word.min(other.word), _t: PhantomData }
    }

    /// True if this is a value below `other`'s (which may be none).
    #[inline]
    pub(crate) fn is_before(self, other: Self) -> bool {
        self.word < other.word
    }
}

impl<T: Word> From<Option<T>> for Opt<T> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::NONE, Self::some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_round_trips_and_is_one_word() {
        assert_eq!(std::mem::size_of::<Opt<SimTime>>(), 8);
        assert_eq!(Opt::<u64>::NONE.get(), None);
        assert_eq!(Opt::some(0u64).get(), Some(0));
        assert_eq!(Opt::some(SimTime::from_millis(3)).get(), Some(SimTime::from_millis(3)));
        assert_eq!(Opt::from(Some(SimDuration::from_secs(1))).get(), Some(SimDuration::from_secs(1)));
        assert!(Opt::<u64>::from(None).is_none() && Opt::some(5u64).is_some());
    }

    #[test]
    fn earliest_is_the_min_of_the_values_there_are() {
        let (n, a, b) = (Opt::<SimTime>::NONE, Opt::some(SimTime::from_millis(3)), Opt::some(SimTime::from_millis(7)));
        for (x, y, want) in [(n, n, None), (n, a, Some(3)), (b, n, Some(7)), (a, b, Some(3)), (b, a, Some(3))] {
            assert_eq!(x.earliest(y).get(), want.map(SimTime::from_millis));
            assert_eq!(x.is_before(y), x.get().is_some_and(|v| y.get().is_none_or(|w| v < w)));
        }
    }
}
