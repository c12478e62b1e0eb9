"""Shared helpers of the analysis modules: column checks and the group spec type."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import pandas as pd

#: Drop-reason columns of the ``queues`` table (ns-3's names in ``docs/results.md``).
DROP_REASONS = ("drops_overflow", "drops_early", "drops_forced")
#: Mark-reason columns of the ``queues`` table.
MARK_REASONS = ("marks_early", "marks_forced", "marks_ce_threshold")

#: Relative tolerance when matching bin edges to sample times.
_TIME_RTOL = 1e-9

GroupSpec = str | Mapping[Any, str] | Callable[[str], str] | None


class MissingColumnError(KeyError):
    """A metric needs a column that the table (as the core exports it today) lacks."""

    def __init__(self, table: str, column: str, why: str) -> None:
        self.table = table
        self.column = column
        super().__init__(f"{table} has no column {column!r} ({why})")

    def __str__(self) -> str:
        return str(self.args[0])


def _frame(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return cast(pd.DataFrame, pd.DataFrame(*args, **kwargs))


def _require(df: pd.DataFrame, table: str, columns: Iterable[str], why: str) -> None:
    for column in columns:
        if column not in df.columns:
            raise MissingColumnError(table, column, why)
