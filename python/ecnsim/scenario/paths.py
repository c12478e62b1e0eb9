"""Parameter paths into a scenario (`links[0].queue.max_p`, `flows[*].tcp.cc`): parse, set."""

from __future__ import annotations

import copy
import importlib
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    tomllib = importlib.import_module("tomli")


# ---------------------------------------------------------------------------
# Parameter paths
# ---------------------------------------------------------------------------


class _Any:
    """The ``[*]`` of a path: every element of a list."""

    def __repr__(self) -> str:
        return "ANY"


#: The wildcard index ``[*]`` in a parsed path.
ANY = _Any()

PathToken = str | int | _Any

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX_RE = re.compile(r"\[(\d+|\*)\]")


def parse_path(path: str) -> tuple[PathToken, ...]:
    """Split ``links[0].queue.limit_packets`` into ``("links", 0, "queue", "limit_packets")``.

    ``[*]`` becomes :data:`ANY`. Raises ``ValueError`` for anything else.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("a parameter path must be a non-empty string")
    tokens: list[PathToken] = []
    i, n = 0, len(path)
    expect_name = True
    while i < n:
        if expect_name:
            m = _NAME_RE.match(path, i)
            if m is None:
                raise ValueError(f"expected a field name at character {i + 1} of {path!r}")
            tokens.append(m.group())
            i = m.end()
            expect_name = False
        elif path[i] == "[":
            m = _INDEX_RE.match(path, i)
            if m is None:
                raise ValueError(f"expected [N] or [*] at character {i + 1} of {path!r}")
            tokens.append(ANY if m.group(1) == "*" else int(m.group(1)))
            i = m.end()
        elif path[i] == ".":
            i += 1
            expect_name = True
        else:
            raise ValueError(f"unexpected {path[i]!r} at character {i + 1} of {path!r}")
    if expect_name:
        raise ValueError(f"{path!r} ends with '.'")
    return tuple(tokens)


def _format_tokens(tokens: Sequence[PathToken]) -> str:
    out = ""
    for t in tokens:
        if isinstance(t, str):
            out += ("." if out else "") + t
        else:
            out += "[*]" if t is ANY else f"[{t}]"
    return out or "<root>"


def set_path(data: dict[str, Any], path: str | Sequence[PathToken], value: Any) -> None:
    """Set the field at ``path`` in scenario dict ``data`` to (a copy of) ``value``, in place.

    Missing tables on the way are created (``tcp.cc`` in a scenario without
    ``tcp``); list indices must exist; ``[*]`` sets every element and must
    match at least one. Raises ``ValueError`` naming the part that does not fit.
    """
    tokens = parse_path(path) if isinstance(path, str) else tuple(path)

    def rec(node: Any, i: int) -> None:
        tok = tokens[i]
        here = _format_tokens(tokens[:i])
        last = i == len(tokens) - 1
        if isinstance(tok, str):
            if not isinstance(node, dict):
                raise ValueError(f"{here} is not a table, so it has no field {tok!r}")
            if last:
                node[tok] = copy.deepcopy(value)
                return
            if node.get(tok) is None:
                if not isinstance(tokens[i + 1], str):
                    raise ValueError(f"{_format_tokens(tokens[: i + 1])} does not exist")
                node[tok] = {}
            rec(node[tok], i + 1)
            return
        if not isinstance(node, list):
            raise ValueError(f"{here} is not an array")
        if tok is ANY:
            if not node:
                raise ValueError(f"{here}[*] matches nothing: {here} is empty")
            indices: Iterable[int] = range(len(node))
        else:
            assert isinstance(tok, int)
            if tok >= len(node):
                raise ValueError(f"{here}[{tok}] does not exist: {here} has {len(node)} entries")
            indices = (tok,)
        for j in indices:
            if last:
                node[j] = copy.deepcopy(value)
            else:
                rec(node[j], i + 1)

    rec(data, 0)
