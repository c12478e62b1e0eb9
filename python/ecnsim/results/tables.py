"""Results of a run: named column tables plus metadata.

The core hands over each numeric column as one block of little-endian
bytes, which becomes a (read-only) numpy array without a Python object per
row; name columns are lists of ``str``. Tables and columns are whatever the
core produced (see ``docs/results.md``); nothing here depends on their names
except the ``flows``/``queues`` shortcuts and the series' name columns.

A table from the core keeps the core's bytes until a column is first read:
``import ecnsim`` does not import numpy, and :meth:`Results.write_parquet`
hands the bytes to Arrow as they are (no numpy, no pandas).

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

import array
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["Column", "Results", "Table"]

#: One column's values: a numpy array (int64 or float64) or a list of names.
Column: TypeAlias = "np.ndarray | list[str]"

#: The numeric dtypes the core sends, as numpy reads them: the core's u64
#: counters are read as int64 (the same bytes, no copy).
_NUMPY_DTYPES = {"<u8": "<i8", "<f8": "<f8"}

#: Arrow's type for each numeric dtype (the core's, or a hand-built array's).
_ARROW_TYPES = {"<u8": "int64", "<i8": "int64", "<f8": "float64"}

#: Tables whose rows name a flow or a queue by id: (id column, name column, table of names).
_SERIES_NAMES = {
    "flow_series": ("flow_id", "flow", "flows"),
    "queue_series": ("queue_id", "queue", "queues"),
}


def _overflow(name: str) -> OverflowError:
    return OverflowError(f"column {name!r}: a counter exceeds the int64 range")


def _signed(name: str, values: Any) -> Any:
    """``values`` as int64 if they are unsigned integers (refusing values above 2**63 - 1)."""
    dtype = getattr(values, "dtype", None)
    if dtype is None or dtype.kind != "u":
        return values
    import numpy as np

    if values.size and int(values.max()) > np.iinfo(np.int64).max:
        raise _overflow(name)
    return values.astype(np.int64)


def _check_encoded(name: str, encoded: Any) -> int:
    """The length of a column as the core sent it, ``(dtype, payload)``; checks the dtype."""
    dtype, payload = encoded
    if dtype == "str":
        return len(payload)
    if dtype == "dict":
        return len(payload[0]) // 4
    if dtype not in _NUMPY_DTYPES:
        raise ValueError(f"column {name!r}: unknown dtype {dtype!r} from the core")
    return len(payload) // 8


def _decode_names(payload: tuple[bytes, list[str]]) -> list[str]:
    """A ``"dict"`` column (little-endian u32 codes into a list of names) as its names."""
    codes_bytes, names = payload
    codes = array.array("I")
    codes.frombytes(codes_bytes)
    if sys.byteorder != "little":
        codes.byteswap()
    return [names[c] for c in codes]


def _decode_column(name: str, encoded: Any) -> Column:
    dtype, payload = encoded
    if dtype == "str":
        return list(payload)
    if dtype == "dict":
        return _decode_names(payload)
    import numpy as np

    values = np.frombuffer(payload, dtype=np.dtype(_NUMPY_DTYPES[dtype]))
    if dtype == "<u8" and values.size and int(values.min()) < 0:
        raise _overflow(name)
    return values


def _to_arrow(name: str, values: Any, encoded: Any = None) -> pa.Array:
    """One column as a pyarrow Array, built from buffers (see :meth:`Table.to_arrow`).

    ``encoded`` is the core's ``(dtype, payload)`` when the column was not read yet.
    """
    import pyarrow as pa

    if encoded is not None and encoded[0] not in ("str", "dict") and sys.byteorder == "little":
        dtype, payload = encoded
        arrow_type = getattr(pa, _ARROW_TYPES[dtype])()
        column = pa.Array.from_buffers(arrow_type, len(payload) // 8, [None, pa.py_buffer(payload)])
        if dtype == "<u8" and len(column):
            import pyarrow.compute as pc

            if pc.min(column).as_py() < 0:
                raise _overflow(name)
        return column
    if encoded is not None and encoded[0] == "str":
        values = encoded[1]
    elif encoded is not None and encoded[0] == "dict":
        return _names_to_arrow(*encoded[1])
    elif encoded is not None:
        values = _decode_column(name, encoded)  # a big-endian host
    if not isinstance(values, list):
        import numpy as np

        dtype = values.dtype.str if isinstance(values, np.ndarray) else None
        if dtype not in _ARROW_TYPES or sys.byteorder != "little":
            # A column a caller built by hand (or a big-endian host): pyarrow's own conversion.
            return pa.array(_signed(name, values))
        data = np.ascontiguousarray(_signed(name, values))
        arrow_type = getattr(pa, _ARROW_TYPES[data.dtype.str])()
        return pa.Array.from_buffers(arrow_type, len(data), [None, pa.py_buffer(data)])
    return _names_to_arrow(*_dict_encode(values))


def _dict_encode(values: list[str]) -> tuple[bytes, list[str]]:
    """Names as a ``"dict"`` column: little-endian u32 codes into the distinct names, in
    order of first appearance (a word a row, where a Python ``bytes`` a row took ~40 bytes)."""
    index: dict[str, int] = {}
    for v in values:
        index.setdefault(v, len(index))
    codes = array.array("I", map(index.__getitem__, values))
    if sys.byteorder != "little":
        codes.byteswap()
    return codes.tobytes(), list(index)


def _names_to_arrow(codes: bytes, names: list[str]) -> pa.Array:
    """A ``"dict"`` column (little-endian u32 codes into ``names``) as an Arrow string array:
    the distinct names encoded once, then taken by code (no Python object per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dictionary = _plain_names_to_arrow(names)
    if sys.byteorder != "little":
        swapped = array.array("I")
        swapped.frombytes(codes)
        swapped.byteswap()
        codes = swapped.tobytes()
    indices = pa.Array.from_buffers(pa.uint32(), len(codes) // 4, [None, pa.py_buffer(codes)])
    if len(indices) and pc.max(indices).as_py() >= len(dictionary):
        raise ValueError(f"name codes outside their {len(dictionary)} names")
    # Arrow's string type has 32-bit offsets; beyond 2 GiB of names, large_string.
    total = pc.sum(pc.binary_length(dictionary).take(indices)).as_py() or 0
    if total >= 2**31:
        dictionary = dictionary.cast(pa.large_string())
    return dictionary.take(indices)


def _plain_names_to_arrow(values: list[str]) -> pa.Array:
    """Names as an Arrow string array, a Python ``bytes`` per name (for a few names)."""
    import pyarrow as pa

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


def _name_codes(
    series: Table, names_table: Table, id_col: str, name_col: str
) -> tuple[str, Any] | None:
    """The ``series`` rows' names as a ``"dict"`` column, looked up in Rust from the core's
    bytes (no Python object per row); None unless both tables are still the core's."""
    if series._encoded is None or names_table._encoded is None:
        return None
    ids = series._encoded[id_col]
    keys = names_table._encoded[id_col]
    names = names_table._encoded[name_col]
    if ids[0] != "<u8" or keys[0] != "<u8" or names[0] not in ("str", "dict"):
        return None
    from ecnsim import _core

    labels = list(names[1]) if names[0] == "str" else _decode_names(names[1])
    return ("dict", _core.name_codes(ids[1], keys[1], labels))


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
            elif key == "warnings":
                value = json.loads(value) if value.strip() else []
            elif key.endswith("_s") and value.strip():
                with contextlib.suppress(ValueError):
                    value = float(value)
        out[key] = value
    return out


class Table:
    """A named table of equally long columns, in the core's column order."""

    def __init__(self, name: str, columns: Mapping[str, Column]) -> None:
        self.name = name
        self._columns: dict[str, Column] | None = {c: _signed(c, v) for c, v in columns.items()}
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
            self._columns = {col: _decode_column(col, enc) for col, enc in encoded.items()}
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

    def _peek(self, column: str) -> Column:
        """One column's values, without decoding (or keeping) the others."""
        if self._columns is None and self._encoded is not None:
            return _decode_column(column, self._encoded[column])
        return self.columns[column]

    def _insert_after(self, after: str, name: str, encoded: tuple[str, Any]) -> None:
        """Add the name column ``name`` (``("str", names)`` or ``("dict", (codes, names))``)
        right after column ``after`` (nothing is decoded)."""
        if self._columns is None and self._encoded is not None:
            items = list(self._encoded.items())
            at = [c for c, _ in items].index(after) + 1
            self._encoded = dict([*items[:at], (name, encoded), *items[at:]])
            return
        cols = list(self.columns.items())
        at = [c for c, _ in cols].index(after) + 1
        self._columns = dict([*cols[:at], (name, _decode_column(name, encoded)), *cols[at:]])

    def _writer_columns(self) -> dict[str, tuple[str, Any]] | None:
        """The columns as ``(dtype, payload)`` for the Parquet writer (``_core.write_parquet``):
        the core's bytes as they are, decoded columns re-encoded; None if a column is of
        another kind (a table built by hand), which pyarrow then writes."""
        if self._columns is None and self._encoded is not None:
            return self._encoded
        out: dict[str, tuple[str, Any]] = {}
        for col, values in self.columns.items():
            if isinstance(values, list):
                if not all(isinstance(v, str) for v in values):
                    return None
                out[col] = ("dict", _dict_encode(values))
                continue
            dtype = getattr(values, "dtype", None)
            code = None if dtype is None else dtype.newbyteorder("<").str
            if code not in ("<i8", "<u8", "<f8") or getattr(values, "ndim", 1) != 1:
                return None
            base = getattr(values, "base", None)
            if (
                isinstance(base, bytes)
                and dtype is not None
                and dtype.str == code
                and values.flags.c_contiguous
                and values.nbytes == len(base)
            ):
                # A column decoded from the core's bytes (read-only, so still those bytes):
                # the bytes themselves, not a copy.
                out[col] = (code, base)
                continue
            import numpy as np

            out[col] = (code, np.ascontiguousarray(values, dtype=code).tobytes())
        return out

    def to_pylist(self, column: str) -> list[Any]:
        """One column as a list of Python ``int``, ``float`` or ``str``, without numpy
        (for small tables printed or checked in plain Python; numpy is not imported
        for a column that is still the core's bytes)."""
        if self._columns is None and self._encoded is not None:
            if column not in self._encoded:
                raise KeyError(f"table {self.name!r} has no column {column!r}")
            dtype, payload = self._encoded[column]
            if dtype == "str":
                return list(payload)
            if dtype == "dict":
                return _decode_names(payload)
            if dtype not in _NUMPY_DTYPES:
                raise ValueError(f"column {column!r}: unknown dtype {dtype!r} from the core")
            words = array.array("q" if dtype == "<u8" else "d")
            words.frombytes(payload)
            if sys.byteorder != "little":
                words.byteswap()
            if dtype == "<u8" and words and min(words) < 0:
                raise _overflow(column)
            return words.tolist()
        values = self[column]
        return values if isinstance(values, list) else values.tolist()

    def is_numeric(self, column: str) -> bool:
        """True for a column of numbers, False for names (nothing is decoded)."""
        if self._columns is None and self._encoded is not None:
            return self._encoded[column][0] not in ("str", "dict")
        return not isinstance(self[column], list)

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
        """The table as a pandas DataFrame of its own (numeric columns are copied once)."""
        import numpy as np
        import pandas as pd

        # Name columns get pandas' string dtype even when empty (an empty list
        # would otherwise become float64), so a table reads back from Parquet
        # with the same dtypes. `copy=True` is the one copy, made as pandas lays the
        # columns out in its blocks: the DataFrame is writable and never writes into
        # this table's (read-only) arrays, and no copy is made before pandas' own.
        df: pd.DataFrame = pd.DataFrame(
            {
                c: (v if isinstance(v, np.ndarray) else pd.array(v, dtype="str"))
                for c, v in self.columns.items()
            },
            columns=list(self.columns),
            copy=True,
        )
        return df

    def to_arrow(self) -> pa.Table:
        """The table as a pyarrow Table (int64, float64 and string columns).

        Numeric columns share the core's buffers (no copy) and names are
        encoded straight into Arrow's offsets and bytes: no pandas import
        (``pa.array`` would import it), so ``ecnsim run --out`` stays quick.
        """
        import pyarrow as pa

        if self._columns is None and self._encoded is not None:
            arrays = [_to_arrow(c, None, enc) for c, enc in self._encoded.items()]
        else:
            arrays = [_to_arrow(c, v) for c, v in self.columns.items()]
        return pa.table(arrays, names=self.column_names)

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
            if len(t) == 0:
                # Nothing sampled: the column exists, and nothing is decoded.
                t._insert_after(id_col, name_col, ("str", []))
                continue
            fast = _name_codes(t, names_table, id_col, name_col)
            if fast is not None:
                t._insert_after(id_col, name_col, fast)
                continue
            import numpy as np

            names = names_table._peek(name_col)
            by_id = dict(zip(np.asarray(names_table._peek(id_col)).tolist(), names, strict=True))
            ids = np.asarray(t._peek(id_col))
            # A workload connection has no row of its own in ``flows`` (unless
            # ``simulation.connection_rows``): its samples get an empty name.
            column = [by_id.get(i, "") for i in ids.tolist()]
            t._insert_after(id_col, name_col, ("str", column))

    @classmethod
    def _from_core(cls, raw: Mapping[str, Any], spec_json: str | None = None) -> Results:
        tables = {name: Table._from_core(name, cols) for name, cols in raw["tables"].items()}
        return cls(tables, raw["meta"], int(raw["digest"]), spec_json)

    @property
    def finished(self) -> bool:
        """True unless the run stopped before its end."""
        return self.meta.get("finished", True) not in (False, "false")

    @property
    def warnings(self) -> list[str]:
        """What in the results should not be read at face value (``"links[i] a->b: ..."``).

        Today: a link direction across which the flows delivered more payload in order
        during the measurement window than the direction sent in it (data held out of order
        at the receiver before the window and delivered in it; compare ``rx_goodput_bps``,
        docs/measurement.md). ``ecnsim run`` prints them as ``warning:`` lines.
        """
        value = self.meta.get("warnings") or []
        return [str(w) for w in value]

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
    def apps(self) -> pd.DataFrame:
        """The ``apps`` table (one row per workload: its connections summed) as a DataFrame."""
        return self.table("apps").to_pandas()

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

    def write_parquet(
        self,
        directory: str | os.PathLike[str],
        *,
        tables: Sequence[str] | None = None,
        meta_tables: Sequence[str] | None = None,
    ) -> list[Path]:
        """Write ``<table>.parquet`` per table and ``meta.json`` into ``directory``.

        ``meta.json`` holds the metadata, the digest, the names of the tables
        and the resolved scenario. ``tables``: write only these; ``meta_tables``:
        the tables ``meta.json`` lists (default: those written), for a directory
        written in steps. Returns the paths written.
        """
        from ecnsim import _core
        from ecnsim._system import deferred_sigint

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        chosen = self.tables if tables is None else {n: self.tables[n] for n in tables}
        for name, table in chosen.items():
            path = out / f"{name}.parquet"
            columns = table._writer_columns()
            if columns is not None and sys.byteorder == "little":
                # Written in Rust from the core's bytes: no pyarrow, no numpy.
                _core.write_parquet(str(path), columns)
            else:
                import pyarrow.parquet as pq

                pq.write_table(table.to_arrow(), path)
            written.append(path)
        meta: dict[str, Any] = {k: v for k, v in self.meta.items() if k != "resolved_spec"}
        meta["finished"] = self.finished
        meta["digest"] = self.digest
        meta["tables"] = list(chosen if meta_tables is None else meta_tables)
        # The resolved scenario goes in last, on one line: the core's JSON text as it is
        # (pretty-printing it in Python took longer than the run at 600 flows).
        spec = self.meta.get("resolved_spec") or self._spec_json
        spec_text = spec.strip() if isinstance(spec, str) and spec.strip() else json.dumps(spec)
        head = json.dumps(meta, indent=2)
        path = out / "meta.json"
        with deferred_sigint():  # never half a meta.json
            path.write_text(f'{head[:-2]},\n  "resolved_spec": {spec_text}\n}}\n', encoding="utf-8")
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
            *(f"<p><strong>warning:</strong> {html.escape(w)}</p>" for w in self.warnings),
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
