"""Runtime timestamps (RFC 3339 strings or epoch numbers) to epoch milliseconds UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from mypy_extensions import i64

from traceidx import compiled


def rfc3339_ms(value: object) -> int | None:
    """Epoch ms of an RFC 3339 / ISO 8601 timestamp string; None if it is not one.

    A timestamp without a zone is read as UTC. Fractions beyond milliseconds are truncated.
    The form runtimes write on every record, ``YYYY-MM-DDTHH:MM:SS.mmmZ``, takes a fast path:
    compiled, its digits are read by integer arithmetic (`_usual_ms`); interpreted, where that
    arithmetic costs more than Python's parser, from the epoch ms of its minute once that
    minute was parsed in full (`_cached_ms`). Every other form goes to Python's parser.
    """
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-":
        return None
    if len(value) == 24:
        usual = _usual_ms(value) if COMPILED else _cached_ms(value)
        if usual >= 0:
            return usual
    return _parsed_ms(value)


#: whether this install runs compiled by mypyc (`traceidx.compiled`)
COMPILED: Final = compiled()


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


def _usual_ms(value: str) -> i64:
    """Epoch ms of a 24-character ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (a year from 1970 on), by
    integer arithmetic on native 64-bit integers; -1 when `value` is not exactly that or names
    no real moment (the parser then decides, and refuses what it refuses)."""
    if not value.isascii():
        return -1
    data = value.encode()  # bytes: indexing them gives numbers, not one-character strings
    if (
        data[7] != 45  # -
        or data[10] != 84  # T
        or data[13] != 58  # :
        or data[16] != 58
        or data[19] != 46  # .
        or data[23] != 90  # Z
    ):
        return -1
    year = _digits(data, 0, 4)
    month = _digits(data, 5, 7)
    day = _digits(data, 8, 10)
    hour = _digits(data, 11, 13)
    minute = _digits(data, 14, 16)
    second = _digits(data, 17, 19)
    milli = _digits(data, 20, 23)
    if year < 1970 or not 1 <= month <= 12 or day < 1 or milli < 0:
        return -1
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        last: i64 = 29 if leap else 28
    else:
        last = 30 if month == 4 or month == 6 or month == 9 or month == 11 else 31
    if day > last:
        return -1
    if not 0 <= hour <= 23 or not 0 <= minute <= 59 or not 0 <= second <= 59:
        return -1
    # days since 1970-01-01 of the civil date (a year counted from March, so that the leap
    # day falls last)
    shifted: i64 = year - 1 if month <= 2 else year
    era = shifted // 400
    of_era = shifted - era * 400
    of_year = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    of_cycle = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    days = era * 146097 + of_cycle - 719468
    return (((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + milli


def _digits(data: bytes, start: i64, end: i64) -> i64:
    """The decimal number written by ASCII digits at ``data[start:end]``; -1 if a byte there
    is not one."""
    number: i64 = 0
    for at in range(start, end):
        digit: i64 = data[at] - 48
        if digit < 0 or digit > 9:
            return -1
        number = number * 10 + digit
    return number


def epoch_number_ms(value: object) -> int | None:
    """Epoch ms from a number that is already milliseconds (ints above 1e11) or seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not -MAX_EPOCH_MS <= value <= MAX_EPOCH_MS:  # also NaN: beyond any calendar date
        return None
    return int(value) if value > 1e11 else int(value * 1000)


#: the epoch milliseconds of 9999-12-31T23:59:59.999Z, the last time a calendar date holds
MAX_EPOCH_MS = 253_402_300_799_999
