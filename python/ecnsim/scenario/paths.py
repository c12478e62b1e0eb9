"""Parameter paths into a scenario: parse and set.

A path names fields and list elements: ``links[0].queue.max_p`` (by
index), ``flows[*].tcp.cc`` (every element) or
``links[name=bottleneck].queue.max_p`` and ``flows[group=fragile].tcp.cc``
(by selector: every element whose field equals the value). The same paths
serve sweeps (``grid``, ``set``), studies (``--set``) and ``ecnsim run --set``.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Select:
    """The ``[key=value]`` of a path: every element of a list whose ``key`` is ``value``.

    ``key`` is a field of the elements. Two keys have a value on every
    element, as the results tables name them: ``name`` (an unnamed element
    of ``flows``, ``apps`` or ``links`` is ``flow<i>``, ``app<i>``,
    ``link<i>``) and ``group`` (an element without a ``group`` field is in
    the group of its name without a trailing index, ``fragile12`` ->
    ``fragile``, as :func:`default_group` reads it).
    Values compare as text: ``flows[src=s1]``, ``links[rate=10Mbps]``.
    """

    key: str
    value: str

    def __repr__(self) -> str:
        return f"[{self.key}={self.value}]"


PathToken = str | int | _Any | Select

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX_RE = re.compile(r"\[(\d+|\*)\]")
_SELECT_RE = re.compile(r"\[([A-Za-z_][A-Za-z0-9_]*)=([^\]]+)\]")
#: Default element names of the scenario's named lists (``flows[3]`` is ``flow3``).
_DEFAULT_NAME = {"flows": "flow", "apps": "app", "links": "link"}
# ASCII digits and separators: the core's rule (``default_group`` in ``template.rs``).
_TRAILING_INDEX = re.compile(r"[\s_\-.:#]*[0-9]+$", re.ASCII)


def default_group(name: str) -> str:
    """The group of a flow called ``name``: the name without a trailing index.

    ``"fragile12"`` and ``"fragile-12"`` give ``"fragile"``, ``"flow0"``
    gives ``"flow"``; a name without a trailing number is its own group. The
    core gives a flow without a ``group`` field the same group (the ``group``
    column of ``results.flows``).
    """
    stripped = _TRAILING_INDEX.sub("", name)
    return stripped or name


#: Longest parameter path taken (a scenario's deepest field is a few tables down; a path
#: of thousands of parts would only exhaust the recursion that follows it).
MAX_PATH_CHARS = 1000


def parse_value(text: str) -> Any:
    """A command-line value: JSON if it parses (``0.1``, ``[15, 30]``, ``true``, ``"x"``),
    else the text itself (``newreno``, ``10Mbps``). ``ValueError`` for JSON nested beyond
    what the parser takes."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    except ValueError:
        return text
    if value is None or nesting_depth(value) > MAX_NESTING:
        raise ValueError(f"the value is nested more than {MAX_NESTING} arrays or tables deep")
    return value


#: Deepest nesting of arrays and tables taken in a value or a JSON scenario (a scenario
#: needs a handful; Python's own recursion would give out near a thousand).
MAX_NESTING = 64


def nesting_depth(value: Any) -> int:
    """How many arrays and tables deep ``value`` is (0 for a number or a string); counted
    without recursion, so any depth can be measured."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def split_assignment(text: str) -> tuple[str, str] | None:
    """``"PATH=VALUE"`` split at the first ``=`` outside brackets (``links[name=x].rate=5Mbps``
    gives ``("links[name=x].rate", "5Mbps")``), both stripped; ``None`` without any ``=``."""
    depth = 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == "=" and depth == 0:
            return text[:i].strip(), text[i + 1 :].strip()
    if "=" in text:  # unbalanced brackets: the path is malformed, and its parser says how
        path, _, value = text.partition("=")
        return path.strip(), value.strip()
    return None


def parse_assignment(text: str) -> tuple[str, Any]:
    """``"PATH=VALUE"`` (as ``--set`` takes it) as ``(path, value)``; ``ValueError`` if malformed.

    The path is split off by :func:`split_assignment` and checked with
    :func:`parse_path`; the value is read by :func:`parse_value`.
    """
    parts = split_assignment(text)
    if parts is None or not parts[0]:
        raise ValueError(f"{text!r}: write PATH=VALUE (e.g. tcp.cc=newreno)")
    path, raw = parts
    try:
        parse_path(path)
    except ValueError as e:
        shown = path if len(path) <= 80 else path[:77] + "..."
        reason = str(e) if len(str(e)) <= 200 else str(e)[:197] + "..."
        raise ValueError(f"{shown}: not a parameter path: {reason}") from None
    return path, parse_value(raw)


def parse_path(path: str) -> tuple[PathToken, ...]:
    """Split ``links[0].queue.limit_packets`` into ``("links", 0, "queue", "limit_packets")``.

    ``[*]`` becomes :data:`ANY` and ``[key=value]`` a :class:`Select`.
    Raises ``ValueError`` for anything else.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("a parameter path must be a non-empty string")
    if len(path) > MAX_PATH_CHARS:
        raise ValueError(
            f"{len(path)} characters long; a parameter path has at most {MAX_PATH_CHARS}"
        )
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
            if m is not None:
                tokens.append(ANY if m.group(1) == "*" else int(m.group(1)))
                i = m.end()
                continue
            m = _SELECT_RE.match(path, i)
            if m is None:
                raise ValueError(
                    f"expected [N], [*] or [key=value] at character {i + 1} of {path!r}"
                )
            tokens.append(Select(m.group(1), m.group(2).strip()))
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
        elif isinstance(t, Select):
            out += repr(t)
        else:
            out += "[*]" if t is ANY else f"[{t}]"
    return out or "<root>"


def _selector_value(list_name: Any, index: int, element: Any, key: str) -> str | None:
    """The text a :class:`Select` compares for ``element`` (``None``: it has no such field)."""
    if not isinstance(element, dict):
        return None
    value = element.get(key)
    if value is None and key in ("name", "group"):
        name = element.get("name")
        if name is None and list_name in _DEFAULT_NAME:
            name = f"{_DEFAULT_NAME[list_name]}{index}"
        value = name if key == "name" or name is None else default_group(str(name))
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def select_indices(items: Sequence[Any], selector: Select, *, list_name: Any = None) -> list[int]:
    """The indices of ``items`` that ``selector`` matches (``list_name``: ``"flows"``, ...)."""
    return [
        j
        for j, element in enumerate(items)
        if _selector_value(list_name, j, element, selector.key) == selector.value
    ]


def set_path(data: dict[str, Any], path: str | Sequence[PathToken], value: Any) -> None:
    """Set the field at ``path`` in scenario dict ``data`` to (a copy of) ``value``, in place.

    Missing tables on the way are created (``tcp.cc`` in a scenario without
    ``tcp``), unless the table beside them says the path means one of its
    variants (``links[0].queue.max_p`` on a link with ``queue_ab``, see
    :func:`_variant_tables`); list indices must exist; ``[*]`` and
    ``[key=value]`` set every element they match and must match at least one
    (the error lists the values that exist). Raises ``ValueError`` naming the
    part that does not fit.
    """
    tokens = parse_path(path) if isinstance(path, str) else tuple(path)

    def rec(node: Any, i: int, at: str) -> None:
        # `at`: where `node` is, by index (`links[0]`), where `here` may be a selector.
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
                variants = _variant_tables(node, tok)
                if variants:
                    raise ValueError(_variant_message(tokens, i, at, variants))
                node[tok] = {}
            rec(node[tok], i + 1, f"{at}.{tok}" if at else tok)
            return
        if not isinstance(node, list):
            raise ValueError(f"{here} is not an array")
        if tok is ANY:
            if not node:
                raise ValueError(f"{here}[*] matches nothing: {here} is empty")
            indices: Iterable[int] = range(len(node))
        elif isinstance(tok, Select):
            list_name = tokens[i - 1] if i > 0 else None
            indices = select_indices(node, tok, list_name=list_name)
            if not indices:
                present = [_selector_value(list_name, j, e, tok.key) for j, e in enumerate(node)]
                values = sorted({v for v in present if v is not None})
                if not values:
                    raise ValueError(
                        f"{here}{tok!r} matches nothing: no element of {here} has a field "
                        f"{tok.key!r}"
                    )
                shown = ", ".join(values[:20]) + (
                    f", ... ({len(values)} in all)" if len(values) > 20 else ""
                )
                raise ValueError(f"{here}{tok!r} matches nothing; {here} has {tok.key} {shown}")
        else:
            assert isinstance(tok, int)
            if tok >= len(node):
                raise ValueError(f"{here}[{tok}] does not exist: {here} has {len(node)} entries")
            indices = (tok,)
        for j in indices:
            if last:
                node[j] = copy.deepcopy(value)
            else:
                rec(node[j], i + 1, f"{at}[{j}]")

    rec(data, 0, "")


def _variant_tables(node: dict[str, Any], key: str) -> list[str]:
    """The tables in ``node`` named ``<key>_<something>`` (``queue_ab``, ``queue_ba`` beside
    a missing ``queue``): a path through ``key`` that would create it most likely means one
    of them, and a new ``key`` holding only the field set is seldom a whole table."""
    return sorted(k for k, v in node.items() if k.startswith(f"{key}_") and isinstance(v, dict))


def _variant_message(tokens: Sequence[PathToken], i: int, at: str, variants: list[str]) -> str:
    """Why a path through the missing table ``tokens[i]`` beside ``variants`` is refused,
    with the paths through each variant (never taken in its place: which one is meant is
    the user's choice)."""
    key = tokens[i]
    rest = _format_tokens(tokens[i + 1 :])
    has = " and ".join(f"`{v}`" for v in variants)
    meant = " or ".join(_format_tokens([*tokens[:i], v, *tokens[i + 1 :]]) for v in variants)
    whole = _format_tokens(tokens[: i + 1])
    return (
        f"{at or 'the scenario'} has {has} but no `{key}`, so this would create a new `{key}` "
        f"table holding only `{rest}`; did you mean {meant}? (a new `{key}` beside {has} is "
        f"given whole: {whole}={{...}})"
    )


#: Top-level keys of a scenario's templates (``[topology]``, ``[[flow_groups]]``).
TEMPLATE_KEYS = ("topology", "flow_groups")


#: A scenario's integers are 64-bit, as TOML's (TOML 1.0 §Integer): the core reads none wider.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def _wide_int(value: Any, at: str = "") -> tuple[str, int] | None:
    """The first integer in ``value`` outside TOML's 64-bit range, as ``(where in value, it)``."""
    stack: list[tuple[Any, str]] = [(value, at)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, bool):
            continue
        if isinstance(node, int) and not INT_MIN <= node <= INT_MAX:
            return where, node
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{j}]") for j, v in reversed(list(enumerate(node))))
    return None


def check_int_range(path: str, value: Any) -> None:
    """Refuse an integer a scenario file could not hold, naming the deepest field
    (``PathError``): serde would read it as a float (``invalid type ... at topology``) or an
    unsigned integer, and name the wrong field or no range."""
    wide = _wide_int(value)
    if wide is not None:
        where, n = wide
        raise PathError(
            f"{path}{where}",
            f"integer out of range: a scenario's integers are 64-bit, from {INT_MIN} to "
            f"{INT_MAX} (as TOML's), got {n}",
        )


class PathError(ValueError):
    """A path that does not fit the scenario; ``path`` is the path as given."""

    def __init__(self, path: str | Sequence[PathToken], message: str) -> None:
        super().__init__(message)
        self.path = path if isinstance(path, str) else _format_tokens(path)


def set_paths(data: dict[str, Any], assignments: Iterable[tuple[Any, Any]]) -> None:
    """Set each ``(path, value)`` of ``assignments`` in scenario dict ``data``, in place.

    As :func:`set_path`, in order, with one rule for scenarios with templates
    (``[topology]``, ``[[flow_groups]]``): paths into the templates
    (``topology.senders``, ``flow_groups[0].count``) are set first; then, if
    a path into ``nodes``, ``links`` or ``flows`` is given, the scenario is
    expanded (its templates replaced by the nodes, links and flows they make)
    and the other paths are set in that, so ``links[name=bottleneck].queue.max_p``
    and ``flows[group=bulk].tcp.cc`` reach what the templates made. Raises
    :class:`PathError` naming the path.
    """
    items = [(parse_path(p) if isinstance(p, str) else tuple(p), p, v) for p, v in assignments]
    for tokens, _, value in items:
        check_int_range(_format_tokens(tokens), value)
    template = [it for it in items if it[0] and it[0][0] in TEMPLATE_KEYS]
    rest = [it for it in items if not (it[0] and it[0][0] in TEMPLATE_KEYS)]
    for tokens, path, value in template:
        try:
            set_path(data, tokens, value)
        except ValueError as e:
            raise PathError(path, str(e)) from None
    expanded_lists = ("nodes", "links", "flows")
    if any(it[0][0] in expanded_lists for it in rest if it[0]) and (
        data.get("topology") or data.get("flow_groups")
    ):
        from ecnsim.scenario.spec import expand_in_place

        expand_in_place(data)
    for tokens, path, value in rest:
        try:
            set_path(data, tokens, value)
        except ValueError as e:
            raise PathError(path, str(e)) from None
