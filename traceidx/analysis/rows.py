"""Values of result rows as every output shows them: JSON-ready values and the unknown marker."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any, Final

#: how tables and the HTML report show an unknown (null) key value
UNKNOWN: Final = "(unknown)"
#: the largest integer a double (a JavaScript number, what most JSON readers make of a JSON
#: number) holds exactly; a larger one leaves the program as a string
MAX_EXACT: Final = 2**53 - 1


def holds_ids(name: str) -> bool:
    """Whether a column (or a key of a struct) holds an id or a list of ids (``id``, ``*_id``,
    ``*_ids``): JSON carries ids as strings, whatever their value, so their type is stable."""
    name = name.lower()
    return name == "id" or name.endswith(("_id", "_ids"))


def jsonable(value: Any) -> Any:
    """A value as JSON carries it: times as ISO 8601 UTC, decimals as numbers, a float that is
    not finite as null (JSON has no NaN), an integer a double cannot hold exactly (beyond
    `MAX_EXACT`) as its digits in a string."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_EXACT:
        return str(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return jsonable(int(value)) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def portable(value: Any, name: str = "") -> Any:
    """A value of column (or struct key) `name` as a JSON reply carries it to any client
    (JavaScript included): `jsonable`, with every id (`holds_ids`) in a string, in structs and
    lists too. The Python API and Polars keep ids as integers."""
    if isinstance(value, dict):
        return {k: portable(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [portable(v, name) for v in value]
    shown = jsonable(value)
    if type(shown) is int and holds_ids(name):
        return str(shown)
    return shown
