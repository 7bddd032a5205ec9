"""Runtime timestamps (RFC 3339 strings or epoch numbers) to epoch milliseconds UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def rfc3339_ms(value: object) -> int | None:
    """Epoch ms of an RFC 3339 / ISO 8601 timestamp string; None if it is not one.

    A timestamp without a zone is read as UTC. Fractions beyond milliseconds are truncated.
    """
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-":
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _MILLISECOND  # floored, exactly (timedelta arithmetic)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


def epoch_number_ms(value: object) -> int | None:
    """Epoch ms from a number that is already milliseconds (ints above 1e11) or seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 1e11 else int(value * 1000)
