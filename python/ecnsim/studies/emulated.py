"""Studies with real Linux hosts (``ecnsim study run NAME --emulate``).

What the emulated side of a study adds to the simulated one
(``docs/emulation.md``, "Studies"):

- :func:`emulation_mapping`: how every point's TCP parameters become Linux
  settings (applied, approximate, not mapped), and which points cannot be
  emulated at all, by name; ``ecnsim study show NAME --emulate`` prints it
  before anything runs, the report repeats it;
- :func:`emulated_seconds`: the real time the emulated runs take (they run
  one after another: real time cannot be shared without distorting it);
- :func:`compare_tables`: one table per metric of the study's derived
  ``metrics``, simulated and emulated side by side with their difference;
- :func:`driver_rows`: each emulated run's own measurements (how late the
  driver wrote departures, the machine's load), to read beside any figure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ecnsim.scenario.paths import set_path
from ecnsim.scenario.spec import Scenario
from ecnsim.studies._base import Study, StudyData, StudyError, StudyTable

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SETUP_S",
    "compare_tables",
    "driver_rows",
    "emulated_seconds",
    "emulation_mapping",
    "fell_behind",
    "point_scenarios",
]

#: Real seconds an emulated run takes besides its scenario's duration (namespaces, traffic
#: programs' start, teardown), measured on the project's machine at load 2-10.
SETUP_S = 2.0

#: The columns of :func:`emulation_mapping`'s table.
MAPPING_COLUMNS = ("host", "parameter", "scenario", "linux", "status", "note", "points")


def point_scenarios(
    study: Study, params: Any, points: Sequence[Mapping[str, Any]] | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(point, scenario dict)`` of every point (``--set`` scenario paths applied).

    Where a point needs what a pilot stage chooses and it is not chosen yet,
    the study's :meth:`~Study.placeholder_params` stand in for it (the
    mapping onto Linux does not depend on it).
    """
    pts = list(points) if points is not None else study.grid(params)
    try:
        built = [study.scenario(params, p) for p in pts]
    except StudyError:
        stand_in = study.placeholder_params(params)
        built = [study.scenario(stand_in, p) for p in pts]
    out = []
    for point, sc in zip(pts, built, strict=True):
        data = sc.to_dict() if isinstance(sc, Scenario) else dict(sc)
        for path, value in params.scenario_set:
            set_path(data, path, value)
        out.append((dict(point), data))
    return out


def _label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())


def emulation_mapping(
    study: Study, params: Any, points: Sequence[Mapping[str, Any]] | None = None
) -> tuple[pd.DataFrame, list[tuple[dict[str, Any], str]]]:
    """How the study's points run with real Linux hosts: ``(mapping, refused)``.

    ``mapping`` has one row per distinct ``(host, parameter, scenario value,
    Linux setting, status, note)`` over every point (``points``: how many
    points share it), as ``ecnsim emulate`` writes its ``tcp_mapping``
    table; ``refused`` lists ``(point, why)`` of the points the emulation
    cannot run, naming the scenario field.
    """
    import pandas as pd

    from ecnsim import _core
    from ecnsim.emulation.plan import PlanError, make_plan
    from ecnsim.emulation.runner import available_cc

    cc = available_cc()
    seen: dict[tuple[str, ...], int] = {}
    refused: list[tuple[dict[str, Any], str]] = []
    for point, scenario in point_scenarios(study, params, points):
        sim = _core.PySimulation.from_json(json.dumps(scenario), None)
        resolved = json.loads(sim.results()["meta"]["resolved_spec"])
        del sim
        try:
            plan = make_plan(resolved, pid=0, available_cc=cc)
        except PlanError as e:
            refused.append((point, str(e)))
            continue
        for m in plan.mapping:
            row = (m.host, m.parameter, m.value, m.linux, m.status, m.note)
            seen[row] = seen.get(row, 0) + 1
    rows = [(*k, n) for k, n in seen.items()]
    order = {"applied": 0, "approximate": 1, "not mapped": 2}
    rows.sort(key=lambda r: (order.get(str(r[4]), 3), str(r[1]), str(r[0])))
    return pd.DataFrame(rows, columns=list(MAPPING_COLUMNS)), refused


def emulated_seconds(
    study: Study, params: Any, points: Sequence[Mapping[str, Any]] | None = None
) -> float:
    """Real seconds the emulated runs of ``points`` (default: every point) take one after
    another (pilots not counted: they stay simulated): each point's scenario duration plus
    :data:`SETUP_S`, times seeds."""
    from ecnsim.emulation.plan import parse_seconds

    total = 0.0
    for _point, sc in point_scenarios(study, params, points):
        duration = parse_seconds(sc["simulation"]["duration"], "simulation.duration")
        total += duration + SETUP_S
    return total * int(params.seeds)


def compare_tables(sim: StudyData, emu: StudyData, name: str = "metrics") -> dict[str, StudyTable]:
    """One table per numeric column of derived table ``name``: per point, the mean over
    seeds of the simulated and of the emulated runs (with the 95% CI half-width) and
    ``emulated - simulated``. Points where neither has a value are left out."""
    import pandas as pd

    from ecnsim.analysis.aggregate import aggregate

    s, e = sim.frame(name), emu.frame(name)
    if s.empty and e.empty:
        return {}
    axes = [a for a in sim.axes if a in s.columns or a in e.columns]
    skip = {*axes, "seed", "key"}
    metrics = [
        c
        for c in dict.fromkeys([*s.columns, *e.columns])
        if c not in skip
        and pd.api.types.is_numeric_dtype(s[c] if c in s.columns else e[c])
        and not pd.api.types.is_bool_dtype(s[c] if c in s.columns else e[c])
    ]
    # A point's axes may be missing (an axis of another experiment): one label for it.
    order = sim.order()

    def agg(df: pd.DataFrame, metric: str) -> pd.DataFrame:
        if df.empty or metric not in df.columns:
            empty: pd.DataFrame = pd.DataFrame(columns=[*axes, "mean", "ci"])
            return empty
        part = df.copy()
        for a in axes:
            if a not in part.columns:
                part[a] = "-"
            part[a] = part[a].astype(object).where(part[a].notna(), "-")
        out = aggregate(part, by=axes, metrics=[metric])
        out["ci"] = out["ci_high"] - out["mean"]
        cols: pd.DataFrame = out[[*axes, "mean", "ci"]]
        return cols

    tables: dict[str, StudyTable] = {}
    for metric in metrics:
        a, b = agg(s, metric), agg(e, metric)
        merged = a.merge(b, on=axes, how="outer", suffixes=("_sim", "_emu"))
        merged = merged[merged["mean_sim"].notna() | merged["mean_emu"].notna()]
        if merged.empty:
            continue

        def rank(row: pd.Series) -> tuple[Any, ...]:
            out = []
            for ax in axes:
                values = order.get(ax, [])
                v = row[ax]
                out.append(values.index(v) if v in values else len(values))
            return tuple(out)

        merged = merged.assign(_rank=merged.apply(rank, axis=1)).sort_values("_rank")
        shown = [ax for ax in axes if (merged[ax] != "-").any()] or axes[:1]
        index = (
            pd.MultiIndex.from_frame(merged[shown])
            if len(shown) > 1
            else pd.Index(merged[shown[0]], name=shown[0])
        )
        cols = ["simulated", "emulated", "emulated - simulated"]
        mean = pd.DataFrame(
            {
                "simulated": merged["mean_sim"].to_numpy(dtype=float),
                "emulated": merged["mean_emu"].to_numpy(dtype=float),
                "emulated - simulated": (merged["mean_emu"] - merged["mean_sim"]).to_numpy(
                    dtype=float
                ),
            },
            index=index,
            columns=cols,
        )
        ci = pd.DataFrame(
            {
                "simulated": merged["ci_sim"].to_numpy(dtype=float),
                "emulated": merged["ci_emu"].to_numpy(dtype=float),
                "emulated - simulated": [math.nan] * len(merged),
            },
            index=index,
            columns=cols,
        )
        tables[f"compare_{metric}"] = StudyTable(
            f"{metric}: simulated and emulated",
            mean,
            ci,
            note="Mean over seeds (± 95% CI half-width) of the simulated runs and of the "
            "emulated runs (real Linux hosts) of each point, and their difference.",
        )
    return tables


def fell_behind(store: Any, tasks: Sequence[Any]) -> int:
    """How many of the stored emulated runs of ``tasks`` had late departures."""
    n = 0
    for t in tasks:
        try:
            e = store.read_table(t.key, "emulation")
        except (KeyError, OSError):
            continue
        if not e.empty and int(e["late_departures"].iloc[0]) > 0:
            n += 1
    return n


def driver_rows(data: StudyData) -> list[dict[str, Any]]:
    """Each stored emulated run's driver measurements: departure error, late departures,
    the machine's load at its start and end (``/proc/loadavg``)."""
    rows = []
    for point, seed, key, _tag in data.runs():
        try:
            t = data.store.read_table(key, "emulation")
        except (KeyError, OSError):
            continue
        if t.empty:
            continue
        r = t.iloc[0]
        meta = (data.store.manifest(key) or {}).get("meta", {})
        departures = int(r.get("departures", 0))
        late = int(r.get("late_departures", 0))
        rows.append(
            {
                "point": _label(data.plan.points[point]),
                "seed": seed,
                "departures": departures,
                "late (> threshold)": f"{late} ({100 * late / max(1, departures):.2f} %)",
                "error p50 / p99 / max (us)": " / ".join(
                    f"{float(r.get(c, math.nan)) / 1e3:.0f}"
                    for c in (
                        "departure_error_p50_ns",
                        "departure_error_p99_ns",
                        "departure_error_max_ns",
                    )
                ),
                "fell behind": "yes" if late else "no",
                "load at start": str(meta.get("loadavg_start", "")).split(" ")[0],
                "load at end": str(meta.get("loadavg_end", "")).split(" ")[0],
                "kernel": meta.get("kernel", ""),
            }
        )
    return rows
