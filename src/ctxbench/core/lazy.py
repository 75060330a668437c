"""Package attributes imported from their modules on first use (PEP 562).

A package lists where each exported name lives and binds the two functions this returns
as its module ``__getattr__`` and ``__dir__``::

    __getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

so importing the package (or one of its light modules) does not import the heavy ones.
A name is looked up once and then stored in the package, so later reads cost nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str], exported: Sequence[str]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``where`` maps each name to its module: a full module name, or a bare one for a
    submodule of ``package``.
    """
    namespace = sys.modules[package].__dict__
    names = sorted(exported)

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        full = module if "." in module else f"{package}.{module}"
        value = getattr(importlib.import_module(full), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return list(names)

    return getattr_, dir_
