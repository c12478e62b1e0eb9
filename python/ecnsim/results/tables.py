"""Results of a run: named column tables plus metadata.

The core hands over each numeric column as one block of little-endian
bytes, which becomes a (read-only) numpy array without a Python object per
row; name columns are lists of ``str``. Tables and columns are whatever the
core produced (see ``docs/results.md``); nothing here depends on their names
except the ``flows``/``queues`` shortcuts.

A table from the core keeps the core's bytes until a column is first read:
``import ecnsim`` does not import numpy, and :meth:`Results.write_parquet`
hands the bytes to Arrow as they are (no numpy, no pandas).
"""

from __future__ import annotations

import array
import itertools
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["Column", "Results", "Table"]

#: One column's values: a numpy array (uint64 or float64) or a list of names.
Column: TypeAlias = "np.ndarray | list[str]"

#: The numeric dtypes the core sends, with their Arrow type names.
_NUMERIC_DTYPES = {"<u8": "uint64", "<f8": "float64"}


def _check_encoded(name: str, encoded: Any) -> int:
    """The length of a column as the core sent it, ``(dtype, payload)``; checks the dtype."""
    dtype, payload = encoded
    if dtype == "str":
        return len(payload)
    if dtype not in _NUMERIC_DTYPES:
        raise ValueError(f"column {name!r}: unknown dtype {dtype!r} from the core")
    return len(payload) // 8


def _decode_column(encoded: Any) -> Column:
    dtype, payload = encoded
    if dtype == "str":
        return list(payload)
    import numpy as np

    return np.frombuffer(payload, dtype=np.dtype(dtype))


def _to_arrow(values: Any, encoded: Any = None) -> pa.Array:
    """One column as a pyarrow Array, built from buffers (see :meth:`Table.to_arrow`).

    ``encoded`` is the core's ``(dtype, payload)`` when the column was not read yet.
    """
    import pyarrow as pa

    if encoded is not None and encoded[0] != "str" and sys.byteorder == "little":
        dtype, payload = encoded
        arrow_type = getattr(pa, _NUMERIC_DTYPES[dtype])()
        return pa.Array.from_buffers(arrow_type, len(payload) // 8, [None, pa.py_buffer(payload)])
    if encoded is not None and encoded[0] == "str":
        values = encoded[1]
    if not isinstance(values, list):
        import numpy as np

        dtype = values.dtype.str if isinstance(values, np.ndarray) else None
        if dtype not in _NUMERIC_DTYPES or sys.byteorder != "little":
            # A column a caller built by hand (or a big-endian host): pyarrow's own conversion.
            return pa.array(values)
        data = np.ascontiguousarray(values)
        arrow_type = getattr(pa, _NUMERIC_DTYPES[dtype])()
        return pa.Array.from_buffers(arrow_type, len(data), [None, pa.py_buffer(data)])
    encoded_names = [v.encode("utf-8") for v in values]
    ends = list(itertools.accumulate(map(len, encoded_names)))
    total = ends[-1] if ends else 0
    # Arrow's string type has 32-bit offsets; beyond 2 GiB of names, large_string.
    wide = total >= 2**31
    offsets = array.array("q" if wide else "i", [0, *ends])
    if sys.byteorder != "little":
        offsets.byteswap()
    string_type = pa.large_string() if wide else pa.string()
    return pa.Array.from_buffers(
        string_type,
        len(encoded_names),
        [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(encoded_names))],
    )


class Table:
    """A named table of equally long columns, in the core's column order."""

    def __init__(self, name: str, columns: Mapping[str, Column]) -> None:
        self.name = name
        self._columns: dict[str, Column] | None = dict(columns)
        self._encoded: dict[str, Any] | None = None
        lengths = {len(c) for c in self._columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"table {name!r}: columns have different lengths {sorted(lengths)}")

    @classmethod
    def _from_core(cls, name: str, encoded: Mapping[str, Any]) -> Table:
        table = cls(name, {})
        table._columns = None
        table._encoded = dict(encoded)
        lengths = {_check_encoded(col, enc) for col, enc in table._encoded.items()}
        if len(lengths) > 1:
            raise ValueError(f"table {name!r}: columns have different lengths {sorted(lengths)}")
        return table

    @property
    def columns(self) -> dict[str, Column]:
        """Columns by name, in order (decoded from the core's bytes on first use)."""
        if self._columns is None:
            encoded = self._encoded or {}
            self._columns = {col: _decode_column(enc) for col, enc in encoded.items()}
            self._encoded = None
        return self._columns

    def _names(self) -> dict[str, Any]:
        # Column names without decoding anything.
        if self._columns is None and self._encoded is not None:
            return self._encoded
        return self.columns

    @property
    def column_names(self) -> list[str]:
        """Column names in order."""
        return list(self._names())

    @property
    def num_rows(self) -> int:
        """Number of rows (0 for a table without columns)."""
        if self._columns is None and self._encoded:
            return _check_encoded("", next(iter(self._encoded.values())))
        return len(next(iter(self.columns.values()), []))

    def __len__(self) -> int:
        return self.num_rows

    def __contains__(self, column: object) -> bool:
        return column in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names()))

    def __getitem__(self, column: str) -> Column:
        try:
            return self.columns[column]
        except KeyError:
            raise KeyError(
                f"table {self.name!r} has no column {column!r}; columns: {', '.join(self.columns)}"
            ) from None

    def to_numpy(self) -> dict[str, np.ndarray]:
        """Every column as a numpy array (names as an object array of ``str``)."""
        import numpy as np

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
        import numpy as np
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
        """The table as a pyarrow Table (uint64, float64 and string columns).

        Numeric columns share the core's buffers (no copy) and names are
        encoded straight into Arrow's offsets and bytes: no pandas import
        (``pa.array`` would import it), so ``ecnsim run --out`` stays quick.
        """
        import pyarrow as pa

        if self._columns is None and self._encoded is not None:
            arrays = [_to_arrow(None, enc) for enc in self._encoded.values()]
        else:
            arrays = [_to_arrow(v) for v in self.columns.values()]
        return pa.table(arrays, names=self.column_names)

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
