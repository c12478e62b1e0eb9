//! Named default profiles. Every default of the simulator lives here, once:
//! a scenario names its profile (`simulation.profile`, default `"rfc"`), and
//! any field it sets overrides the profile's value. Each run records the fully
//! resolved parameters in its metadata (`resolved_spec`).
//!
//! Profiles are versioned by name: a profile's values never change once
//! released; a corrected set of defaults gets a new name.

use crate::spec::{CcKind, QueueSpec};
use crate::tcp::TcpConfig;
use crate::time::SimDuration;

/// A named set of defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// The current RFCs: RFC 5681 Reno, RFC 6298 timers (initial RTO 1 s,
    /// minimum RTO 1 s), initial window per RFC 3390 for a 1460-byte MSS
    /// (3 segments), no delayed ACKs.
    Rfc,
    /// The ns-2 defaults that studies of 1998-2002 ran with (see the TCP and
    /// queue sections below for each value's provenance).
    Ns2_2001,
    /// Linux defaults (minimum RTO 200 ms, initial RTO 1 s, IW 10, delayed ACKs).
    Linux,
}

impl Profile {
    /// Every profile name a scenario may use.
    pub const NAMES: &'static [&'static str] = &["rfc", "ns2-2001", "linux"];

    /// The profile called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc" => Some(Profile::Rfc),
            "ns2-2001" => Some(Profile::Ns2_2001),
            "linux" => Some(Profile::Linux),
            _ => None,
        }
    }

    /// The profile's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Profile::Rfc => "rfc",
            Profile::Ns2_2001 => "ns2-2001",
            Profile::Linux => "linux",
        }
    }

    /// TCP defaults.
    #[must_use]
    pub fn tcp(self) -> TcpConfig {
        let rfc = TcpConfig {
            cc: CcKind::Reno,
            // Ethernet MTU 1500 less 20 B IPv4 and 20 B TCP headers.
            mss: 1460,
            header_bytes: 40,
            // RFC 3390 §1: min(4*MSS, max(2*MSS, 4380 bytes)) = 3 segments at MSS 1460.
            initial_window: 3,
            max_cwnd: 1_000_000,
            rcv_window: 1 << 30,
            // RFC 6298 §2.1: until a sample is made, RTO <- 1 second.
            initial_rto: SimDuration::from_secs(1),
            // RFC 6298 §2.4: whenever RTO is computed, if it is less than 1 second ... rounded up to 1 second.
            min_rto: SimDuration::from_secs(1),
            // RFC 6298 §2.5: a maximum value MAY be placed on RTO provided it is at least 60 seconds.
            max_rto: SimDuration::from_secs(60),
            // RFC 6298 §4: finer clock granularities (<= 100 ms) perform somewhat better; we model 1 ms.
            clock_granularity: SimDuration::from_millis(1),
            // RFC 6298 says nothing; Linux's tcp_syn_retries default is 6.
            syn_retries: 6,
            // RFC 5681 §3.2: the third duplicate ACK triggers fast retransmit.
            dupack_threshold: 3,
            delayed_ack: false,
            // RFC 5681 §4.2: an ACK ... MUST be generated within 500 ms; 200 ms is the common choice.
            delayed_ack_timeout: SimDuration::from_millis(200),
        };
        match self {
            Profile::Rfc => rfc,
            Profile::Ns2_2001 => TcpConfig {
                // ns-2 Agent/TCP packetSize_ 1000 (payload bytes per segment).
                mss: 1000,
                // ns-2 Agent/TCP windowInit_ 1 (changed to 2 only in 2004).
                initial_window: 1,
                // ns-2 Agent/TCP window_ 20 (the largest window, in packets).
                max_cwnd: 20,
                initial_rto: SimDuration::from_secs(3),
                min_rto: SimDuration::from_millis(200),
                // ns-2 Agent/TCP maxrto_ 64 s.
                max_rto: SimDuration::from_secs(64),
                // ns-2 Agent/TCP tcpTick_ (timer granularity).
                clock_granularity: SimDuration::from_millis(10),
                ..rfc
            },
            Profile::Linux => TcpConfig {
                // Linux: TCP_INIT_CWND 10 (RFC 6928).
                initial_window: 10,
                // Linux: TCP_TIMEOUT_INIT 1 s.
                initial_rto: SimDuration::from_secs(1),
                // Linux: TCP_RTO_MIN 200 ms.
                min_rto: SimDuration::from_millis(200),
                // Linux: TCP_RTO_MAX 120 s.
                max_rto: SimDuration::from_secs(120),
                // Linux: jiffies at HZ = 1000.
                clock_granularity: SimDuration::from_millis(1),
                // Linux: delayed ACKs on, TCP_DELACK_MIN 40 ms.
                delayed_ack: true,
                delayed_ack_timeout: SimDuration::from_millis(40),
                ..rfc
            },
        }
    }

    /// The queue a link direction gets when the scenario names none.
    #[must_use]
    pub fn default_queue(self) -> QueueSpec {
        match self {
            // ns-3's default DropTail limit (QueueBase MaxSize "100p").
            Profile::Rfc => QueueSpec::Droptail { limit_packets: Some(100), limit_bytes: None },
            // ns-2 Queue limit_ 50 packets.
            Profile::Ns2_2001 => QueueSpec::Droptail { limit_packets: Some(50), limit_bytes: None },
            // Linux pfifo_fast with txqueuelen 1000.
            Profile::Linux => QueueSpec::Droptail { limit_packets: Some(1000), limit_bytes: None },
        }
    }
}
