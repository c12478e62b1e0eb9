"""Results of a run: named column tables plus metadata.

The core hands over each numeric column as one block of little-endian
bytes, which becomes a (read-only) numpy array without a Python object per
row; name columns are lists of ``str``. Tables and columns are whatever the
core produced (see ``docs/results.md``).

What pandas users get, whatever the table:

- counters are ``int64`` (the core's ``u64`` words reinterpreted without a
  copy; a value above ``2**63 - 1`` is refused), so ``arrivals - departures``
  is a small negative number, never ``18446744073709551535``;
- ``flow_series`` and ``queue_series`` carry the ``flow`` / ``queue`` name
  beside the id;
- ``meta`` holds real types: ``seed`` an ``int``, ``*_s`` durations
  ``float``, ``finished`` a ``bool``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Column", "Results", "Table"]

#: One column's values: a numpy array (int64 or float64) or a list of names.
Column = np.ndarray | list[str]

# The core's u64 counters are read as int64: the same bytes, no copy.
_NUMERIC_DTYPES = {"<u8": np.dtype("<i8"), "<f8": np.dtype("<f8")}

#: Tables whose rows name a flow or a queue by id: (id column, name column, table of names).
_SERIES_NAMES = {
    "flow_series": ("flow_id", "flow", "flows"),
    "queue_series": ("queue_id", "queue", "queues"),
}


def _signed(name: str, values: np.ndarray) -> np.ndarray:
    """``values`` as int64 if they are unsigned integers (refusing values above 2**63 - 1)."""
    if values.dtype.kind != "u":
        return values
    if values.size and int(values.max()) > np.iinfo(np.int64).max:
        raise OverflowError(f"column {name!r}: a counter exceeds the int64 range")
    return values.astype(np.int64)


def _decode_column(name: str, encoded: Any) -> Column:
    dtype, payload = encoded
    if dtype == "str":
        return list(payload)
    try:
        np_dtype = _NUMERIC_DTYPES[dtype]
    except KeyError:
        raise ValueError(f"column {name!r}: unknown dtype {dtype!r} from the core") from None
    values = np.frombuffer(payload, dtype=np_dtype)
    if dtype == "<u8" and values.size and int(values.min()) < 0:
        raise OverflowError(f"column {name!r}: a counter exceeds the int64 range")
    return values


def typed_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Run metadata with real types: ``seed`` int, ``*_s`` float, ``finished`` bool.

    Accepts the core's strings and values that are typed already (from
    ``meta.json`` or a store's manifest); anything else stays as it is.
    """
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, str):
            if key == "seed":
                value = int(value)
            elif key == "finished":
                value = value.strip().lower() != "false"
            elif key.endswith("_s") and value.strip():
                with contextlib.suppress(ValueError):
                    value = float(value)
        out[key] = value
    return out


class Table:
    """A named table of equally long columns, in the core's column order."""

    def __init__(self, name: str, columns: Mapping[str, Column]) -> None:
        self.name = name
        self.columns: dict[str, Column] = {
            c: _signed(c, v) if isinstance(v, np.ndarray) else v for c, v in columns.items()
        }
        lengths = {len(c) for c in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"table {name!r}: columns have different lengths {sorted(lengths)}")

    @classmethod
    def _from_core(cls, name: str, encoded: Mapping[str, Any]) -> Table:
        return cls(name, {col: _decode_column(col, enc) for col, enc in encoded.items()})

    @property
    def column_names(self) -> list[str]:
        """Column names in order."""
        return list(self.columns)

    @property
    def num_rows(self) -> int:
        """Number of rows (0 for a table without columns)."""
        return len(next(iter(self.columns.values()), []))

    def __len__(self) -> int:
        return self.num_rows

    def __contains__(self, column: object) -> bool:
        return column in self.columns

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __getitem__(self, column: str) -> Column:
        try:
            return self.columns[column]
        except KeyError:
            raise KeyError(
                f"table {self.name!r} has no column {column!r}; columns: {', '.join(self.columns)}"
            ) from None

    def to_numpy(self) -> dict[str, np.ndarray]:
        """Every column as a numpy array (names as an object array of ``str``)."""
        out: dict[str, np.ndarray] = {}
        for col, values in self.columns.items():
            if isinstance(values, np.ndarray):
                out[col] = values
            else:
                arr = np.empty(len(values), dtype=object)
                arr[:] = values
                out[col] = arr
        return out

    def to_pandas(self) -> pd.DataFrame:
        """The table as a pandas DataFrame (numeric columns are copied)."""
        import pandas as pd

        # Name columns get pandas' string dtype even when empty (an empty list
        # would otherwise become float64), so a table reads back from Parquet
        # with the same dtypes.
        df: pd.DataFrame = pd.DataFrame(
            {
                c: (v.copy() if isinstance(v, np.ndarray) else pd.array(v, dtype="str"))
                for c, v in self.columns.items()
            },
            columns=list(self.columns),
        )
        return df

    def to_arrow(self) -> pa.Table:
        """The table as a pyarrow Table (int64, float64 and string columns)."""
        import pyarrow as pa

        arrays = [
            pa.array(v) if isinstance(v, np.ndarray) else pa.array(v, type=pa.string())
            for v in self.columns.values()
        ]
        return pa.table(arrays, names=list(self.columns))

    def __repr__(self) -> str:
        return f"Table({self.name!r}, rows={self.num_rows}, columns={self.column_names})"


class Results:
    """Everything a run produced: ``tables`` by name, typed ``meta``, ``digest``.

    Every table is a DataFrame under its own name (``results.flows``,
    ``results.queues``, ``results.flow_series``, ``results.queue_series``,
    ``results.records``, and any other table the core adds), built the same
    way by :meth:`Table.to_pandas`; ``results.table(name)`` gives the raw
    columns. ``meta["finished"]`` is ``False`` for the partial results of a
    run that was stopped before its end.
    """

    def __init__(
        self,
        tables: Mapping[str, Table],
        meta: Mapping[str, Any],
        digest: int,
        spec_json: str | None = None,
    ) -> None:
        self.tables: dict[str, Table] = dict(tables)
        self.meta: dict[str, Any] = typed_meta(meta)
        self.digest = digest
        self._spec_json = spec_json
        self._name_series()

    def _name_series(self) -> None:
        """Add the ``flow``/``queue`` name column beside the id in the series tables."""
        for series, (id_col, name_col, source) in _SERIES_NAMES.items():
            t = self.tables.get(series)
            names_table = self.tables.get(source)
            if t is None or names_table is None or name_col in t or id_col not in t:
                continue
            if name_col not in names_table or id_col not in names_table:
                continue
            names = names_table[name_col]
            by_id = dict(zip(np.asarray(names_table[id_col]).tolist(), names, strict=True))
            ids = np.asarray(t[id_col])
            try:
                column = [by_id[i] for i in ids.tolist()]
            except KeyError as e:
                raise ValueError(
                    f"table {series!r}: {id_col} {e.args[0]} not in {source!r}"
                ) from None
            cols = list(t.columns.items())
            at = [c for c, _ in cols].index(id_col) + 1
            t.columns = dict([*cols[:at], (name_col, column), *cols[at:]])

    @classmethod
    def _from_core(cls, raw: Mapping[str, Any], spec_json: str | None = None) -> Results:
        tables = {name: Table._from_core(name, cols) for name, cols in raw["tables"].items()}
        return cls(tables, raw["meta"], int(raw["digest"]), spec_json)

    @property
    def finished(self) -> bool:
        """True unless the run stopped before its end."""
        return self.meta.get("finished", True) not in (False, "false")

    @property
    def spec(self) -> dict[str, Any] | None:
        """The resolved scenario the run used (from ``meta["resolved_spec"]``), if known."""
        text = self.meta.get("resolved_spec") or self._spec_json
        if isinstance(text, dict):
            return text
        return json.loads(text) if text else None

    def table(self, name: str) -> Table:
        """The table called ``name``."""
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables)}") from None

    def to_pandas(self, name: str) -> pd.DataFrame:
        """The table called ``name`` as a DataFrame (what ``results.<name>`` returns)."""
        return self.table(name).to_pandas()

    @property
    def flows(self) -> pd.DataFrame:
        """The ``flows`` table (one row per flow) as a DataFrame."""
        return self.to_pandas("flows")

    @property
    def queues(self) -> pd.DataFrame:
        """The ``queues`` table (one row per link direction) as a DataFrame."""
        return self.to_pandas("queues")

    @property
    def flow_series(self) -> pd.DataFrame:
        """The ``flow_series`` table (per flow per sample; empty without ``sample_interval``)."""
        return self.to_pandas("flow_series")

    @property
    def queue_series(self) -> pd.DataFrame:
        """The ``queue_series`` table (per queue per sample; empty without ``sample_interval``)."""
        return self.to_pandas("queue_series")

    @property
    def records(self) -> pd.DataFrame:
        """The ``records`` table (one row per transaction, page, object, UDP flow)."""
        return self.to_pandas("records")

    def __getattr__(self, name: str) -> pd.DataFrame:
        # Any other table the core (or a store's derived tables) adds, the same way.
        tables = self.__dict__.get("tables")
        if tables is not None and name in tables:
            return self.to_pandas(name)
        raise AttributeError(
            f"Results has no attribute or table {name!r}; tables: {', '.join(tables or ())}"
        )

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.tables})

    def write_parquet(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write ``<table>.parquet`` per table and ``meta.json`` into ``directory``.

        ``meta.json`` holds the metadata, the digest and the resolved scenario.
        Returns the paths written.
        """
        import pyarrow.parquet as pq

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables.items():
            path = out / f"{name}.parquet"
            pq.write_table(table.to_arrow(), path)
            written.append(path)
        meta: dict[str, Any] = {k: v for k, v in self.meta.items() if k != "resolved_spec"}
        meta["finished"] = self.finished
        meta["digest"] = self.digest
        meta["tables"] = list(self.tables)
        meta["resolved_spec"] = self.spec
        path = out / "meta.json"
        path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        written.append(path)
        return written

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}[{len(t)}x{len(t.columns)}]" for n, t in self.tables.items())
        return f"Results({shapes}, finished={self.finished}, digest={self.digest:#018x})"

    def _repr_html_(self) -> str:
        """Jupyter's view: the run's identity, its tables' shapes and the first flows and queues."""
        import html

        meta = self.meta
        spec = self.spec or {}
        facts = [
            ("scenario", spec.get("name") or "-"),
            ("seed", meta.get("seed", "-")),
            ("profile", meta.get("profile", "-")),
            ("duration", _seconds(meta.get("duration_s"))),
            ("warm-up", _seconds(meta.get("warmup_s"))),
            ("ended at", _seconds(meta.get("end_time_s"))),
            ("finished", "yes" if self.finished else f"no ({meta.get('stopped', 'interrupted')})"),
            ("digest", f"{self.digest:#018x}"),
        ]
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
            for k, v in facts
        )
        shapes = "".join(
            f"<tr><td style='text-align:left'><code>results.{html.escape(n)}</code></td>"
            f"<td>{len(t)}</td><td>{len(t.columns)}</td></tr>"
            for n, t in self.tables.items()
        )
        parts = [
            "<div class='ecnsim-results'><strong>ecnsim Results</strong>",
            f"<table>{rows}</table>",
            "<table><tr><th>table</th><th>rows</th><th>columns</th></tr>",
            f"{shapes}</table>",
        ]
        for name, limit in (("flows", 10), ("queues", 10)):
            t = self.tables.get(name)
            if t is not None and len(t):
                more = f" (first {limit} of {len(t)})" if len(t) > limit else ""
                parts.append(f"<p><code>{name}</code>{more}</p>")
                parts.append(t.to_pandas().head(limit).to_html(index=False, na_rep="NaN"))
        parts.append("</div>")
        return "".join(parts)


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{value:g} s" if isinstance(value, float) else str(value)
