"""Results of a run: named column tables plus metadata.

The core hands over each numeric column as one block of little-endian
bytes, which becomes a (read-only) numpy array without a Python object per
row; name columns are lists of ``str``. Tables and columns are whatever the
core produced (see ``docs/results.md``); nothing here depends on their names
except the ``flows``/``queues`` shortcuts.
"""

from __future__ import annotations

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

#: One column's values: a numpy array (uint64 or float64) or a list of names.
Column = np.ndarray | list[str]

_NUMERIC_DTYPES = {"<u8": np.dtype("<u8"), "<f8": np.dtype("<f8")}


def _decode_column(name: str, encoded: Any) -> Column:
    dtype, payload = encoded
    if dtype == "str":
        return list(payload)
    try:
        np_dtype = _NUMERIC_DTYPES[dtype]
    except KeyError:
        raise ValueError(f"column {name!r}: unknown dtype {dtype!r} from the core") from None
    return np.frombuffer(payload, dtype=np_dtype)


class Table:
    """A named table of equally long columns, in the core's column order."""

    def __init__(self, name: str, columns: Mapping[str, Column]) -> None:
        self.name = name
        self.columns: dict[str, Column] = dict(columns)
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
        """The table as a pyarrow Table (uint64, float64 and string columns)."""
        import pyarrow as pa

        arrays = [
            pa.array(v) if isinstance(v, np.ndarray) else pa.array(v, type=pa.string())
            for v in self.columns.values()
        ]
        return pa.table(arrays, names=list(self.columns))

    def __repr__(self) -> str:
        return f"Table({self.name!r}, rows={self.num_rows}, columns={self.column_names})"


class Results:
    """Everything a run produced: ``tables`` by name, ``meta`` strings, ``digest``.

    ``meta["finished"]`` is ``"false"`` for the partial results of a run that
    was stopped before its end.
    """

    def __init__(
        self,
        tables: Mapping[str, Table],
        meta: Mapping[str, str],
        digest: int,
        spec_json: str | None = None,
    ) -> None:
        self.tables: dict[str, Table] = dict(tables)
        self.meta: dict[str, str] = dict(meta)
        self.digest = digest
        self._spec_json = spec_json

    @classmethod
    def _from_core(cls, raw: Mapping[str, Any], spec_json: str | None = None) -> Results:
        tables = {name: Table._from_core(name, cols) for name, cols in raw["tables"].items()}
        return cls(tables, raw["meta"], int(raw["digest"]), spec_json)

    @property
    def finished(self) -> bool:
        """True unless the run stopped before its end."""
        return self.meta.get("finished", "true") != "false"

    @property
    def spec(self) -> dict[str, Any] | None:
        """The resolved scenario the run used (from ``meta["resolved_spec"]``), if known."""
        text = self.meta.get("resolved_spec") or self._spec_json
        return json.loads(text) if text else None

    def table(self, name: str) -> Table:
        """The table called ``name``."""
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables)}") from None

    @property
    def flows(self) -> pd.DataFrame:
        """The ``flows`` table (one row per flow) as a DataFrame."""
        return self.table("flows").to_pandas()

    @property
    def apps(self) -> pd.DataFrame:
        """The ``apps`` table (one row per workload: its connections summed) as a DataFrame."""
        return self.table("apps").to_pandas()

    @property
    def queues(self) -> pd.DataFrame:
        """The ``queues`` table (one row per link direction) as a DataFrame."""
        return self.table("queues").to_pandas()

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
