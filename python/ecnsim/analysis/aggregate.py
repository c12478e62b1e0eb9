"""Per-run metrics and their aggregation across seeds, with Student-t confidence intervals.

:func:`run_metrics` computes one number per run and metric from the runs'
tables in a :class:`~ecnsim.sweep.store.Store`; :func:`aggregate` groups runs by
their parameters and gives, per group and metric, the mean, the sample
standard deviation and a confidence interval for the mean,
``mean ± t(1 - (1 - confidence) / 2, n - 1) * std / sqrt(n)``. The result is a
tidy (long) DataFrame, one row per parameter point and metric, ready to plot.

Built-in metrics (:data:`METRICS`), each over the run's whole ``[warmup, end]``
interval:

============================  ===========================================================
``goodput_bps``               sum of the flows' goodput
``throughput_bps``            sum of the flows' throughput (retransmissions included)
``jain``                      Jain's fairness index of the flows' goodput
``drops``                     packets dropped by all queues
``marks``                     packets CE-marked by all queues
``retransmits``               data segments retransmitted by all flows
``utilization``               utilization of the busiest queue (the bottleneck)
``queue_avg_packets``         time-average occupancy of the busiest queue
``completion_time_s``         mean completion time of the flows that completed
============================  ===========================================================

Any other metric is a function of a run's :class:`~ecnsim.Results` returning
a float: ``run_metrics(store, runs, {"fct99": lambda r: ...})``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ecnsim.analysis.stats import interval, student_t_ppf

if TYPE_CHECKING:
    import pandas as pd

    from ecnsim.results import Results
    from ecnsim.sweep.store import Store

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "Metric",
    "MetricSpec",
    "aggregate",
    "resolve_metrics",
    "run_metrics",
    "summary_metrics",
    "summary_table",
    "t_quantile",
]


# ---------------------------------------------------------------------------
# Student's t quantile (no scipy)
# ---------------------------------------------------------------------------


#: The ``p`` quantile of Student's t with ``df`` degrees of freedom (one
#: implementation, in :mod:`ecnsim.analysis`).
t_quantile = student_t_ppf


# ---------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------

Frames = Mapping[str, "pd.DataFrame"]


@dataclass(frozen=True)
class Metric:
    """A per-run metric: one number per run key.

    ``tables`` are the tables it reads; ``compute`` takes them (every run's
    rows stacked, with a ``key`` column) and returns a Series indexed by key.
    """

    name: str
    description: str
    tables: tuple[str, ...]
    compute: Callable[[Frames], pd.Series]


def _sum(table: str, column: str) -> Callable[[Frames], pd.Series]:
    def f(frames: Frames) -> pd.Series:
        s: pd.Series = frames[table].groupby("key")[column].sum().astype("float64")
        return s

    return f


def _jain(frames: Frames) -> pd.Series:
    df = frames["flows"]
    x = df["goodput_bps"].astype("float64")
    g = x.groupby(df["key"])
    total, squares, n = g.sum(), (x * x).groupby(df["key"]).sum(), g.count()
    out: pd.Series = ((total * total) / (n * squares)).where(squares > 0)
    return out


def _busiest(column: str) -> Callable[[Frames], pd.Series]:
    def f(frames: Frames) -> pd.Series:
        q = frames["queues"]
        idx = q.groupby("key")["utilization"].idxmax()
        s: pd.Series = q.loc[idx.to_numpy(), ["key", column]].set_index("key")[column]
        return s.astype("float64")

    return f


def _mean_completion(frames: Frames) -> pd.Series:
    s: pd.Series = frames["flows"].groupby("key")["completion_time_s"].mean()
    return s.astype("float64")


#: The built-in metrics by name.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in [
        Metric(
            "goodput_bps", "sum of the flows' goodput", ("flows",), _sum("flows", "goodput_bps")
        ),
        Metric(
            "throughput_bps",
            "sum of the flows' throughput",
            ("flows",),
            _sum("flows", "throughput_bps"),
        ),
        Metric("jain", "Jain's fairness index of the flows' goodput", ("flows",), _jain),
        Metric("drops", "packets dropped by all queues", ("queues",), _sum("queues", "drops")),
        Metric("marks", "packets CE-marked by all queues", ("queues",), _sum("queues", "marks")),
        Metric(
            "retransmits",
            "data segments retransmitted",
            ("flows",),
            _sum("flows", "packets_retransmitted"),
        ),
        Metric(
            "utilization", "utilization of the busiest queue", ("queues",), _busiest("utilization")
        ),
        Metric(
            "queue_avg_packets",
            "time-average occupancy of the busiest queue",
            ("queues",),
            _busiest("avg_packets"),
        ),
        Metric(
            "completion_time_s",
            "mean completion time of the completed flows",
            ("flows",),
            _mean_completion,
        ),
    ]
}

#: Version of :func:`summary_metrics`' definitions, stored with the values: a
#: store's values of another version are recomputed from the run's tables.
SUMMARY_VERSION = 1


def summary_metrics(results: Results) -> dict[str, float]:
    """Every built-in metric (:data:`METRICS`) of one run, computed from its tables.

    A sweep's worker calls it when a run finishes and the store keeps the
    values in the run's manifest and in the catalog (``run_metrics``), so
    :func:`run_metrics` and :func:`aggregate` need not read the runs' tables
    again. A metric that has no value (no flow completed) is NaN.
    """
    frames: dict[str, pd.DataFrame] = {}
    for name in ("flows", "queues"):
        if name in results.tables:
            df = results.to_pandas(name)
            df.insert(0, "key", "run")
            frames[name] = df
    out: dict[str, float] = {}
    for name, m in METRICS.items():
        value = math.nan
        if all(t in frames and len(frames[t]) for t in m.tables):
            series = m.compute(frames)
            if "run" in series.index:
                value = float(series.loc["run"])
        out[name] = value
    return out


#: What :func:`run_metrics` computes when not told.
DEFAULT_METRICS = ("goodput_bps", "jain", "drops", "marks", "utilization")

#: Metric names (built-in), and/or ``{name: function(Results) -> float}``.
MetricSpec = Sequence[str] | Mapping[str, "str | Callable[[Results], float]"]


def resolve_metrics(
    metrics: MetricSpec | None,
) -> dict[str, Metric | Callable[[Results], float]]:
    """``{name: Metric or function}`` for a metric spec (``None``: :data:`DEFAULT_METRICS`)."""
    if metrics is None:
        metrics = DEFAULT_METRICS
    if isinstance(metrics, str):
        metrics = [metrics]
    items: list[tuple[str, Any]] = (
        list(metrics.items()) if isinstance(metrics, Mapping) else [(m, m) for m in metrics]
    )
    out: dict[str, Metric | Callable[[Results], float]] = {}
    for name, m in items:
        if isinstance(m, str):
            if m not in METRICS:
                raise ValueError(f"unknown metric {m!r}; built-in metrics: {', '.join(METRICS)}")
            out[name] = METRICS[m]
        elif callable(m):
            out[name] = m
        else:
            raise TypeError(f"metric {name!r}: expected a built-in name or a function")
    return out


def run_metrics(
    store: Store, runs: pd.DataFrame, metrics: MetricSpec | None = None
) -> pd.DataFrame:
    """``runs`` (from :meth:`Store.runs`) with one column per metric added, one row per run.

    Built-in metrics read the stacked tables of all runs at once; a function
    metric is called with each run's :class:`~ecnsim.Results`.
    """
    resolved = resolve_metrics(metrics)
    out = runs.copy()
    keys = [str(k) for k in runs["key"].tolist()]
    # Built-in metrics were computed once, when each run finished (the catalog's
    # run_metrics); only runs stored without them have their tables read.
    builtin = {m.name for m in resolved.values() if isinstance(m, Metric)}
    stored = store.summary_metrics(keys, version=SUMMARY_VERSION) if builtin else None
    stale = [k for k in dict.fromkeys(keys) if stored is not None and k not in stored.index]
    needed = sorted({t for m in resolved.values() if isinstance(m, Metric) for t in m.tables})
    frames = {t: store.concat_table(stale, t) for t in needed} if stale else {}
    loaded: dict[str, Results] = {}
    for name, m in resolved.items():
        if isinstance(m, Metric):
            computed = None
            if frames and all(len(frames[t]) for t in m.tables):
                computed = m.compute(frames)
            values = np.full(len(keys), np.nan)
            if stored is not None and m.name in stored.columns:
                values = stored[m.name].reindex(keys).to_numpy(dtype="float64")
            if computed is not None:
                fresh = computed.reindex(keys).to_numpy(dtype="float64")
                values = np.where(np.isin(keys, stale), fresh, values)
        else:
            vals = []
            for k in keys:
                if k not in loaded:
                    loaded[k] = store.results(k)
                vals.append(float(m(loaded[k])))
            values = np.asarray(vals, dtype="float64")
        out[name] = values
    result: pd.DataFrame = out
    return result


# ---------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------


def aggregate(
    per_run: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    *,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean, standard deviation and confidence interval of each metric per group of runs.

    ``per_run`` has one row per run (e.g. from :func:`run_metrics`), ``by``
    the columns that identify a point (the swept parameters), ``metrics`` the
    value columns. Returns one row per group and metric with the ``by``
    columns, ``metric``, ``n`` (runs with a value; NaN values are left out),
    ``mean``, ``std`` (sample, ``ddof=1``), ``sem`` (``std / sqrt(n)``),
    ``ci`` (the half-width, the column :func:`~ecnsim.output.plot.plot_sweep`
    draws), ``ci_low``, ``ci_high`` and ``confidence``, all from
    :func:`~ecnsim.analysis.stats.interval`. With ``n < 2`` the spread and
    interval are NaN. A run (``key``) listed twice in a group counts once:
    identical runs are not independent repetitions.
    """
    import pandas as pd

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    by = list(by)
    missing = [c for c in [*by, *metrics] if c not in per_run.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r}; columns: {', '.join(map(str, per_run.columns))}")
    if "key" in per_run.columns:
        per_run = per_run.drop_duplicates(subset=[*by, "key"])
    groups: list[tuple[tuple[Any, ...], pd.DataFrame]]
    if by:
        groups = [
            (k if isinstance(k, tuple) else (k,), g)
            for k, g in per_run.groupby(by, dropna=False, sort=True)
        ]
    else:
        groups = [((), per_run)]
    rows = []
    for key, g in groups:
        for m in metrics:
            r = interval(g[m].to_numpy(dtype="float64", na_value=np.nan), confidence)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": m,
                    "n": int(r["n"]),
                    "mean": r["mean"],
                    "std": r["std"],
                    "sem": r["sem"],
                    "ci": r["ci"],
                    "ci_low": r["mean"] - r["ci"],
                    "ci_high": r["mean"] + r["ci"],
                    "confidence": confidence,
                }
            )
    columns = [*by, "metric", "n", "mean", "std", "sem", "ci", "ci_low", "ci_high", "confidence"]
    df: pd.DataFrame = pd.DataFrame(rows, columns=columns)
    return df


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.4g}"


def summary_table(agg: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """A wide, printable view of :func:`aggregate`'s output: ``mean ± half-width`` per metric.

    Metrics in bit/s (``*_bps``) are shown in Mbit/s.
    """
    import pandas as pd

    by = list(by)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    metrics: list[str] = []
    for row in agg.to_dict("records"):
        key = tuple(row[c] for c in by)
        entry = out.setdefault(key, {**{c: row[c] for c in by}, "n": row["n"]})
        entry["n"] = max(entry["n"], row["n"])
        name, scale = str(row["metric"]), 1.0
        if name.endswith("_bps"):
            name, scale = name[: -len("_bps")] + "_Mbps", 1e-6
        if name not in metrics:
            metrics.append(name)
        mean = row["mean"] * scale
        half = (row["ci_high"] - row["mean"]) * scale
        entry[name] = _fmt(mean) if math.isnan(half) else f"{_fmt(mean)} ± {_fmt(half)}"
    df: pd.DataFrame = pd.DataFrame(list(out.values()), columns=[*by, "n", *metrics])
    return df
