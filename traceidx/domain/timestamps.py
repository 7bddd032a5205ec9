"""Runtime timestamps (RFC 3339 strings or epoch numbers) to epoch milliseconds UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final


def rfc3339_ms(value: object) -> int | None:
    """Epoch ms of an RFC 3339 / ISO 8601 timestamp string; None if it is not one.

    A timestamp without a zone is read as UTC. Fractions beyond milliseconds are truncated.
    The form runtimes write on every record, ``YYYY-MM-DDTHH:MM:SS.mmmZ``, takes a fast path:
    the epoch ms of its minute once that minute was parsed in full (`_cached_ms`). Every other
    form goes to Python's parser.
    """
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-":
        return None
    if len(value) == 24:
        usual = _cached_ms(value)
        if usual >= 0:
            return usual
    return _parsed_ms(value)


def _parsed_ms(value: str) -> int | None:
    """Epoch ms by Python's ISO 8601 parser (a zoneless time is UTC); None if it refuses."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _MILLISECOND  # floored, exactly (timedelta arithmetic)


def _cached_ms(value: str) -> int:
    """Epoch ms of a 24-character timestamp of the usual form from the epoch ms of its minute
    (records come minutes apart at most, so nearly every one finds it); -1 if it is not of
    that form or not a moment."""
    if value[19] != "." or value[23] != "Z":
        return -1
    rest = value[17:19] + value[20:23]  # seconds and milliseconds
    minute = _MINUTES.get(value[:17])
    if minute is not None and rest.isascii() and rest.isdigit() and rest < "6":
        return minute + int(rest)
    epoch_ms = _parsed_ms(value)
    if epoch_ms is None:
        return -1
    if len(_MINUTES) >= _MAX_MINUTES:
        _MINUTES.clear()
    _MINUTES[value[:17]] = epoch_ms - int(rest)
    return epoch_ms


#: ``YYYY-MM-DDTHH:MM:`` -> epoch ms of that minute, for minutes parsed in full already
_MINUTES: Final[dict[str, int]] = {}
_MAX_MINUTES: Final = 1 << 16

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND: Final = timedelta(milliseconds=1)


def epoch_number_ms(value: object) -> int | None:
    """Epoch ms from a number that is already milliseconds (ints above 1e11) or seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not -MAX_EPOCH_MS <= value <= MAX_EPOCH_MS:  # also NaN: beyond any calendar date
        return None
    return int(value) if value > 1e11 else int(value * 1000)


#: the epoch milliseconds of 9999-12-31T23:59:59.999Z, the last time a calendar date holds
MAX_EPOCH_MS = 253_402_300_799_999
