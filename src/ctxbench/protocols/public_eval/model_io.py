"""The base of every public-eval report model class, and the value types its parts share.

Each part of ``ctxbench.public-eval-report.v1`` is a
:class:`~ctxbench.core.jsonmodel.JsonModel` deriving from :class:`PublicEvalModel`, so an
unknown member is refused as one the schema does not define; the decimals each float is
written with are declared on its field (``rounded``), and rounding happens when a report
is written and nowhere else. No numpy here.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ctxbench.core.jsonmodel import JsonModel

__all__ = ["BASES", "Basis", "Bounds", "Number", "PublicEvalModel"]

Basis = Literal["net", "agent"]
"""``net`` = agent total + the rows' governance overhead; ``agent`` = agent total only."""
BASES: tuple[Basis, ...] = ("net", "agent")
Bounds = tuple[float | None, float | None]
"""An interval's (low, high); either end None where the statistic is undefined."""
Number = int | float


class PublicEvalModel(JsonModel):
    """A part of a public-eval report (see the module docstring)."""

    __slots__ = ()
    json_owner: ClassVar[str] = "ctxbench.public-eval-report.v1"
