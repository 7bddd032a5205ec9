"""Runtime timestamps (RFC 3339 strings or epoch numbers) to epoch milliseconds UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def rfc3339_ms(value: object) -> int | None:
    """Epoch ms of an RFC 3339 / ISO 8601 timestamp string; None if it is not one.

    A timestamp without a zone is read as UTC. Fractions beyond milliseconds are truncated.
    The form runtimes write on every record, ``YYYY-MM-DDTHH:MM:SS.mmmZ``, is read from the
    epoch ms of its minute once that minute was parsed in full (records come minutes apart at
    most, so nearly every one is).
    """
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-":
        return None
    usual = len(value) == 24 and value[19] == "." and value[23] == "Z"
    rest = value[17:19] + value[20:23] if usual else ""  # seconds and milliseconds
    if usual:
        minute = _MINUTES.get(value[:17])
        if minute is not None and rest.isascii() and rest.isdigit() and rest < "6":
            return minute + int(rest)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    epoch_ms = (parsed - _EPOCH) // _MILLISECOND  # floored, exactly (timedelta arithmetic)
    if usual:
        if len(_MINUTES) >= _MAX_MINUTES:
            _MINUTES.clear()
        _MINUTES[value[:17]] = epoch_ms - int(rest)
    return epoch_ms


#: ``YYYY-MM-DDTHH:MM:`` -> epoch ms of that minute, for minutes parsed in full already
_MINUTES: dict[str, int] = {}
_MAX_MINUTES = 1 << 16


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


def epoch_number_ms(value: object) -> int | None:
    """Epoch ms from a number that is already milliseconds (ints above 1e11) or seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 1e11 else int(value * 1000)
