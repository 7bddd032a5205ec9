"""Values of result rows as every output shows them: JSON-ready values and the unknown marker."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any, Final

#: how tables and the HTML report show an unknown (null) key value
UNKNOWN: Final = "(unknown)"


def jsonable(value: Any) -> Any:
    """A value as JSON carries it: times as ISO 8601 UTC, decimals as numbers, a float that is
    not finite as null (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
