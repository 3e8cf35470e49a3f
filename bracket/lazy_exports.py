"""A package's public names, imported from its modules on first use (PEP 562).

A curated package ``__init__`` lists which of its modules defines each public name and hands
the table to :func:`lazy_exports`; ``from bracket.session import Session`` then works while
importing the package itself imports none of its modules, so ``status`` and ``--help`` stay
light and callers still import the public surface rather than deep paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str], namespace: Mapping[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: ``where`` maps each
    public name to the module of the package that defines it; ``namespace`` is the package's
    ``globals()`` (what ``dir()`` lists besides the public names)."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
