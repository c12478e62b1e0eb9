//! Named default profiles. Every default of the simulator lives here, once:
//! a scenario names its profile (`simulation.profile`, default `"rfc"`), and
//! any field it sets overrides the profile's value. Each run records the fully
//! resolved parameters in its metadata (`resolved_spec`).
//!
//! Profiles are versioned by name: a profile's values never change once
//! released; a corrected set of defaults gets a new name.

use crate::qdisc::droptail::LimitRule;
use crate::spec::{
    CaIncrease, CarryRtt, CcKind, CubicInitialGrowth, CubicTimeout, DctcpFraction, EceGrowth, EcnFeedback,
    EcnOneSegment, EcnPolicy, EcnSynAck, EctCodepoint, LossDetection, NewrenoCareful, NewrenoPartialAck,
    PragueEcnFallback, QueueSpec, Quickack, Recovery, RecoveryRate, ReductionBasis, RtoEstimator, RtoRearm,
    SackAfterTimeout, SackRecoveryGuard, SackVariant, SlowStartExit, SlowStartIncrease, TimeoutAfterEcn,
};
use crate::tcp::{InitialWindow, TcpConfig};
use crate::time::SimDuration;

/// A named set of defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// The current RFCs: RFC 5681 Reno, RFC 6298 timers (initial RTO 1 s,
    /// minimum RTO 1 s), initial window per RFC 3390 for a 1460-byte MSS
    /// (3 segments), no delayed ACKs.
    Rfc,
    /// ns-2's defaults as they stood between 2001-04-23 and 2001-05-14, the
    /// only span in which every value below held, as recorded by ns-2's own
    /// source and test suites (see each value's provenance below). ns-2's base
    /// `Agent/TCP` is Tahoe; studies name their variant, so `cc` stays Reno.
    Ns2_2001,
    /// Linux defaults (minimum RTO 200 ms, initial RTO 1 s, IW 10, delayed ACKs).
    Linux,
    /// The Linux 2.4 kernels of RFC 2884's era (HZ = 100, initial RTO 3 s,
    /// minimum RTO 200 ms, IW 2 on paths over 20 ms, SACK and timestamps on,
    /// ECN per RFC 2481 when a host turns it on). Sources in `docs/profiles.md`.
    Linux24,
    /// Linux 6.x as it runs today (6.18 on these machines): CUBIC, IW 10, SACK with PRR
    /// (RFC 6937), RACK-TLP (RFC 8985) loss detection, quick-ACK mode, minimum RTO 200 ms, the
    /// receive window autotuning grows to. Provisional: what still differs from Linux is listed
    /// in `docs/profiles.md`, with the sources.
    Linux6,
}

impl Profile {
    /// Every profile name a scenario may use.
    pub const NAMES: &'static [&'static str] = &["rfc", "ns2-2001", "linux", "linux-2.4", "linux-6.x"];

    /// The profile called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc" => Some(Profile::Rfc),
            "ns2-2001" => Some(Profile::Ns2_2001),
            "linux" => Some(Profile::Linux),
            "linux-2.4" => Some(Profile::Linux24),
            "linux-6.x" => Some(Profile::Linux6),
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
            Profile::Linux24 => "linux-2.4",
            Profile::Linux6 => "linux-6.x",
        }
    }

    /// The default `tcp.slow_start_exit` for algorithm `cc`: Linux's HyStart for CUBIC under
    /// `linux-6.x` (it lives in `tcp_cubic.c`, so no other Linux algorithm has it), else none.
    #[must_use]
    pub fn slow_start_exit(self, cc: CcKind) -> SlowStartExit {
        match (self, cc) {
            // Linux tcp_cubic.c: hystart = 1 (module parameter default).
            (Profile::Linux6, CcKind::Cubic) => SlowStartExit::Hystart,
            _ => SlowStartExit::None,
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
            // RFC 3390 §1 (not RFC 6928's experimental 10): min(4*MSS, max(2*MSS, 4380 bytes)),
            // 3 segments at MSS 1460.
            initial_window: InitialWindow::Rfc3390,
            max_cwnd: 1_000_000,
            // RFC 9293 §3.1: the 16-bit Window field, 65535 bytes at most without RFC 7323's window scale
            // option, which the profile's option-free 40-byte headers do not carry.
            rcv_window: 65_535,
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
            // RFC 3168 §6.1.1: ECN is used only if both ends ask; off unless a scenario turns it on.
            ecn: EcnPolicy::Off,
            // RFC 3168 §6.1.1: the SYN-ACK is not ECT (RFC 5562 is experimental).
            ecn_synack: EcnSynAck::Off,
            // RFC 3168 §6.1.2: data segments carry ECT(0); ECT(1) is the L4S identifier (RFC 9331 §4.1),
            // for scalable senders only.
            ect_codepoint: EctCodepoint::Ect0,
            // RFC 5681 §4.1: a TCP SHOULD set cwnd to no more than RW before beginning transmission after idle.
            restart_after_idle: true,
            // RFC 6582 §3.2 step 2: a fast retransmit only if the ACK covers more than `recover`; §4.1's
            // ACK heuristic lets one through when cwnd > SMSS and the last ACK advanced by <= 4*SMSS.
            newreno_careful: NewrenoCareful::CarefulAckHeuristic,
            // RFC 6582 §3.2 steps 5-6: partial window deflation, timer reset on the first partial ACK.
            newreno_partial_ack: NewrenoPartialAck::Rfc6582,
            // STUDIES.md §4 (AECN) asks for it; no RFC does.
            carry_rtt: CarryRtt::Off,
            // RFC 6298 §2.
            rto_estimator: RtoEstimator::Rfc6298,
            // RFC 3168 §6.1.2: CWR goes on the first new data packet sent after the window reduction.
            ecn_cwr_on_retransmit: false,
            // RFC 3168 §6.1.5: ECN-capable TCPs MUST NOT set ECT on retransmitted data packets.
            ecn_ect_on_retransmit: false,
            // RFC 3168 §6.1.1 makes the SYN Not-ECT; with no SYN, data segments are ECT (§6.1.2).
            ecn_first_segment_not_ect: false,
            // RFC 3168 §6.1.2: SHOULD NOT increase cwnd in response to an ECN-Echo; but a timeout or fast
            // retransmit already answered the marks of its window, whose echoes cannot end before new data carries CWR.
            ecn_ece_growth: EceGrowth::AfterLoss,
            // RFC 3168 §6.1.2: at one segment the sending TCP MUST reset the retransmit timer and send a new
            // packet only when it expires.
            ecn_one_segment: EcnOneSegment::Rfc3168,
            // RFC 3168 §6.1.2: react to congestion indications at most once per window; a timeout is a reduction.
            ecn_after_timeout: false,
            // RFC 3168 §6.1.2: "should not decrease the slow-start threshold ... if it has been decreased
            // within the last round trip time".
            timeout_after_ecn: TimeoutAfterEcn::SameWindow,
            // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4.1: entering fast retransmit sets recover to HighData,
            // whatever reduced the window before.
            ecn_keeps_recover: false,
            // RFC 5681 §3.2 counts the duplicate ACK; RFC 3168 §6.1.2 answers its ECN-Echo, which no
            // reduction may follow within the window a fast retransmit has just reduced.
            ecn_echo_before_dupack: false,
            // RFC 5681 §3.2 step 2: the third duplicate ACK MUST start fast retransmit, with no `recover`
            // check; the check is RFC 6582 §3.2 step 2's (`newreno_careful`), for NewReno and SACK, and for
            // Tahoe under "careful_ack_heuristic" (its go-back-N brings RFC 6582 §4's duplicate ACKs).
            reno_bugfix: false,
            // RFC 5681 §3.1: the RECOMMENDED way to increase cwnd in congestion avoidance is to count bytes (RFC 3465).
            ca_increase: CaIncrease::ByteCounting,
            // RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS).
            reduction_basis: ReductionBasis::FlightSize,
            // RFC 5681 §3.2: a TCP SHOULD use Limited Transmit (RFC 3042).
            limited_transmit: true,
            // RFC 9293 §3.5: connections open with the three-way handshake.
            handshake: true,
            // RFC 791 / RFC 9293: every segment carries its IP and TCP headers.
            headers_on_data: true,
            // RFC 9438 §4 runs CUBIC "with the fast recovery and retransmit of" RFC 6582 / RFC 6675;
            // NewReno needs no option in the handshake.
            recovery: Recovery::Newreno,
            // RFC 6675 §4-5: the scoreboard's pipe and NextSeg.
            sack_variant: SackVariant::Rfc6675,
            // RFC 6675 §5 step (C): send while cwnd - pipe >= 1 SMSS (RFC 6937 is experimental).
            recovery_rate: RecoveryRate::Rfc6675,
            // RFC 2018 §8: after a timeout the sender SHOULD turn off all SACKed bits; RFC 6675 §5.1 notes
            // Errata 1610 but does not change it.
            sack_after_timeout: SackAfterTimeout::Clear,
            // RFC 5681 §3.2 / RFC 6675 §5: losses detected by duplicate ACKs and IsLost().
            loss_detection: LossDetection::Dupack,
            // RFC 5681 §4.2: every second full-sized segment, or the timer; no quick-ACK mode.
            quickack: Quickack::Off,
            // RFC 6298 §5.1-5.3: the timer restarts on an ACK of new data only.
            rto_rearm: RtoRearm::Rfc6298,
            // RFC 9438 §4.6: beta_cubic SHOULD be set to 0.7.
            cubic_beta: 716_800_000,
            // RFC 9438 §5: C SHOULD be set to 0.4.
            cubic_c: 409_600_000,
            // RFC 9438 §4.7: fast convergence SHOULD be implemented.
            cubic_fast_convergence: true,
            // RFC 9438 §4.8: on a timeout, ssthresh as §4.6 sets it, from flight_size (RFC 5681 §3.1 eq. 4's
            // FlightSize, the data sent and not cumulatively acknowledged).
            cubic_timeout: CubicTimeout::FlightSize,
            // RFC 5681 §3.1 slow start. DEVIATION(RFC 9438): §4.10 says CUBIC SHOULD use HyStart++ (RFC 9406);
            // `rfc`'s values predate it and do not change (set `slow_start_exit = "hystart++"`).
            slow_start_exit: SlowStartExit::None,
            // RFC 5681 §3.1 eq. (2): slow start adds min(N, SMSS) per ACK (RFC 3465's L = 1 SMSS).
            slow_start_increase: SlowStartIncrease::Rfc5681,
            // RFC 9438 §4.2-4.3: the cubic curve and W_est alone; no floor while there is no W_max.
            cubic_initial_growth: CubicInitialGrowth::Rfc9438,
            // DEVIATION(RFC 6675): §5.1 says no new recovery after an RTO until HighACK >= RecoveryPoint
            // (`"rfc6675"`); `rfc` keeps `newreno_careful`'s rule for SACK too, RFC 6582 §4.1's heuristic
            // included, as released (changing it moves `rfc` results; docs/profiles.md).
            sack_recovery_guard: SackRecoveryGuard::NewrenoCareful,
            // RFC 8257 §4.2: the RECOMMENDED estimation gain g = 1/16.
            dctcp_shift_g: 4,
            // SIGCOMM 2010 §3.1: F, the fraction of packets marked (current Linux counts delivered packets).
            dctcp_fraction: DctcpFraction::Packets,
            // RFC 8257 §3.5 / Linux tcp_ecn_send_syn(): a DCTCP host sets ECT on every packet it sends.
            dctcp_ect_control: true,
            // L4STeam tcp_prague.c (0.6) `prague_rtt_target` 25 ms (RFC 9331 §4.3 leaves it open).
            prague_rtt_target: SimDuration::from_millis(25),
            // L4STeam tcp_prague.c (0.6) DEFAULT_RTT_TRANSITION 500 rounds.
            prague_rtt_transition: 500,
            // L4STeam tcp_prague.c (0.6) `prague_ecn_fallback` 0: no Classic-ECN-bottleneck detection.
            prague_ecn_fallback: PragueEcnFallback::None,
            // No segmentation offload: a segment leaves as soon as the windows allow it, as in ns-2's
            // and ns-3's TCP (TSO is a host's optimisation, not a protocol rule).
            tso_segments: 1,
            // RFC 3168 §6.1 feedback unless a scenario asks for RFC 9768's AccECN.
            ecn_feedback: EcnFeedback::Classic,
            // RFC 9768 §3.2.3: it is RECOMMENDED to implement both sending and receiving of AccECN options.
            accecn_option: true,
        };
        match self {
            Profile::Rfc => rfc,
            // ns-2's defaults as they stood between 2001-04-23 (RED gentle_ true) and 2001-05-14 (minrto_ 1).
            // Provenance: ns-2's tcp.cc v1.122 (2001-05-21), the dated comments of tcl/lib/ns-default.tcl,
            // and the "FOR UPDATING GLOBAL DEFAULTS" headers of ns-2's test suites, which pin old values.
            Profile::Ns2_2001 => TcpConfig {
                // ns-2 Agent/TCP packetSize_ 1000 with useHeaders_ false (true from 2001-11-28): data packets
                // are 1000 B on the wire and all 1000 B count as data; ACKs are 40 B (TCPSink packetSize_ 40).
                mss: 1000,
                headers_on_data: false,
                // ns-2 Agent/TCP windowInit_ 1 (2 from 2001-05-26).
                initial_window: InitialWindow::Segments(1),
                // ns-2 Agent/TCP window_ 20 (the largest window, in packets).
                max_cwnd: 20,
                // ns-2 TCPSink has no receive buffer: the sender's window_ (max_cwnd) bounds what a
                // receiver holds beyond a hole, so this bound stays out of the way of any window_.
                rcv_window: 1 << 30,
                // ns-2 Agent/TCP rtxcur_init_ 6.0 (3.0 from 2006-01-21).
                initial_rto: SimDuration::from_secs(6),
                // ns-2 Agent/TCP minrto_ 0 (1 from 2001-05-14); rtt_timeout() still keeps two ticks.
                min_rto: SimDuration::ZERO,
                // ns-2 Agent/TCP maxrto_ 100000 (60 from 2007); the backoff multiplier stops at 64.
                max_rto: SimDuration::from_secs(100_000),
                // ns-2 Agent/TCP tcpTick_ 0.1 (0.01 from 2002-03-07).
                clock_granularity: SimDuration::from_millis(100),
                // ns-2 tcp.cc rtt_update()/rtt_timeout()/rtt_backoff(); rfc2988_ false (true from 2002-03-07).
                rto_estimator: RtoEstimator::Ns2,
                // ns-2 tcp.cc output() (2001): CWR on the next packet sent after a reduction, retransmitted or
                // not (SetCWRonRetransmit_ from 2005-06-19 keeps this behaviour under `true`, the default from 2008).
                ecn_cwr_on_retransmit: true,
                // ns-2 tcp.cc output(): `if (ecn_) hf->ect() = 1` on every data packet, retransmissions included.
                ecn_ect_on_retransmit: true,
                // ns-2 tcp.cc output(): `if (seqno == 0) { ... if (ecn_) { hf->ecnecho() = 1; hf->ect() = 0; } }`, the
                // one-way TCP's stand-in for an ECN-setup SYN (in tcp.cc by 2000: tcp-rfc793edu.cc copies it).
                ecn_first_segment_not_ect: true,
                // ns-2 tcp.cc recv_newack_helper(): opencwnd() only for an ACK without ECN-Echo (old_ecn_ 0).
                ecn_ece_growth: EceGrowth::Never,
                // ns-2 tcp.cc ecn(): `if (cwnd_ <= 1.0) { if (ecn_backoff_) rtt_backoff(); else ecn_backoff_ = 1; }`,
                // then slowdown() halves to int(window() / 2) packets, 0 below two (precisionReduce_ false).
                ecn_one_segment: EcnOneSegment::Ns2,
                // ns-2 tcp.cc ecn(): `if (seqno > recover_ || last_cwnd_action_ == CWND_ACTION_TIMEOUT)`.
                ecn_after_timeout: true,
                // ns-2 tcp.cc timeout(): `recover_ = maxseq_` before `highest_ack_ < recover_ &&
                // last_cwnd_action_ == CWND_ACTION_ECN` (Reno, NewReno and Sack1 set recover_ = maxseq_ first too).
                timeout_after_ecn: TimeoutAfterEcn::LastAction,
                // ns-2 dupack_action() (tcp.cc, tcp-reno.cc, tcp-newreno.cc, tcp-sack1.cc): with
                // `last_cwnd_action_ == CWND_ACTION_ECN` it retransmits and leaves recover_ where ecn() set it.
                ecn_keeps_recover: true,
                // ns-2 tcp-reno.cc (tcp.cc, tcp-newreno.cc, tcp-sack1.cc) recv(): `ecn(tcph->seqno())` before
                // `++dupacks_ == numdupacks_`, so dupack_action() sees the CWND_ACTION_ECN it started.
                ecn_echo_before_dupack: true,
                // ns-2 tcp-newreno.cc dupack_action(): `recovered = (highest_ack_ > recover_)`, lessCareful_ and
                // bugFix_ack_ false.
                newreno_careful: NewrenoCareful::Careful,
                // ns-2 Agent/TCP/Newreno partial_window_deflation_ 0, newreno_changes1_ 0 (both 1 from 2003-05-05,
                // "to reflect RFC 2582"), exit_recovery_fix_ 0.
                newreno_partial_ack: NewrenoPartialAck::Ns2,
                // ns-2 Agent/TCP bugFix_ true.
                reno_bugfix: true,
                // ns-2 Agent/TCP/Sack1 (tcp-sack1.cc), the SACK agent of ns-2's studies; its pipe counter and
                // hole-first sending, not RFC 6675 (2012).
                sack_variant: SackVariant::Ns2Sack1,
                // ns-2 tcp.cc opencwnd(), windowOption_ 1: cwnd_ += increase_num_ / cwnd_, a double.
                ca_increase: CaIncrease::PerAck,
                // ns-2 tcp.cc slowdown(), precisionReduce_ false (true from 2006-01-24).
                reduction_basis: ReductionBasis::Ns2Window,
                // ns-2 Agent/TCP singledup_ 0 (1 later).
                limited_transmit: false,
                // ns-2 Agent/TCP syn_ false (true from 2001-05-17): no SYN exchange.
                handshake: false,
                ..rfc
            },
            Profile::Linux => TcpConfig {
                // Linux: TCP_INIT_CWND 10 (RFC 6928).
                initial_window: InitialWindow::Segments(10),
                // Linux 3.4 to 6.5 (commit b49960a05e32): tcp_rmem[2] = 6 MiB with tcp_adv_win_scale = 1, half of
                // the buffer advertised: 3 MiB, the window receive-buffer autotuning grows to at most.
                rcv_window: 3_145_728,
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
                // Linux: net.ipv4.tcp_ecn = 2, accept ECN when the peer asks.
                ecn: EcnPolicy::Accept,
                // Linux tcp_may_raise_cwnd() (2.6 to 4.x): an ECE ACK may raise cwnd while cwnd < ssthresh;
                // in Loss state (after a timeout) ECE starts no reduction (tcp_enter_cwr needs ca_state < CWR).
                ecn_ece_growth: EceGrowth::SlowStart,
                // Linux tcp_cwnd_reduction() (PRR): sndcnt >= 1 until something is sent, so cwnd >= 1; no timer.
                ecn_one_segment: EcnOneSegment::Linux,
                // Linux tcp_fastretrans_alert(): no new recovery until snd_una passes high_seq.
                reno_bugfix: true,
                // RFC 2582 §5's less careful variant, as this profile has always had: Linux's recovery is its
                // own (tcp_fastretrans_alert() with SACK, PRR), not RFC 6582's guard with or without §4's heuristics.
                newreno_careful: NewrenoCareful::LessCareful,
                // Linux tcp_cong_avoid_ai(): +1 segment once snd_cwnd_cnt acknowledged segments reach cwnd.
                ca_increase: CaIncrease::ByteCounting,
                // Linux: net.ipv4.tcp_sack = 1, SACK recovery under every congestion control.
                recovery: Recovery::Sack,
                // DEVIATION(Linux): tcp_timeout_mark_lost() keeps the SACKed marks at a timeout, but Linux finds
                // a lost retransmission with RACK (RFC 8985 §6.2), which ecnsim lacks; keeping them without
                // it leaves a flow whose retransmission of SND.UNA is lost again sending new data until the
                // backed-off timer fires (docs/models/bbr.md), so the scoreboard is cleared (RFC 2018 §8).
                sack_after_timeout: SackAfterTimeout::Clear,
                // Linux tcp_cubic.c: beta = 717 (/1024, BICTCP_BETA_SCALE).
                cubic_beta: 717_000_000,
                // Linux tcp_cubic.c: bic_scale = 41, cube_rtt_scale = bic_scale * 10 = 410 (/1024).
                cubic_c: 410_000_000,
                // Linux tcp_enter_loss(): no new ssthresh inside a recovery in progress; ssthresh() from snd_cwnd.
                cubic_timeout: CubicTimeout::Linux,
                ..rfc
            },
            // Linux 6.x (net/ipv4/tcp*.c, include/net/tcp.h; 6.18 runs on these machines). Not modelled:
            // RACK-TLP (RFC 8985, tcp_recovery = 1), Linux's RTT estimator (mdev), undo, TSO/GSO
            // (every segment is one MSS), SACK compression (tcp_comp_sack_nr); see docs/profiles.md.
            Profile::Linux6 => TcpConfig {
                // Linux 2.6.19+: net.ipv4.tcp_congestion_control = cubic (tcp_cubic.c constants below).
                cc: CcKind::Cubic,
                // Linux net.ipv4.tcp_timestamps = 1: every segment carries the 12-byte RFC 7323 timestamp
                // option, so 1500-byte packets hold 1448 payload bytes behind 52 bytes of headers.
                mss: 1448,
                header_bytes: 52,
                // Linux 3.0+ include/net/tcp.h: TCP_INIT_CWND 10 (RFC 6928).
                initial_window: InitialWindow::Segments(10),
                // Linux 6.16+ (commit 572be9bf9d0d): tcp_rmem[2] = 32 MiB, and tcp_win_from_space()
                // advertises it times scaling_ratio, TCP_DEFAULT_SCALING_RATIO = 1/2 until measured:
                // 16 MiB, the window receive-buffer autotuning grows to at most. DEVIATION(Linux): the
                // window starts there (no autotuning ramp from tcp_rmem[1]) and the ratio stays 1/2.
                rcv_window: 16 << 20,
                // Linux 3.1+ include/net/tcp.h: TCP_TIMEOUT_INIT 1 s (RFC 6298 §2.1).
                initial_rto: SimDuration::from_secs(1),
                // Linux include/net/tcp.h: TCP_RTO_MIN (HZ / 5) = 200 ms (net.ipv4.tcp_rto_min_us = 200000).
                min_rto: SimDuration::from_millis(200),
                // Linux tcp_set_rto(): RTO = SRTT + max(variance, tcp_rto_min), at least SRTT + 200 ms.
                rto_estimator: RtoEstimator::Linux,
                // Linux include/net/tcp.h: TCP_RTO_MAX (120 * HZ) = 120 s.
                max_rto: SimDuration::from_secs(120),
                // Linux: jiffies at HZ = 1000; the RTT is sampled in microseconds (tcp_rtt_estimator()).
                clock_granularity: SimDuration::from_millis(1),
                // Linux include/net/tcp.h: TCP_DELACK_MIN (HZ / 25) = 40 ms. DEVIATION(Linux): fixed;
                // Linux adapts the ATO between 40 ms and TCP_DELACK_MAX (200 ms) from arrival gaps.
                delayed_ack: true,
                delayed_ack_timeout: SimDuration::from_millis(40),
                // Linux tcp_event_data_recv() / tcp_enter_quickack_mode(): quick-ACK mode.
                quickack: Quickack::Linux,
                // Linux: net.ipv4.tcp_ecn = 2, accept ECN when the peer asks.
                ecn: EcnPolicy::Accept,
                // Linux tcp_may_raise_cwnd() (tcp_input.c): an ECE ACK raises cwnd only below ssthresh.
                ecn_ece_growth: EceGrowth::SlowStart,
                // Linux tcp_cwnd_reduction(): sndcnt >= 1 until something is sent, so cwnd >= 1; no timer.
                ecn_one_segment: EcnOneSegment::Linux,
                // Linux tcp_fastretrans_alert(): no new recovery until snd_una passes high_seq.
                reno_bugfix: true,
                // Linux tcp_try_undo_recovery(): Recovery ends when snd_una reaches high_seq ("SACK TCP is
                // safe"; only Reno waits for an ACK above it), so an ACK of exactly `recover` may start the next.
                newreno_careful: NewrenoCareful::LessCareful,
                // Linux tcp_cong_avoid_ai(): +1 segment once snd_cwnd_cnt acknowledged segments reach cwnd.
                ca_increase: CaIncrease::ByteCounting,
                // Linux: net.ipv4.tcp_sack = 1, SACK recovery under every congestion control.
                recovery: Recovery::Sack,
                // Linux tcp_timeout_mark_lost(): the SACKed marks stay at a timeout (unless SND.UNA is SACKed:
                // reneging); RACK (RFC 8985 §6.2) finds a lost retransmission in the Loss state.
                sack_after_timeout: SackAfterTimeout::Keep,
                // Linux tcp_cwnd_reduction() (3.2+): PRR with the slow-start reduction bound (RFC 6937).
                recovery_rate: RecoveryRate::Rfc6937Ssrb,
                // Linux tcp_cubic.c: beta = 717 (/1024, BICTCP_BETA_SCALE).
                cubic_beta: 717_000_000,
                // Linux tcp_cubic.c: bic_scale = 41, cube_rtt_scale = bic_scale * 10 = 410 (/1024).
                cubic_c: 410_000_000,
                // Linux tcp_enter_loss(): no new ssthresh inside a recovery in progress; ssthresh() from snd_cwnd.
                cubic_timeout: CubicTimeout::Linux,
                // Linux tcp_cubic.c: hystart = 1, hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY.
                slow_start_exit: SlowStartExit::Hystart,
                // Linux tcp_slow_start() (tcp_cong.c, 3.8+): cwnd += acked segments, up to ssthresh.
                slow_start_increase: SlowStartIncrease::Linux,
                // Linux tcp_cubic.c bictcp_update(): cnt <= 20 while last_max_cwnd == 0 (5 % per RTT).
                cubic_initial_growth: CubicInitialGrowth::Linux,
                // Linux net.ipv4.tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP): RFC 8985.
                loss_detection: LossDetection::Rack,
                // Linux bictcp_recalc_ssthresh() / tcp_reno_ssthresh(): ssthresh from tcp_snd_cwnd(), not FlightSize.
                reduction_basis: ReductionBasis::Cwnd,
                // Linux tcp_xmit_retransmit_queue(): retransmitting the head re-arms the RTO timer.
                rto_rearm: RtoRearm::Linux,
                ..rfc
            },
            // Linux 2.4 (include/net/tcp.h, net/ipv4/tcp*.c of 2.4.x; the timer constants are those of
            // 2.2 too). Not modelled: quick-ACK mode (ACK every segment for up to TCP_MAX_QUICKACKS = 16
            // segments at start and after idle), Linux's RTT estimator (mdev) and undo; see docs/profiles.md.
            Profile::Linux24 => TcpConfig {
                // Linux 2.4 sysctl_tcp_sack = 1: SACK on; RFC 2884 names Reno, NewReno or SACK per run.
                cc: CcKind::Sack,
                // Linux 2.4 sysctl_tcp_timestamps = 1: every segment carries the 12-byte RFC 1323 timestamp
                // option, so 1500-byte packets hold 1448 payload bytes behind 52 bytes of headers.
                mss: 1448,
                header_bytes: 52,
                // Linux 2.4 tcp_init_cwnd(): 2 segments when the handshake RTT exceeds 20 ms (3 at MSS 1448
                // below that). DEVIATION(Linux): fixed at 2, RFC 2884's paths being longer than 20 ms.
                initial_window: InitialWindow::Segments(2),
                // Linux 2.4 tcp_rmem[1] = 87380 with tcp_adv_win_scale = 2: 87380 * 3/4 = 65535 bytes.
                rcv_window: 65_535,
                // Linux 2.4 TCP_TIMEOUT_INIT (3*HZ): 3 s ("RFC 1122 initial RTO value").
                initial_rto: SimDuration::from_secs(3),
                // Linux 2.4 TCP_RTO_MIN (HZ/5): 200 ms.
                min_rto: SimDuration::from_millis(200),
                // Linux 2.4 TCP_RTO_MAX (120*HZ): 120 s.
                max_rto: SimDuration::from_secs(120),
                // Linux 2.4 on i386: HZ = 100, one jiffy = 10 ms (RFC 6298's G).
                clock_granularity: SimDuration::from_millis(10),
                // Linux 2.4 TCP_SYN_RETRIES 5.
                syn_retries: 5,
                // Linux 2.4 delayed ACKs, the timer between TCP_DELACK_MIN (HZ/25 = 40 ms) and
                // TCP_DELACK_MAX (HZ/5 = 200 ms). DEVIATION(Linux): fixed at 40 ms (TCP_ATO_MIN, where Linux
                // starts); Linux adapts it to the packet inter-arrival time.
                delayed_ack: true,
                delayed_ack_timeout: SimDuration::from_millis(40),
                // Linux 2.4 sysctl_tcp_ecn = 0: off unless the host turns it on (RFC 2481 negotiation,
                // the same SYN/SYN-ACK flags as RFC 3168 §6.1.1).
                ecn: EcnPolicy::Off,
                // RFC 2481 §6.1.1: the SYN-ACK is not ECT.
                ecn_synack: EcnSynAck::Off,
                // Linux 2.4 INET_ECN_xmit(): ECT(0) on data (ECT(1) unused before L4S).
                ect_codepoint: EctCodepoint::Ect0,
                // Linux 2.4 tcp_cwnd_restart(): cwnd decays after an idle period (RFC 2861).
                restart_after_idle: true,
                // Linux 2.4 __tcp_enter_cwr(): snd_cwnd = min(snd_cwnd, tcp_packets_in_flight() + 1); no timer.
                ecn_one_segment: EcnOneSegment::Linux,
                // Linux 2.4.0 tcp_input.c tcp_may_raise_cwnd(): (!(flag & FLAG_ECE) || snd_cwnd < snd_ssthresh),
                // as in 2.6; RFC 2481 itself says nothing on growth after an ECN-Echo.
                ecn_ece_growth: EceGrowth::SlowStart,
                // Linux 2.4.0 tcp_fastretrans_alert(): Recovery ends only once snd_una reaches high_seq (for Reno
                // "until something *above* high_seq is ACKed ... to prevent false fast retransmits (RFC2582)").
                reno_bugfix: true,
                // RFC 2582 §5's less careful variant, as this profile has always had (Linux 2.4's recovery is its
                // own, tcp_fastretrans_alert()).
                newreno_careful: NewrenoCareful::LessCareful,
                // Linux 2.4.0 tcp_cong_avoid(): +1 per ACK in slow start; in avoidance snd_cwnd_cnt counts ACKs
                // (not acknowledged segments) and cwnd grows by one when it reaches snd_cwnd.
                ca_increase: CaIncrease::PerAck,
                // Linux 2.4 sysctl_tcp_sack = 1.
                recovery: Recovery::Sack,
                // DEVIATION(Linux): 2.4's tcp_retransmit_timer() -> tcp_enter_loss(sk, 0) preserves the SACKed
                // marks; cleared here as in the later profiles (no lost-retransmission detection).
                sack_after_timeout: SackAfterTimeout::Clear,
                // Linux 2.4.0 tcp_enter_loss(): ssthresh recomputed (tcp_recalc_ssthresh(), from snd_cwnd) only
                // in the Open or Disorder state, after the recovered window, or on a first timeout in Loss.
                cubic_timeout: CubicTimeout::Linux,
                ..rfc
            },
        }
    }

    /// The queue a link direction gets when the scenario names none.
    #[must_use]
    pub fn default_queue(self) -> QueueSpec {
        let limit_rule = Some(self.droptail_limit_rule());
        match self {
            // ns-3's default DropTail limit (QueueBase MaxSize "100p").
            Profile::Rfc => QueueSpec::Droptail { limit_packets: Some(100), limit_bytes: None, limit_rule },
            // ns-2 Queue limit_ 50 packets.
            Profile::Ns2_2001 => QueueSpec::Droptail { limit_packets: Some(50), limit_bytes: None, limit_rule },
            // Linux pfifo_fast (fq_codel on most distributions' defaults) with txqueuelen 1000.
            Profile::Linux6 => QueueSpec::Droptail { limit_packets: Some(1000), limit_bytes: None, limit_rule },
            // Linux pfifo_fast with txqueuelen 1000.
            Profile::Linux => QueueSpec::Droptail { limit_packets: Some(1000), limit_bytes: None, limit_rule },
            // Linux 2.4 pfifo_fast with Ethernet's txqueuelen 100 (ether_setup in 2.4).
            Profile::Linux24 => QueueSpec::Droptail { limit_packets: Some(100), limit_bytes: None, limit_rule },
        }
    }

    /// How a DropTail limit is read when the scenario does not say.
    #[must_use]
    pub fn droptail_limit_rule(self) -> LimitRule {
        match self {
            // ns-3 Queue::Enqueue and Linux pfifo: the limit counts the packets waiting.
            Profile::Rfc | Profile::Linux | Profile::Linux24 | Profile::Linux6 => LimitRule::Waiting,
            // ns-2 drop-tail.cc enque: drop if q_->length() + 1 >= qlim_ (limit_ - 1 wait, one on the wire).
            Profile::Ns2_2001 => LimitRule::Ns2,
        }
    }
}

// ---------------------------------------------------------------------------
// Queue defaults: one function per discipline, giving every field of its
// scenario table. A scenario's queue table overrides them field by field
// (`RedSpec::filled`). docs/models/<name>.md tabulates them with sources.
// ---------------------------------------------------------------------------

use crate::qdisc::aecn::{AecnVariant, CountScope};
use crate::qdisc::dualpi2::{DualMarking, DualScheduler, Overload, Pi2Delay};
use crate::qdisc::fq_codel::FqSource;
use crate::qdisc::fq_pie::FqPieOverflow;
use crate::qdisc::pie::{DelayEstimator, PieDropEarly};
use crate::qdisc::red::{AdaptTiming, DropSpacing, IdleStart, MarkTarget, RedEcn};
use crate::qdisc::rem::DecideAt;
use crate::qdisc::{Measure, NonEct, Victim};
use crate::spec::{
    AdaptiveKind, AecnSpec, ByteSize, CodelSpec, DualPi2Spec, FqCodelSpec, FqPieSpec, NumOr, PiSpec, PieSpec, RedSpec,
    RemSpec, ThresholdRule, ThresholdSpec, TimeValue, WeightRule,
};

const MS: i128 = 1_000_000;
const US: i128 = 1_000;

impl Profile {
    /// The limit of the profile's default queue, packets.
    fn queue_limit(self) -> i64 {
        match self.default_queue() {
            QueueSpec::Droptail { limit_packets: Some(n), .. } => n,
            _ => 100,
        }
    }

    /// RED defaults.
    #[must_use]
    pub fn red(self) -> RedSpec {
        // Floyd, "RED: Discussions of Setting Parameters" (1997), FJ93 and the
        // later recommendations, with RFC 3168 ECN.
        let rfc = RedSpec {
            limit_packets: Some(self.queue_limit()),
            limit_bytes: None,
            measure: Some(Measure::Packets),
            // The rfc profile's full-sized packet (MSS 1460 + 40 B headers): idle decay and byte mode only.
            mean_pktsize: Some(ByteSize(1500)),
            // Floyd 1997: min_th 5 packets.
            min_th: Some(NumOr::Num(5.0)),
            // Floyd 1997: max_th at least twice min_th; 3 min_th (also ns-2, ns-3: 15).
            max_th: Some(NumOr::Num(15.0)),
            // Byte thresholds are a scenario's choice (with measure = "bytes"); no profile sets them.
            min_th_bytes: None,
            max_th_bytes: None,
            // FGS01 §5 (Adaptive RED): target queueing delay 5 ms, for min_th = "auto".
            target_delay: Some(TimeValue(5 * MS)),
            // FJ93 §6 / Floyd 1997: w_q 0.002.
            w_q: Some(NumOr::Num(0.002)),
            // tc: burst defaults to (2 min + max) / 3; derived when absent.
            burst: None,
            // Floyd 1997: max_p 0.1.
            max_p: Some(0.1),
            // ns-2 wait_ true (FJ93 §7's uniform spacing with a gap after each drop; ns-3 Wait true).
            wait: Some(true),
            // Floyd, "Recommendation on using the gentle_ variant of RED" (2000).
            gentle: Some(true),
            // RFC 7141 §2.3: byte-mode drop SHOULD NOT be used.
            byte_mode: Some(false),
            // FJ93 §7: p_a = p_b / (1 - count p_b).
            drop_spacing: Some(DropSpacing::Uniform),
            // FJ93 Fig. 2 has no instantaneous-queue gate (ns-2's qlen > 1 is an implementation detail).
            backlog_gate: Some(false),
            // FJ93 §4: the idle period is when the link has nothing to send.
            idle_start: Some(IdleStart::TxEnd),
            // FJ93: the arriving packet is the one marked or dropped.
            victim: Some(Victim::Tail),
            // RFC 3168 §7: mark ECT between the thresholds, drop above max_th.
            ecn: Some(RedEcn::Rfc3168),
            // ns-2 mark_p_ 0.1 (only with ecn = "ns2_mark_p").
            mark_p: Some(0.1),
            // RFC 3168 §5: what cannot be marked is dropped.
            non_ect: Some(NonEct::Drop),
            mark_target: Some(MarkTarget::Arriving),
            adaptive: Some(AdaptiveKind::None),
            // FGS01 Fig. 5: interval 0.5 s, alpha min(0.01, max_p / 4), beta 0.9, max_p in [0.01, 0.5].
            adapt_interval: Some(TimeValue(500 * MS)),
            adapt_alpha: Some(0.01),
            adapt_beta: Some(0.9),
            adapt_timing: Some(AdaptTiming::Periodic),
            max_p_top: Some(0.5),
            max_p_bottom: Some(NumOr::Num(0.01)),
            // Feng99: alpha 3, beta 2.
            feng_alpha: Some(3.0),
            feng_beta: Some(2.0),
        };
        match self {
            Profile::Rfc => rfc,
            // ns-2 tcl/lib/ns-default.tcl between 2001-04-23 and 2001-05-14, as for TCP (the test suites'
            // "FOR UPDATING GLOBAL DEFAULTS" headers record these pre-2002 values).
            Profile::Ns2_2001 => RedSpec {
                // ns-2 Queue set limit_ 50.
                limit_packets: Some(50),
                // ns-2 Queue/RED set queue_in_bytes_ false (changed to true on 10/11/2004).
                measure: Some(Measure::Packets),
                // ns-2 Queue/RED set mean_pktsize_ 500.
                mean_pktsize: Some(ByteSize(500)),
                // ns-2 Queue/RED set thresh_ 5, maxthresh_ 15 (0 = automatic only from 12/29/01).
                min_th: Some(NumOr::Num(5.0)),
                max_th: Some(NumOr::Num(15.0)),
                // ns-2 Queue/RED set q_weight_ 0.002 (-1 = automatic only from 12/29/01).
                w_q: Some(NumOr::Num(0.002)),
                // ns-2 Queue/RED set linterm_ 10.
                max_p: Some(0.1),
                // ns-2 Queue/RED set wait_ true.
                wait: Some(true),
                // ns-2 Queue/RED set gentle_ true ("changed from false to true on Apr 23, 2001").
                gentle: Some(true),
                // ns-2 Queue/RED set bytes_ false (changed to true on 10/11/2004).
                byte_mode: Some(false),
                // ns-2 red.cc enque: if (qavg >= th_min && qlen > 1).
                backlog_gate: Some(true),
                // ns-2 Queue/RED set drop_tail_ true.
                victim: Some(Victim::Tail),
                // ns-2 Queue/RED set setbit_ false.
                ecn: Some(RedEcn::None),
                // ns-2 updateMaxP runs at arrivals, `interval_` after the last change.
                adapt_timing: Some(AdaptTiming::Ns2),
                // ns-2 Queue/RED set bottom_ 0.01 (ns-2.1b9a; 0 = automatic later).
                max_p_bottom: Some(NumOr::Num(0.01)),
                ..rfc
            },
            // Linux tc-red(8) and net/sched/sch_red.c.
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => RedSpec {
                // Linux txqueuelen (sch_red needs an explicit byte limit; here in packets).
                limit_packets: Some(self.queue_limit()),
                // sch_red averages the backlog in bytes.
                measure: Some(Measure::Bytes),
                // tc-red(8): avpkt, "1000 is a good value".
                mean_pktsize: Some(ByteSize(1000)),
                // tc-red(8): min defaults to max / 3, max to limit / 4.
                min_th: Some(NumOr::Rule(ThresholdRule::Tc)),
                max_th: Some(NumOr::Rule(ThresholdRule::Tc)),
                // tc q_red.c: Wlog from tc_red_eval_ewma(min, burst, avpkt).
                w_q: Some(NumOr::Rule(WeightRule::Tc)),
                // tc-red(8): probability defaults to 0.02.
                max_p: Some(0.02),
                // sch_red has no wait (its spacing is red_mark_probability) and no gentle region.
                wait: Some(false),
                gentle: Some(false),
                drop_spacing: Some(DropSpacing::Linux),
                // red_action has no instantaneous-queue gate.
                backlog_gate: Some(false),
                // sch_red red_dequeue: red_start_of_idle_period when the child queue returns nothing.
                idle_start: Some(IdleStart::Dequeue),
                // tc-red(8): ecn is off unless given.
                ecn: Some(RedEcn::None),
                // Linux red_adaptative_algo: a 500 ms timer, MAX_P_MIN 0.01, MAX_P_MAX 0.5, beta 0.9.
                adapt_timing: Some(AdaptTiming::Periodic),
                ..rfc
            },
        }
    }

    /// Adaptive ECN defaults. AECN has one source, STUDIES.md §4 (Zheng's
    /// thesis ch. 5), so every profile gives the same values, except
    /// `mean_pktsize`, which is the profile's RED value.
    #[must_use]
    pub fn aecn(self) -> AecnSpec {
        AecnSpec {
            variant: Some(AecnVariant::Aecn),
            // STUDIES.md §4: buffer 120.
            limit_packets: Some(120),
            // The profile's RED value, so that AECN's idle decay matches its own RED/ECN baselines.
            mean_pktsize: self.red().mean_pktsize,
            // STUDIES.md §3-4: the ns-2 default of the time, 0.002.
            w_q: Some(0.002),
            // STUDIES.md §4: min_th 10, max_th 30.
            min_th: Some(10.0),
            max_th: Some(30.0),
            // STUDIES.md §4: base_max_p in {0.5, 0.8}.
            base_max_p: Some(0.5),
            // STUDIES.md §4: a = b = 2.5.
            a: Some(2.5),
            b: Some(2.5),
            // STUDIES.md §4: AECN3's robust min_th is 2 to 9 packets; 5, the middle, here.
            robust_min_th: Some(5.0),
            // STUDIES.md §4: AECN4's max_th is 30 to 60 packets; 60 here.
            wide_max_th: Some(60.0),
            // STUDIES.md §4: robust [0.5, 75) ms, fragile [150, inf) ms.
            robust_below_ms: Some(75),
            fragile_from_ms: Some(150),
            // ns-2 RED of 2001, which AECN modifies: wait_ true, uniform spacing, the qlen > 1 gate.
            wait: Some(true),
            drop_spacing: Some(DropSpacing::Uniform),
            backlog_gate: Some(true),
            idle_start: Some(IdleStart::TxEnd),
            count_scope: Some(CountScope::Group),
            non_ect: Some(NonEct::Drop),
        }
    }

    /// Threshold-marker defaults.
    #[must_use]
    pub fn threshold(self) -> ThresholdSpec {
        ThresholdSpec {
            limit_packets: Some(self.queue_limit()),
            limit_bytes: None,
            measure: Some(Measure::Packets),
            // Alizadeh et al. 2010 §3.4: K = 20 packets at 1 Gb/s.
            k: Some(20.0),
            // A queue-length threshold compared at arrival, unless the scenario gives k_sojourn.
            k_sojourn: None,
            mark_at: None,
            // RFC 3168 §5: what cannot be marked is dropped.
            non_ect: Some(NonEct::Drop),
        }
    }

    /// PI defaults.
    #[must_use]
    pub fn pi(self) -> PiSpec {
        // HMTG01 §IV: the design example (N = 60, C = 3750 packets/s, R+ = 246 ms):
        // a = 1.822e-5, b = 1.816e-5 (as ns-2's defaults), sampled at 160 Hz, q_ref = 200 packets,
        // buffer 800 (the last three from the paper alone; see docs/models/pi.md).
        let paper = PiSpec {
            limit_packets: Some(800),
            limit_bytes: None,
            measure: Some(Measure::Packets),
            mean_pktsize: Some(ByteSize(500)),
            a: Some(NumOr::Num(1.822e-5)),
            b: Some(NumOr::Num(1.816e-5)),
            // HMTG01 §IV: the example's N^- = 60 flows and R^+ = 246 ms, the inputs of `"auto"` gains.
            design_flows: Some(60.0),
            design_rtt: Some(TimeValue(246 * MS)),
            w: Some(160.0),
            qref: Some(200.0),
            // RFC 7567 §4.2.1: AQMs should be able to mark ECN-capable packets.
            ecn: Some(true),
            non_ect: Some(NonEct::Drop),
            byte_mode: Some(false),
        };
        match self {
            Profile::Rfc | Profile::Linux | Profile::Linux24 | Profile::Linux6 => {
                PiSpec { ecn: Some(self == Profile::Rfc), ..paper }
            }
            // ns-2 ns-default.tcl: Queue/PI set a_ 0.00001822, b_ 0.00001816, w_ 170, qref_ 50,
            // mean_pktsize_ 500, setbit_ false, bytes_ false, queue_in_bytes_ false; Queue limit_ 50.
            Profile::Ns2_2001 => {
                PiSpec { limit_packets: Some(50), w: Some(170.0), qref: Some(50.0), ecn: Some(false), ..paper }
            }
        }
    }

    /// REM defaults.
    #[must_use]
    pub fn rem(self) -> RemSpec {
        // ALLY01 §4 and ns-2 ns-default.tcl: gamma_ 0.001, phi_ 1.001, pbo_ 20, pupdtime_ 0.002,
        // inw_ 1; alpha 0.1 (hard-coded in ns-2 rem.cc).
        let paper = RemSpec {
            limit_packets: Some(self.queue_limit()),
            limit_bytes: None,
            // ALLY01 gives no overflow rule: the limit counts the packets waiting, as every other AQM here.
            limit_rule: Some(LimitRule::Waiting),
            measure: Some(Measure::Packets),
            mean_pktsize: Some(ByteSize(1500)),
            gamma: Some(0.001),
            phi: Some(1.001),
            alpha: Some(0.1),
            b_ref: Some(20.0),
            update_interval: Some(TimeValue(2 * MS)),
            inw: Some(1.0),
            // RFC 7567 §4.2.1: AQMs should be able to mark ECN-capable packets.
            ecn: Some(true),
            decide_at: Some(DecideAt::Enqueue),
            non_ect: Some(NonEct::Drop),
        };
        match self {
            Profile::Rfc => paper,
            // ns-2 ns-default.tcl: Queue/REM set mean_pktsize_ 1000, markpkts_ false, qib_ false;
            // rem.cc marks departing packets and never drops Not-ECT ones in markpkts_ mode.
            Profile::Ns2_2001 => RemSpec {
                // ns-2 rem.cc REMQueue::enque: q_->enque(pkt), then drop if qlen >= qlim, as drop-tail.cc.
                limit_rule: Some(LimitRule::Ns2),
                mean_pktsize: Some(ByteSize(1000)),
                ecn: Some(false),
                decide_at: Some(DecideAt::Dequeue),
                non_ect: Some(NonEct::Pass),
                ..paper
            },
            // Linux has no REM; the paper's values, without ECN like Linux's AQMs by default.
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => RemSpec { ecn: Some(false), ..paper },
        }
    }

    /// CoDel defaults.
    #[must_use]
    pub fn codel(self) -> CodelSpec {
        let rfc = CodelSpec {
            // Linux sch_codel's default limit, 1000 packets (RFC 8289 sets none).
            limit_packets: Some(1000),
            limit_bytes: None,
            // RFC 8289 §4.4: TARGET 5 ms.
            target: Some(TimeValue(5 * MS)),
            // RFC 8289 §4.3: INTERVAL 100 ms.
            interval: Some(TimeValue(100 * MS)),
            // RFC 8289 §5: MAXPACKET, an MTU (packet sizes here count IP headers, not link headers).
            max_packet: Some(ByteSize(1500)),
            // RFC 8289 §4 / RFC 7567 §4.2.1: mark ECN-capable packets instead of dropping.
            ecn: Some(true),
            ce_threshold: None,
        };
        match self {
            Profile::Rfc => rfc,
            // CoDel postdates 2001: RFC 8289's parameters with ns-2's queue limit and no ECN.
            Profile::Ns2_2001 => CodelSpec { limit_packets: Some(50), ecn: Some(false), ..rfc },
            // Linux sch_codel: limit 1000, target 5 ms, interval 100 ms, noecn by default.
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => CodelSpec { ecn: Some(false), ..rfc },
        }
    }

    /// FQ-CoDel defaults: RFC 8290 §5 and Linux `sch_fq_codel.c`, the same in every profile
    /// (FQ-CoDel postdates 2001; the `ns2-2001` profile has no FQ-CoDel of its own).
    #[must_use]
    pub fn fq_codel(self) -> FqCodelSpec {
        let _ = self;
        FqCodelSpec {
            // RFC 8290 §5.2.4: limit 10240 packets (Linux and ns-3 alike).
            limit_packets: Some(10_240),
            // Linux fq_codel_init: memory_limit = 32 MB.
            memory_limit: Some(ByteSize(32 << 20)),
            // RFC 8290 §5.2.3: flows 1024.
            flows: Some(1024),
            // RFC 8290 §5.2.2: quantum 1514 bytes (an Ethernet MTU with its header).
            quantum: Some(ByteSize(1514)),
            // RFC 8290 §5.2.1 / RFC 8289 §4.4: TARGET 5 ms.
            target: Some(TimeValue(5 * MS)),
            // RFC 8290 §5.2.1 / RFC 8289 §4.3: INTERVAL 100 ms.
            interval: Some(TimeValue(100 * MS)),
            // RFC 8289 §5: MAXPACKET, an MTU (packet sizes here count IP headers, not link headers).
            max_packet: Some(ByteSize(1500)),
            // RFC 8290 §5.2.7: ECN marking is enabled by default (Linux fq_codel_init: ecn = true).
            ecn: Some(true),
            ce_threshold: None,
            ce_threshold_ect1: Some(false),
            // Linux fq_codel_init: drop_batch_size = 64 (ns-3 DropBatchSize 64).
            drop_batch: Some(64),
            perturbation: None,
            max_packet_backlog: Some(FqSource::Linux),
            overflow_count: Some(FqSource::Linux),
            l4s_mode: Some(FqSource::Linux),
        }
    }

    /// FQ-PIE defaults: Linux `sch_fq_pie.c` (`fq_pie_init`, `pie_params_init`), which defines
    /// FQ-PIE; ECN on in `rfc` and `ns2-2001` as for PIE (RFC 7567 §4.2.1), off in the Linux
    /// profiles as in Linux. ns-3's `FqPieQueueDisc` differs in `overflow`, `quantum`
    /// (the device MTU) and `derandomize` (docs/models/fq_pie.md).
    #[must_use]
    pub fn fq_pie(self) -> FqPieSpec {
        let linux = FqPieSpec {
            // Linux fq_pie_init: sch->limit = 10 * 1024 packets (ns-3 MaxSize 10240p).
            limit_packets: Some(10_240),
            // Linux fq_pie_init: flows_cnt = 1024 (ns-3 Flows 1024).
            flows: Some(1024),
            // Linux fq_pie_init: quantum = psched_mtu(dev), 1514 bytes on Ethernet.
            quantum: Some(ByteSize(1514)),
            // Linux pie_params_init: target 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16 (RFC 8033's values).
            target: Some(TimeValue(15 * MS)),
            t_update: Some(TimeValue(15 * MS)),
            alpha: Some(0.125),
            beta: Some(1.25),
            // Linux pie_vars_init: burst_time = PSCHED_NS2TICKS(150 * NSEC_PER_MSEC) (RFC 8033 §4.4).
            max_burst: Some(TimeValue(150 * MS)),
            // Linux sch_fq_pie.c: "ECN capability is off by default".
            ecn: Some(false),
            // Linux fq_pie_init: ecn_prob = 10 (per cent).
            mark_ecn_threshold: Some(0.1),
            // Linux pie_params_init: bytemode = false.
            byte_mode: Some(false),
            // An MTU: Linux pie_drop_early's "backlog < 2 * mtu" safeguard and byte-mode divisor.
            mean_pktsize: Some(ByteSize(1500)),
            // Linux pie_params_init: dq_rate_estimator = false (timestamps).
            delay_estimator: Some(DelayEstimator::Timestamp),
            // RFC 8033 §4.3: DQ_THRESHOLD 2^14 bytes (Linux QUEUE_THRESHOLD).
            dq_threshold: Some(ByteSize(16_384)),
            // Linux pie_calculate_probability: the 2 % cap above 10 % (RFC 8033 §5.5).
            cap_drop_adjustment: Some(true),
            // Linux pie_drop_early: accu_prob is always kept (RFC 8033 §5.4).
            derandomize: Some(true),
            overflow: Some(FqPieOverflow::Linux),
            // ns-3 FqPieQueueDisc DropBatchSize 64 (used by overflow = "ns3" only).
            drop_batch: Some(64),
            perturbation: None,
            // DEVIATION(Linux): RFC 8033's drop_early by default (the rules FQ-PIE has been validated with); "linux" is Linux pie_drop_early (docs/models/fq_pie.md).
            drop_early: Some(PieDropEarly::Rfc),
            // Linux fq_pie has no shallow L4S marking; ns-3 FqPieQueueDisc CeThreshold Time::Max, UseL4s false.
            ce_threshold: None,
            ce_threshold_ect1: Some(false),
        };
        match self {
            // FQ-PIE postdates 2001 and has no RFC: Linux's parameters, with ECN as RFC 7567 §4.2.1 asks.
            Profile::Rfc | Profile::Ns2_2001 => FqPieSpec { ecn: Some(true), ..linux },
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => linux,
        }
    }

    /// DualPI2 defaults.
    #[must_use]
    pub fn dualpi2(self) -> DualPi2Spec {
        let rfc = DualPi2Spec {
            // Linux sch_dualpi2 dualpi2_reset_default(): limit 10000 packets ("max 125 ms at 1 Gbps");
            // RFC 9332 Appendix A.1 sizes it as MAX_LINK_RATE * 250 ms, which depends on the link.
            limit_packets: Some(10_000),
            limit_bytes: None,
            // RFC 9332 Appendix A.1 (Figure 2): target = 15 ms, RTT_max = 100 ms.
            target: Some(TimeValue(15 * MS)),
            rtt_max: Some(TimeValue(100 * MS)),
            // RFC 9332 Appendix A.1: Tupdate = min(target, RTT_max / 3), alpha = 0.1 Tupdate / RTT_max^2,
            // beta = 0.3 / RTT_max: derived when the queue is resolved (absent here).
            t_update: None,
            alpha: None,
            beta: None,
            // RFC 9332 §2.1, Appendix A.1: k = 2.
            coupling: Some(2),
            // RFC 9332 Appendix A.1: the native L4S ramp, minTh = 800 us, range = 400 us; Th_len = 1 packet.
            l_threshold: Some(TimeValue(800 * US)),
            l_range: Some(TimeValue(400 * US)),
            th_len: Some(1),
            // RFC 9332 Appendix A.2: no drop or mark below 2 MTU of queue (Ethernet MTU).
            mtu: Some(ByteSize(1500)),
            // RFC 9332 Appendix A.1: dualpi2_update() uses the Classic queue's delay, cq.time().
            pi2_delay: Some(Pi2Delay::Classic),
            // RFC 9332 §2.5.1.1: switch to drop under overload.
            overload: Some(Overload::Drop),
            // RFC 9332 §2.4, Appendix A.2: the time-shifted FIFO.
            scheduler: Some(DualScheduler::TsFifo),
            // DEVIATION(RFC 9332): Figure 2 leaves the scheduler's parameter out ("NOT SHOWN"); 50 ms is
            // ecnsim's choice (the Classic queue is served once its head is 50 ms older than L's).
            tshift: Some(TimeValue(50 * MS)),
            // Linux classic_protection 10 (wc = 10%), used only by the `wrr` scheduler.
            classic_weight: Some(10),
            // DEVIATION(RFC 9332): Appendix A Figure 4 decides by recur(); the rfc profile keeps Linux's random draw (dualpi2_roll()) so its runs stay as validated: `marking = "recur"` for the RFC's.
            marking: Some(DualMarking::Random),
        };
        match self {
            Profile::Rfc | Profile::Ns2_2001 => rfc,
            // Linux sch_dualpi2 dualpi2_reset_default(): tupdate 16 ms, alpha 41/256 Hz, beta 819/256 Hz,
            // step_thresh 1 ms (a step), min_qlen_step 0, the larger of the two queue delays
            // (calculate_probability()), drop_on_overload, the WRR credit scheduler with wc = 10%.
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => DualPi2Spec {
                t_update: Some(TimeValue(16 * MS)),
                alpha: Some(41.0 / 256.0),
                beta: Some(819.0 / 256.0),
                l_threshold: Some(TimeValue(MS)),
                l_range: Some(TimeValue(0)),
                th_len: Some(0),
                pi2_delay: Some(Pi2Delay::Max),
                scheduler: Some(DualScheduler::Wrr),
                ..rfc
            },
        }
    }

    /// PIE defaults.
    #[must_use]
    pub fn pie(self) -> PieSpec {
        let rfc = PieSpec {
            // Linux sch_pie's default limit, 1000 packets (RFC 8033 sets none).
            limit_packets: Some(1000),
            limit_bytes: None,
            // RFC 8033 §5.2 (Appendix A): QDELAY_REF 15 ms, T_UPDATE 15 ms, alpha 0.125, beta 1.25.
            target: Some(TimeValue(15 * MS)),
            t_update: Some(TimeValue(15 * MS)),
            alpha: Some(0.125),
            beta: Some(1.25),
            // RFC 8033 §4.4: MAX_BURST 150 ms.
            max_burst: Some(TimeValue(150 * MS)),
            // RFC 8033 §5.1 / RFC 7567 §4.2.1: mark while drop_prob <= MAX_ECNTH.
            ecn: Some(true),
            // RFC 8033 §5.1: MAX_ECNTH 10%.
            mark_ecn_threshold: Some(0.1),
            byte_mode: Some(false),
            // An MTU: the "two packets" safeguard of RFC 8033 §4.1 (Linux uses 2 MTU).
            mean_pktsize: Some(ByteSize(1500)),
            // RFC 8033 §4.3: the departure rate estimate (Little's law) is the primary method.
            delay_estimator: Some(DelayEstimator::DequeueRate),
            // RFC 8033 §4.3: DQ_THRESHOLD 2^14 bytes.
            dq_threshold: Some(ByteSize(16_384)),
            // RFC 8033 §5.5.
            cap_drop_adjustment: Some(true),
            // RFC 8033 §5.4: optional ("PIE may use"); off as in ns-3 (Linux: always on, below).
            derandomize: Some(false),
            // RFC 8033 §4.1 and Appendix B drop_early.
            drop_early: Some(PieDropEarly::Rfc),
        };
        match self {
            Profile::Rfc => rfc,
            // PIE postdates 2001: RFC 8033's parameters with ns-2's queue limit and no ECN.
            Profile::Ns2_2001 => PieSpec { limit_packets: Some(50), ecn: Some(false), ..rfc },
            // Linux sch_pie: limit 1000, target 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16,
            // noecn, timestamps unless dq_rate_estimator is given.
            // Linux sch_pie.c pie_drop_early: accu_prob is always kept (no option), its
            // safeguard and byte mode are Linux's (drop_early = "linux").
            Profile::Linux | Profile::Linux24 | Profile::Linux6 => PieSpec {
                ecn: Some(false),
                delay_estimator: Some(DelayEstimator::Timestamp),
                derandomize: Some(true),
                drop_early: Some(PieDropEarly::Linux),
                ..rfc
            },
        }
    }
}

#[cfg(test)]
mod queue_default_tests {
    use super::*;

    /// ns-2's DropTail limit_ holds one packet fewer than ns-3's MaxSize (issue 13 item 7).
    #[test]
    fn droptail_limit_rule_follows_the_profile() {
        assert_eq!(Profile::Ns2_2001.droptail_limit_rule(), LimitRule::Ns2);
        assert_eq!(Profile::Rfc.droptail_limit_rule(), LimitRule::Waiting);
        assert_eq!(Profile::Linux.droptail_limit_rule(), LimitRule::Waiting);
        let QueueSpec::Droptail { limit_rule, .. } = Profile::Ns2_2001.default_queue() else { panic!() };
        assert_eq!(limit_rule, Some(LimitRule::Ns2));
    }

    /// ns-2's REM enqueues, then drops once the queue reaches limit_ (rem.cc REMQueue::enque), as its
    /// DropTail; its RED and PI drop when the queue found is at limit_ (red.cc, pi.cc enque), the waiting rule.
    #[test]
    fn rem_limit_rule_follows_ns2_only_under_its_profile() {
        assert_eq!(Profile::Ns2_2001.rem().limit_rule, Some(LimitRule::Ns2));
        for p in [Profile::Rfc, Profile::Linux, Profile::Linux24] {
            assert_eq!(p.rem().limit_rule, Some(LimitRule::Waiting), "{}", p.name());
        }
    }

    /// Every field of every discipline's defaults is given, in every profile.
    #[test]
    fn queue_defaults_are_complete() {
        for &name in Profile::NAMES {
            let p = Profile::from_name(name).unwrap();
            for json in [
                serde_json::to_value(p.red()).unwrap(),
                serde_json::to_value(p.aecn()).unwrap(),
                serde_json::to_value(p.threshold()).unwrap(),
                serde_json::to_value(p.pi()).unwrap(),
                serde_json::to_value(p.rem()).unwrap(),
                serde_json::to_value(p.codel()).unwrap(),
                serde_json::to_value(p.pie()).unwrap(),
                serde_json::to_value(p.dualpi2()).unwrap(),
            ] {
                let n = json.as_object().unwrap().len();
                assert!(n >= 4, "{name}: {json}");
            }
            let red = serde_json::to_value(p.red()).unwrap();
            // Every field but limit_bytes and burst (derived) is set.
            assert_eq!(red.as_object().unwrap().len(), 28, "{name}: {red}");
        }
    }

    /// No profile lets a receiver hold an unbounded amount of data beyond a hole: the receive
    /// window, or (ns-2, which has no receive buffer) the sender's largest window, bounds it.
    #[test]
    fn every_profile_bounds_what_a_receiver_holds() {
        for &name in Profile::NAMES {
            let t = Profile::from_name(name).unwrap().tcp();
            let held = t.rcv_window.min(u64::from(t.max_cwnd) * u64::from(t.mss));
            // linux-6.x: tcp_rmem[2] = 32 MiB (Linux 6.16+) at scaling ratio 1/2.
            let bound = if name == "linux-6.x" { 16 << 20 } else { 4 << 20 };
            assert!(held <= bound, "{name}: {held} bytes");
        }
        assert_eq!(Profile::Linux6.tcp().rcv_window, 16 << 20);
        assert_eq!(Profile::Rfc.tcp().rcv_window, 65_535);
        assert_eq!(Profile::Linux.tcp().rcv_window, 3 << 20);
        assert_eq!(Profile::Ns2_2001.tcp().max_cwnd * Profile::Ns2_2001.tcp().mss, 20_000);
    }

    /// The Linux 2.4 profile carries the kernel's constants (include/net/tcp.h) at HZ = 100.
    #[test]
    fn linux_2_4_has_the_kernels_timers() {
        let t = Profile::from_name("linux-2.4").unwrap().tcp();
        let hz = SimDuration::from_millis(10);
        assert_eq!(t.clock_granularity, hz);
        assert_eq!(t.initial_rto, SimDuration::from_nanos(300 * hz.as_nanos())); // 3*HZ
        assert_eq!(t.min_rto, SimDuration::from_nanos(20 * hz.as_nanos())); // HZ/5
        assert_eq!(t.max_rto, SimDuration::from_nanos(12_000 * hz.as_nanos())); // 120*HZ
        assert_eq!(t.delayed_ack_timeout, SimDuration::from_nanos(4 * hz.as_nanos())); // HZ/25
        assert_eq!((t.syn_retries, t.mss + t.header_bytes, t.cc), (5, 1500, CcKind::Sack));
        assert_eq!(Profile::Linux24.name(), "linux-2.4");
        assert_eq!(Profile::Linux24.queue_limit(), 100);
        // Linux 2.4.0 tcp_input.c: ECE raises cwnd only in slow start, no second recovery below high_seq,
        // avoidance counts ACKs; TCP_ECN_send() (include/net/tcp_ecn.h): ECT and CWR on new data only.
        assert_eq!((t.ecn_ece_growth, t.reno_bugfix, t.ca_increase), (EceGrowth::SlowStart, true, CaIncrease::PerAck));
        assert!(!t.ecn_ect_on_retransmit && !t.ecn_cwr_on_retransmit);
        assert_eq!(t.rto_estimator, RtoEstimator::Rfc6298);
    }
}
