#!/usr/bin/env python3
"""Print every attribute default and global value of the ns-3 PyPI wheel, sorted.

Run with the Python of the ns-3 virtual environment (never ecnsim's)::

    "$NS3_PYTHON" bench/ns3/ns3_defaults.py > /tmp/wheel.txt

``cpp/ns3_defaults.cc`` prints the same lines for a C++ build of ns-3, so that
the defaults of two versions can be diffed (``bench/ns3/README.md`` lists the
differences the scenarios depend on, and the scenarios set them explicitly).
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            from ns import ns
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    lines = set()
    for i in range(ns.TypeId.GetRegisteredN()):
        tid = ns.TypeId.GetRegistered(i)
        for j in range(tid.GetAttributeN()):
            info = tid.GetAttribute(j)
            value = info.initialValue.SerializeToString(info.checker)
            lines.add(f"{tid.GetName()}::{info.name} = {value}")
    it = ns.GlobalValue.Begin()
    while it != ns.GlobalValue.End():
        gv = it.__deref__()
        v = ns.StringValue()
        gv.GetValue(v)
        lines.add(f"global::{gv.GetName()} = {v.Get()}")
        it.__preinc__()
    sys.stdout.write("".join(line + "\n" for line in sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
