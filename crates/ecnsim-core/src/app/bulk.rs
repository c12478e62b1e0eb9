//! Bulk transfers: one `[[flows]]` connection that sends a finite or
//! unlimited amount, and FTP clients that fetch files of one size one after
//! another, forever (RFC 2415 §3's FTP clients, STUDIES.md §2).
//!
//! Read first: RFC 959 §3.2 (FTP opens a data connection per transfer) and
//! RFC 2415 §3.

use super::{App, Command, ConnEvent, Cx, Record, RecordKind, Side, Timers};
use crate::ids::{FlowId, NodeId};
use crate::rng::SimRng;
use crate::time::SimTime;

/// One bulk transfer from the initiator to the responder.
#[derive(Debug)]
pub(crate) struct Bulk {
    /// The connection, created at build time.
    pub(crate) flow: FlowId,
    /// Bytes to send; `None`: without end.
    pub(crate) bytes: Option<u64>,
}

impl App for Bulk {
    fn on_start(&mut self, cx: &mut Cx<'_>) {
        cx.push(Command::Connect { flow: self.flow });
        // The bulk application writes everything at once, then closes.
        match self.bytes {
            Some(b) => {
                cx.push(Command::Send { flow: self.flow, side: Side::Client, bytes: b });
                cx.push(Command::Close { flow: self.flow, side: Side::Client });
            }
            None => cx.push(Command::SendUnlimited { flow: self.flow }),
        }
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        if ev.side != Side::Server {
            return;
        }
        // The sink closes its direction once the sender has closed its own.
        if ev.ev.peer_closed {
            cx.push(Command::Close { flow: ev.flow, side: Side::Server });
        }
        if ev.ev.received && self.bytes.is_some_and(|b| ev.delivered >= b) {
            cx.push(Command::Completed { flow: ev.flow });
        }
    }
}

/// A client fetching files from its server.
#[derive(Debug)]
pub(crate) struct FtpClient {
    pub(crate) host: NodeId,
    pub(crate) server: NodeId,
    /// The file being fetched: its connection and when it was requested.
    pub(crate) current: Option<(FlowId, SimTime)>,
}

/// FTP clients fetching `file_size`-byte files one after another.
#[derive(Debug)]
pub(crate) struct Ftp {
    pub(crate) clients: Vec<FtpClient>,
    pub(crate) file_size: u64,
    pub(crate) timers: Timers,
}

impl Ftp {
    pub(crate) fn new(
        clients: &[(NodeId, NodeId)],
        start: SimTime,
        jitter: u64,
        file_size: u64,
        mut rng: SimRng,
    ) -> Self {
        let mut timers = Timers::default();
        let clients = clients
            .iter()
            .enumerate()
            .map(|(i, &(host, server))| {
                let at = start + crate::time::SimDuration::from_nanos(if jitter > 0 { rng.below(jitter) } else { 0 });
                timers.add(at, u32::try_from(i).expect("clients fit in u32"));
                FtpClient { host, server, current: None }
            })
            .collect();
        Ftp { clients, file_size, timers }
    }

    fn fetch(&mut self, cx: &mut Cx<'_>, i: u32) {
        let c = &mut self.clients[i as usize];
        // RFC 959 §3.2: each file travels on its own data connection, opened by the client here.
        let f = cx.open(c.host, c.server, None, i);
        c.current = Some((f, cx.now));
    }
}

impl App for Ftp {
    fn on_start(&mut self, _cx: &mut Cx<'_>) {}

    fn on_timer(&mut self, cx: &mut Cx<'_>) {
        while let Some(i) = self.timers.pop_due(cx.now) {
            self.fetch(cx, i);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    fn on_conn(&mut self, cx: &mut Cx<'_>, ev: ConnEvent) {
        match ev.side {
            Side::Server => {
                if ev.ev.connected {
                    // The server sends the file and closes (end of file = end of connection).
                    cx.push(Command::Send { flow: ev.flow, side: Side::Server, bytes: self.file_size });
                    cx.push(Command::Close { flow: ev.flow, side: Side::Server });
                }
            }
            Side::Client => {
                if ev.ev.peer_closed {
                    cx.push(Command::Close { flow: ev.flow, side: Side::Client });
                }
                let c = &self.clients[ev.tag as usize];
                let done = ev.ev.received && ev.delivered >= self.file_size;
                if let (true, Some((f, started))) = (done, c.current) {
                    if f == ev.flow {
                        let facts = cx.facts(f);
                        cx.record(Record {
                            kind: RecordKind::Object,
                            app: cx.app,
                            client: c.host,
                            server: c.server,
                            start: started,
                            end: cx.now,
                            request_bytes: 0,
                            response_bytes: self.file_size,
                            objects: 1,
                            facts,
                        });
                        self.clients[ev.tag as usize].current = None;
                        // The next file is requested at once.
                        self.fetch(cx, ev.tag);
                    }
                }
                if ev.ev.failed {
                    self.fetch(cx, ev.tag);
                }
            }
        }
    }
}
