#!/usr/bin/env python3
"""Where the cycles go, next to where the instructions go, per source line of ecnsim-core.

Cycles are CPU-clock samples (`perf record -e cpu-clock`, no hardware counters needed),
each charged to the instruction before the one it landed on (a sample lands on the
instruction after the one that waits); instructions are callgrind's, the difference of
two run lengths so that start-up cancels. Both are mapped to the innermost inlined frame
in `crates/ecnsim-core/src` by `addr2line -i`. docs/performance.md ("Where the cycles go
per hop") has the commands and what this printed.

    export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
    cargo build --release -p ecnsim-core --example digest
    D=target/release/examples/digest
    perf record -e cpu-clock -F 20000 -o cycles.data -- \
        sh -c "for i in 1 2 3 4 5 6; do $D F-500.json 500; done"
    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file=short.out $D F.json 20
    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file=long.out $D F.json 40
    python bench/cycles_per_line.py $D cycles.data short.out long.out HOPS

HOPS is the second run's packet-hops less the first's (the `digest` example prints them).
Needs `perf`, `objdump` and `addr2line` on the PATH; Linux, x86-64.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import subprocess

CORE = "ecnsim-core/src/"


def instruction_addresses(binary: str) -> list[int]:
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True
    )
    return sorted(int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\s", out.stdout, re.M))


def callgrind_costs(path: str, name: str) -> collections.Counter[int]:
    """Exclusive instruction counts per address of the object named `name`."""
    costs: collections.Counter[int] = collections.Counter()
    ob, after_calls = "", False
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("calls="):
                after_calls = True  # the next cost line is the call's inclusive cost
            elif line.startswith("0x"):
                if not after_calls and ob.endswith(name):
                    addr, _, cost = line.split()
                    costs[int(addr, 16)] += int(cost)
                after_calls = False
    return costs


def samples(perf_data: str, binary: str, name: str, step_back: bool) -> collections.Counter[int]:
    """CPU-clock samples per address of `binary`, in its own address space."""
    ins = instruction_addresses(binary) if step_back else []
    # The executable segment's file offset and address, to undo the load address.
    segs = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    text = next(
        ln.split() for ln in segs.splitlines() if ln.strip().startswith("LOAD") and " R E " in ln
    )
    seg_off, seg_addr = int(text[1], 16), int(text[2], 16)
    maps: dict[int, tuple[int, int]] = {}
    counts: collections.Counter[int] = collections.Counter()
    out = subprocess.run(
        ["perf", "script", "-i", perf_data, "--show-mmap-events", "-F", "pid,ip,dso"],
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        if "PERF_RECORD_MMAP" in line:
            m = re.search(
                r"(\d+)/\d+: \[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ 0x([0-9a-f]+) .*r-xp (\S+)", line
            )
            if m and m.group(4).endswith(name):
                maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16))
            continue
        parts = line.split()
        if len(parts) < 3 or name not in parts[2] or int(parts[0]) not in maps:
            continue
        start, off = maps[int(parts[0])]
        addr = int(parts[1], 16) - start + off + (seg_addr - seg_off)
        if step_back:
            i = bisect.bisect_left(ins, addr)
            addr = ins[i - 1] if i > 0 else addr
        counts[addr] += 1
    return counts


def source_lines(binary: str, addrs: list[int]) -> dict[int, tuple[str, str]]:
    """(file:line, function) of the innermost ecnsim-core frame at each address."""
    out = subprocess.run(
        ["addr2line", "-a", "-i", "-f", "-C", "-e", binary],
        input="\n".join(hex(a) for a in addrs),
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    frames: dict[int, list[tuple[str, str]]] = {}
    cur, i = 0, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            frames[cur] = []
            i += 1
            continue
        frames[cur].append((out[i], out[i + 1]))
        i += 2
    where = {}
    for a, fr in frames.items():
        where[a] = ("(std)", "(std)")
        for fn, loc in fr:
            if CORE in loc:
                fn = re.sub(r"<[^<>]*>", "", re.sub(r"::h[0-9a-f]{16}$", "", fn))
                where[a] = (loc.split(CORE)[1].split(" ")[0], fn.split("::")[-1])
                break
    return where


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("binary")
    ap.add_argument("perf_data")
    ap.add_argument("callgrind_short")
    ap.add_argument("callgrind_long")
    ap.add_argument("hops", type=int, help="packet-hops between the two callgrind runs")
    ap.add_argument("--lines", type=int, default=40, help="source lines to print")
    ap.add_argument("--at-sample", action="store_true", help="charge a sample where it landed")
    args = ap.parse_args()
    name = args.binary.split("/")[-1]
    short, long_ = (
        callgrind_costs(args.callgrind_short, name),
        callgrind_costs(args.callgrind_long, name),
    )
    instr = collections.Counter({a: c - short.get(a, 0) for a, c in long_.items()})
    cyc = samples(args.perf_data, args.binary, name, not args.at_sample)
    where = source_lines(args.binary, sorted(set(instr) | set(cyc)))
    n_s, n_i = max(1, sum(cyc.values())), max(1, sum(instr.values()))
    by_file: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    by_line: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for a, (loc, fn) in where.items():
        for key, table in ((loc.split(":")[0], by_file), ((loc, fn), by_line)):
            table[key][0] += cyc.get(a, 0)  # type: ignore[index]
            table[key][1] += instr.get(a, 0)  # type: ignore[index]
    print(f"{n_s} samples; {n_i / args.hops:.1f} instructions per hop")
    print(f"\n{'file':40s} {'cycles %':>8s} {'instr %':>8s} {'instr/hop':>9s}")
    for f, (s, n) in sorted(by_file.items(), key=lambda kv: -kv[1][0]):
        if s / n_s >= 0.003 or n / n_i >= 0.003:
            print(f"{f:40s} {100 * s / n_s:8.2f} {100 * n / n_i:8.2f} {n / args.hops:9.1f}")
    print(f"\n{'line':34s} {'function':28s} {'cycles %':>8s} {'instr %':>8s} {'instr/hop':>9s}")
    for (loc, fn), (s, n) in sorted(by_line.items(), key=lambda kv: -kv[1][0])[: args.lines]:
        shares = f"{100 * s / n_s:8.2f} {100 * n / n_i:8.2f}"
        print(f"{loc:34s} {fn[:28]:28s} {shares} {n / args.hops:9.1f}")


if __name__ == "__main__":
    main()
