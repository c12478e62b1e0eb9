"""Cross-check with ns-2.35: its ``RandomVariable/Empirical`` drawing from Mah's reply-size
table draws what ecnsim's shipped ``mah97_reply`` table draws.

ns-2 loads the table in its own three-column form (value, count, cumulative
fraction, as in ns-2.35 ``tcl/http/data/HttpReplyLength.cdf``) with its
default ``interpolation_ 0``. Tolerance band, fixed before looking at the
results: every ns-2 draw is one of the table's values (no interpolation),
and each sampled quantile q of 20 000 draws lies between the table's
(q - e)- and (q + e)-quantiles, e = 4 standard errors of an empirical CDF
(sqrt(q (1 - q) / n)).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ecnsim import Distribution
from ecnsim.scenario.distributions import shipped_table

NS = shutil.which("ns")
N = 20_000


@pytest.mark.skipif(NS is None, reason="ns-2 (`ns`) is not installed")
def test_ns2_empirical_draws_match_the_shipped_reply_table(tmp_path: Path) -> None:
    t = shipped_table("mah97_reply")
    cum = np.cumsum(t["count"].to_numpy()) / t["count"].sum()
    cdf = tmp_path / "reply.cdf"
    cdf.write_text(
        "".join(
            f"{int(v)} {int(n)} {c:.12g}\n"
            for v, n, c in zip(t["value"], t["count"], cum, strict=True)
        )
    )
    out = tmp_path / "draws.txt"
    script = tmp_path / "draw.tcl"
    script.write_text(
        "set rng [new RNG]\n$rng seed 7\n"
        "set rv [new RandomVariable/Empirical]\n$rv use-rng $rng\n"
        f"$rv loadCDF {cdf}\n"
        f"set f [open {out} w]\n"
        f"for {{set i 0}} {{$i < {N}}} {{incr i}} {{ puts $f [$rv value] }}\n"
        "close $f\nexit 0\n"
    )
    assert NS is not None
    subprocess.run([NS, str(script)], check=True, capture_output=True, timeout=120)
    ns2 = np.loadtxt(out)
    assert ns2.size == N
    values = set(t["value"].tolist())
    assert set(ns2.tolist()) <= values, "ns-2 drew a value not in the table"
    d = Distribution.shipped("mah97_reply")
    ours = d.sample(N, seed=7)
    assert set(ours.tolist()) <= values
    for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        e = 4 * np.sqrt(q * (1 - q) / N)
        lo, hi = d.quantile(q - e), d.quantile(q + e)
        for name, x in (("ns-2", ns2), ("ecnsim", ours)):
            got = float(np.quantile(x, q, method="inverted_cdf"))
            assert lo <= got <= hi, f"{name} q={q}: {got} outside [{lo}, {hi}]"
