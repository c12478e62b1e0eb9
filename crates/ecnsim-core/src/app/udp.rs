//! Unresponsive UDP sources: constant bit rate, and on/off with heavy-tailed
//! periods (Pareto on/off, as ns-2's `Application/Traffic/Pareto`).
//!
//! Read first: RFC 768 (UDP); Willinger, Taqqu, Sherman & Wilson 1997
//! (superposed Pareto on/off sources); ns-2 `tools/pareto.cc`.
//!
//! A datagram of `packet_size` payload bytes is `packet_size + 28` bytes on
//! the wire; a source at `rate` sends one every `(packet_size + 28) * 8 / rate`
//! seconds while on. The sink counts what arrives (the `records` table has
//! one `udp` row per flow).

use super::dist::Dist;
use super::{App, Command, Cx, Timers};
use crate::flow::UDP_HEADER_BYTES;
use crate::ids::NodeId;
use crate::rng::SimRng;
use crate::time::{BitRate, SimDuration, SimTime};

#[derive(Debug)]
struct Source {
    src: NodeId,
    dst: NodeId,
    /// Index of its UDP flow, once created.
    flow: Option<u32>,
    /// On/off: end of the current on period (`None`: off, or CBR).
    on_until: Option<SimTime>,
}

/// UDP sources of one app.
#[derive(Debug)]
pub(crate) struct UdpSources {
    sources: Vec<Source>,
    payload: u32,
    /// Time between datagrams while on.
    gap: SimDuration,
    /// On and off period lengths (None: CBR, always on).
    on_off: Option<(Dist, Dist)>,
    rng: SimRng,
    timers: Timers,
}

impl UdpSources {
    pub(crate) fn new(
        pairs: &[(NodeId, NodeId)],
        start: SimTime,
        jitter: u64,
        rate: BitRate,
        payload: u32,
        on_off: Option<(Dist, Dist)>,
        mut rng: SimRng,
    ) -> Self {
        let mut timers = Timers::default();
        let sources = pairs
            .iter()
            .enumerate()
            .map(|(i, &(src, dst))| {
                let at = start + SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("sources fit in u32"));
                Source { src, dst, flow: None, on_until: None }
            })
            .collect();
        let gap = rate.tx_time(payload + UDP_HEADER_BYTES);
        UdpSources { sources, payload, gap, on_off, rng, timers }
    }
}

impl App for UdpSources {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            let s = &mut self.sources[i as usize];
            let flow = match s.flow {
                Some(f) => f,
                None => {
                    let f = cx.open_udp(s.src, s.dst);
                    s.flow = Some(f);
                    if let Some((on, _)) = &self.on_off {
                        s.on_until = Some(cx.now + super::secs(on.sample(&mut self.rng)));
                    }
                    f
                }
            };
            match (&self.on_off, s.on_until) {
                (Some((on, off)), Some(until)) if cx.now >= until => {
                    // The on period is over: stay silent for an off period, then start a new on period.
                    let off_len = super::secs(off.sample(&mut self.rng));
                    let on_len = super::secs(on.sample(&mut self.rng));
                    let resume = cx.now + off_len;
                    s.on_until = Some(resume + on_len);
                    self.timers.add(resume, i);
                }
                _ => {
                    cx.push(Command::UdpSend { flow, payload: self.payload });
                    self.timers.add(cx.now + self.gap, i);
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }
}
