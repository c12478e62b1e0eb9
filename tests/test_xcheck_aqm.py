"""PIE and RED against ns-3's PieQueueDisc and RedQueueDisc on the FQ-CoDel scenarios
(``validation/ns3_fq_codel``, ``compare.py --disc pie|red``; docs/validation.md, "AQM: PIE
and RED on the FQ-CoDel scenarios").

The fast tests check that the bands are well formed and that ecnsim today still agrees with
ns-3's recorded output on the open-loop ``mixed`` group (no ns-3 needed; a few seconds per
disc). ``pytest -m ns3`` runs ns-3 itself on that group (minutes: the wheel's import).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "validation" / "ns3_fq_codel"
RECORDED = HARNESS / "results" / "ns3_pie_red.json"


def _load(path: Path, name: str) -> ModuleType:
    """Import ``path`` as ``name`` with its directory first on sys.path (the harness's own
    ``scenarios`` module)."""
    sys.path.insert(0, str(path.parent))
    try:
        for stale in ("scenarios", "compare"):
            sys.modules.pop(stale, None)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(path.parent))


SCEN = _load(HARNESS / "scenarios.py", "xa_scenarios")
CMP = _load(HARNESS / "compare.py", "xa_compare")


def test_bands_cover_every_group_and_are_well_formed() -> None:
    assert set(SCEN.AQM_BANDS) == set(SCEN.GROUPS)
    for gid, bands in SCEN.AQM_BANDS.items():
        assert set(bands["sojourn_pct"]) == {"mean", "p50", "p90", "p99"}, gid
        for rel, ab in bands["sojourn_pct"].values():
            assert 0 < rel < 1
            assert 0 < ab < 0.01
        for key, band in bands.items():
            if key.endswith("_rel") or key.endswith("_abs"):
                assert 0 < band < 1, (gid, key)
    assert SCEN.DISCS == ("fq_codel", "pie", "red", "fq_pie")


def test_percentile_reads_the_histogram() -> None:
    # 10 packets in bin 0 (0-0.1 ms), 80 in bin 20, 10 in bin 99: median bin 20's midpoint.
    hist = {0: 10.0, 20: 80.0, 99: 10.0}
    assert CMP.percentile(hist, 0.5) == pytest.approx(20.5 * SCEN.SOJOURN_BIN)
    assert CMP.percentile(hist, 0.1) == pytest.approx(0.5 * SCEN.SOJOURN_BIN)
    assert CMP.percentile(hist, 0.99) == pytest.approx(99.5 * SCEN.SOJOURN_BIN)


def test_checks_fail_outside_a_band() -> None:
    """A check can fail: ns-3's recorded summary against itself passes, shifted by more than
    the band fails."""
    runs = [r for r in json.loads(RECORDED.read_text()) if r["config"]["id"] == "mixed"]
    pie = [r for r in runs if r["config"]["disc"] == "pie"]
    n = CMP.summarise("mixed", pie)
    assert all(ok for *_, ok in CMP.checks_aqm("mixed", dict(n), dict(n)))
    e = dict(n)
    e["udp0_bytes"] *= 1.10
    failed = {name for name, *_, ok in CMP.checks_aqm("mixed", e, dict(n)) if not ok}
    assert failed == {"udp0_bytes", "bytes_ratio"}


def _checks(disc: str, ns3: list[dict[str, Any]]) -> list[tuple[str, float, float, str, bool]]:
    nruns = [r for r in ns3 if r["config"]["id"] == "mixed" and r["config"]["disc"] == disc]
    e = CMP.summarise("mixed", [CMP.run_ecnsim("mixed", 1, disc)])
    return CMP.checks_aqm("mixed", e, CMP.summarise("mixed", nruns))


@pytest.mark.parametrize("disc", ["pie", "red"])
def test_mixed_agrees_with_recorded_ns3(disc: str) -> None:
    out = [c for c in _checks(disc, json.loads(RECORDED.read_text())) if not c[-1]]
    assert not out, f"out of band (metric, ecnsim, ns-3, band): {out}"


def _ns3_python() -> str | None:
    exe = os.environ.get("NS3_PYTHON")
    return exe if exe and shutil.which(exe) else None


@pytest.mark.ns3
@pytest.mark.skipif(_ns3_python() is None, reason="set NS3_PYTHON to the ns-3 venv's python")
@pytest.mark.parametrize("disc", ["pie", "red"])
def test_mixed_agrees_with_ns3(disc: str) -> None:
    job = json.dumps({"id": "mixed", "seed": 1, "disc": disc})
    p = subprocess.run(
        [str(_ns3_python()), str(HARNESS / "ns3_fq_codel.py"), job],
        capture_output=True, text=True, check=True, timeout=3600,
    )  # fmt: skip
    ns3 = [json.loads(p.stdout.strip().splitlines()[-1])]
    out = [c for c in _checks(disc, ns3) if not c[-1]]
    assert not out, f"out of band (metric, ecnsim, ns-3, band): {out}"
