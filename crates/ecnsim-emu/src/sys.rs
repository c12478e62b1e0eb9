//! The system calls the driver makes, each behind a safe function: TUN
//! devices opened inside a network namespace, epoll, a nanosecond timerfd,
//! non-blocking reads and writes, and the monotonic clock.
//!
//! This is the crate's only `unsafe` code; every block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Longest interface name (`IFNAMSIZ` less the terminating NUL).
pub(crate) const MAX_IFNAME: usize = libc::IFNAMSIZ - 1;

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds (the clock the timerfd and the pacing use).
#[must_use]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts) };
    debug_assert_eq!(ret, 0);
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// Put the calling thread under `SCHED_FIFO` at `priority` (1-99), or back
/// under `SCHED_OTHER` with `None`. Needs root (or `CAP_SYS_NICE`).
///
/// # Errors
/// `EPERM` without the privilege, `EINVAL` for a bad priority.
pub(crate) fn set_realtime(priority: Option<i32>) -> io::Result<()> {
    let (policy, prio) = priority.map_or((libc::SCHED_OTHER, 0), |p| (libc::SCHED_FIFO, p));
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    check(unsafe { libc::sched_setscheduler(0, policy, &raw const param) })?;
    Ok(())
}

/// The `ifreq` of `TUNSETIFF`: a name and the flags (the rest of the union is unused).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Open a new TUN device `ifname` (`IFF_TUN | IFF_NO_PI`: raw IP packets, no
/// offloads, so the kernel hands over MTU-sized packets) inside the network
/// namespace bound at `netns` (e.g. `/run/netns/NAME`), non-blocking.
///
/// The `setns` happens on a short-lived thread, so no thread of the caller
/// ever changes namespace; the device stays in the namespace it was created
/// in and disappears when the returned descriptor is closed.
///
/// # Errors
/// The failing step (opening the namespace, `setns`, `/dev/net/tun`, `TUNSETIFF`).
pub(crate) fn open_tun_in_netns(netns: &Path, ifname: &str) -> io::Result<OwnedFd> {
    if ifname.is_empty() || ifname.len() > MAX_IFNAME || ifname.contains(['/', ' ', '\0']) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name {ifname:?}")));
    }
    let netns: PathBuf = netns.to_owned();
    let name = ifname.to_owned();
    std::thread::spawn(move || -> io::Result<OwnedFd> {
        let ns = File::open(&netns)
            .map_err(|e| io::Error::new(e.kind(), format!("network namespace {}: {e}", netns.display())))?;
        // SAFETY: `ns` is an open namespace file; setns only changes this (temporary) thread.
        check(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })
            .map_err(|e| io::Error::new(e.kind(), format!("setns({}): {e}", netns.display())))?;
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: `path` is a NUL-terminated string; the flags are valid for open(2).
        let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })
            .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
        // SAFETY: `fd` was just returned by open(2) and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: 0, _pad: [0; 22] };
        for (dst, src) in req.name.iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        #[allow(clippy::cast_possible_truncation)]
        {
            req.flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        }
        // SAFETY: TUNSETIFF reads and writes an `ifreq`, which `IfReq` lays out (40 bytes, C layout).
        check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &raw mut req) })
            .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
        Ok(fd)
    })
    .join()
    .map_err(|_| io::Error::other("the TUN-opening thread panicked"))?
}

/// Read one packet into `buf`; `Ok(None)` if none is waiting.
///
/// # Errors
/// Any error of read(2) but `EAGAIN`/`EINTR`.
pub(crate) fn read_nonblocking(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(usize::try_from(n).expect("non-negative")));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted => {}
            _ => return Err(e),
        }
    }
}

/// Write one packet; returns the bytes written.
///
/// # Errors
/// Any error of write(2) but `EINTR`.
pub(crate) fn write_packet(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(usize::try_from(n).expect("non-negative"));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// An epoll instance watching descriptors for readability, each with a token.
#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    pub(crate) fn new(capacity: usize) -> io::Result<Self> {
        // SAFETY: plain system call with valid flags.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by epoll_create1 and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd, events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)] })
    }

    /// Watch `fd` for input (level-triggered), reporting `token`.
    pub(crate) fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        #[allow(clippy::cast_sign_loss)]
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: `ev` is a valid epoll_event; both descriptors are open.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &raw mut ev) })?;
        Ok(())
    }

    /// Wait up to `timeout_ms` (-1: forever) and call `on` with each ready token.
    pub(crate) fn wait(&mut self, timeout_ms: i32, mut on: impl FnMut(u64)) -> io::Result<()> {
        let cap = libc::c_int::try_from(self.events.len()).unwrap_or(libc::c_int::MAX);
        // SAFETY: `events` is valid for `cap` entries.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), self.events.as_mut_ptr(), cap, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        for ev in &self.events[..usize::try_from(n).expect("non-negative")] {
            let token = ev.u64;
            on(token);
        }
        Ok(())
    }
}

/// A `CLOCK_MONOTONIC` timerfd armed with absolute nanosecond deadlines.
#[derive(Debug)]
pub(crate) struct TimerFd {
    fd: OwnedFd,
    armed_at: Option<u64>,
}

impl TimerFd {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain system call with valid flags.
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by timerfd_create and is owned by nobody else.
        Ok(Self { fd: unsafe { OwnedFd::from_raw_fd(fd) }, armed_at: None })
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Fire at monotonic time `deadline_ns` (a deadline already past fires at once);
    /// `None` disarms. A no-op if already armed for that deadline.
    pub(crate) fn arm(&mut self, deadline_ns: Option<u64>) -> io::Result<()> {
        if self.armed_at == deadline_ns {
            return Ok(());
        }
        // A zero it_value disarms; an absolute deadline of 1 ns is long past, so it fires at once.
        let at = deadline_ns.map_or(0, |d| d.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(at / 1_000_000_000).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::try_from(at % 1_000_000_000).expect("below 1e9"),
            },
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked for.
        check(unsafe {
            libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &raw const spec, std::ptr::null_mut())
        })?;
        self.armed_at = deadline_ns;
        Ok(())
    }

    /// Consume an expiry (after epoll reported the timer readable).
    pub(crate) fn clear(&mut self) {
        let mut buf = [0u8; 8];
        let _ = read_nonblocking(self.fd.as_raw_fd(), &mut buf);
        self.armed_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_moves_forward() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a && a > 0);
    }

    #[test]
    fn timerfd_fires_through_epoll_near_its_deadline() {
        let mut t = TimerFd::new().unwrap();
        let mut ep = Epoll::new(4).unwrap();
        ep.add(t.raw(), 7).unwrap();
        let start = monotonic_ns();
        t.arm(Some(start + 2_000_000)).unwrap();
        let mut fired = false;
        while !fired {
            ep.wait(1000, |tok| fired = tok == 7).unwrap();
        }
        t.clear();
        assert!(monotonic_ns() >= start + 2_000_000);
    }

    #[test]
    fn bad_interface_names_are_refused() {
        for name in ["", "a/b", "sixteen-chars-xx"] {
            let e = open_tun_in_netns(Path::new("/nonexistent"), name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
        }
        let e = open_tun_in_netns(Path::new("/nonexistent/ns"), "tun0").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/ns"), "{e}");
    }
}
