//! Typed arena indices. Each is a `u32` newtype so a link id can never be
//! used where a node id is expected, and arenas are indexed without hashing.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(pub u32);
        impl $name {
            /// The index into its arena.
            #[must_use]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
            /// The id of arena slot `i`.
            ///
            /// # Panics
            /// If `i` does not fit in a `u32` (arenas are far smaller).
            #[must_use]
            pub fn from_index(i: usize) -> Self {
                Self(u32::try_from(i).expect("arena index fits in u32"))
            }
        }
    };
}

id_type!(
    /// A host or router.
    NodeId
);
id_type!(
    /// A full-duplex point-to-point link.
    LinkId
);
id_type!(
    /// One direction of a link: its transmitter, egress queue and wire.
    /// Direction `2 * link` goes from the link's `a` end to `b`, `2 * link + 1` back.
    PortId
);
id_type!(
    /// A TCP connection (both endpoints).
    FlowId
);
id_type!(
    /// An application instance.
    AppId
);
id_type!(
    /// A packet in the network: its slot in the simulation's packet pool
    /// ([`crate::packet::PacketPool`]), valid from sending to delivery or drop.
    PacketId
);
