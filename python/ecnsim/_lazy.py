"""Package attributes imported on first use (PEP 562), so ``import ecnsim`` and the
``ecnsim`` command load only the modules they touch: ``ecnsim --help`` and
``ecnsim run`` import no topology builders, analysis, numpy, pandas or pyarrow."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose ``namespace`` (its ``globals()``)
    exports each name of ``exports[module]`` from ``module``, imported on first access
    and then kept in the namespace."""
    home = {name: module for module, names in exports.items() for name in names}

    def getattr_(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *home})

    return getattr_, dir_
