"""The base of every CEF report model class: floats to ``DECIMALS`` places, one owner.

Each part of ``ctxbench.cef-report.v1`` is a :class:`~ctxbench.core.jsonmodel.JsonModel`
deriving from :class:`CefModel`: a float is written rounded to ``DECIMALS`` places (the
only rounding of a report, free-form members included) and an unknown member is refused
as one ``ctxbench.cef-report.v1`` does not define.
"""

from __future__ import annotations

from typing import ClassVar, Final

from ctxbench.core.jsonmodel import JsonModel

__all__ = ["DECIMALS", "REPORT_SCHEMA", "CefModel"]

DECIMALS = 6
REPORT_SCHEMA: Final = "ctxbench.cef-report.v1"


class CefModel(JsonModel):
    """A part of a CEF report (see the module docstring)."""

    __slots__ = ()
    json_float_decimals: ClassVar[int | None] = DECIMALS
    json_owner: ClassVar[str] = REPORT_SCHEMA
