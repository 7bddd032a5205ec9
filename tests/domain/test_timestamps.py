"""Runtime timestamps to epoch milliseconds: exact, floored, UTC when no zone is written."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from traceidx.domain.timestamps import _cached_ms, epoch_number_ms, rfc3339_ms

_ZONES = st.one_of(
    st.none(),
    st.just(UTC),
    st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)


def _exact_ms(moment: datetime) -> int:
    """Epoch ms by integer arithmetic only (a zoneless moment is UTC), floored."""
    utc = moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)
    seconds = calendar.timegm(utc.timetuple())
    return seconds * 1000 + utc.microsecond // 1000


@given(st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1)), _ZONES)
def test_iso_timestamps_give_exact_floored_milliseconds(moment: datetime, zone: object) -> None:
    stamped = moment.replace(tzinfo=zone)  # type: ignore[arg-type]
    assert rfc3339_ms(stamped.isoformat()) == _exact_ms(stamped)
    if zone is UTC:  # the runtimes' own spelling
        text = stamped.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        assert rfc3339_ms(text) == _exact_ms(stamped)


def test_what_is_not_a_timestamp_gives_none() -> None:
    for value in (None, 17, "", "yesterday", "2026-13-01T00:00:00Z", "20261101T000000"):
        assert rfc3339_ms(value) is None


def test_epoch_numbers_in_seconds_or_milliseconds() -> None:
    assert epoch_number_ms(1_700_000_000) == 1_700_000_000_000
    assert epoch_number_ms(1_700_000_000.5) == 1_700_000_000_500
    assert epoch_number_ms(1_700_000_000_123) == 1_700_000_000_123
    assert epoch_number_ms(True) is None and epoch_number_ms("1") is None


def _reference_ms(value: str) -> int | None:
    """The slow reading, with nothing cached: Python's ISO 8601 parser."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:  # read as UTC
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


_SECOND_CHARS = st.sampled_from("0123456789x-:.Z ٣")


@given(
    st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1)),
    st.text(_SECOND_CHARS, min_size=2, max_size=2),
    st.text(_SECOND_CHARS, min_size=3, max_size=3),
)
def test_a_minute_read_before_reads_its_seconds_as_the_parser_does(
    moment: datetime, seconds: str, millis: str
) -> None:
    minute = moment.strftime("%Y-%m-%dT%H:%M:")
    assert rfc3339_ms(minute + "07.250Z") == _reference_ms(minute + "07.250Z")  # now cached
    value = f"{minute}{seconds}.{millis}Z"
    assert rfc3339_ms(value) == _reference_ms(value)


def _usual(year: int, month: int, day: int, hour: int, minute: int, second: int, milli: int) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.lists(  # (the dash after the year stays: without it a value is refused before parsing)
        st.tuples(
            st.integers(0, 23).filter(lambda at: at != 4), st.sampled_from("0123456789-:.TZ x٣")
        ),
        max_size=3,
    ),
)
def test_the_usual_form_reads_as_the_parser_does(
    moment: datetime, damage: list[tuple[int, str]]
) -> None:
    """The runtimes' ``YYYY-MM-DDTHH:MM:SS.mmmZ`` is read from its digits: the same moment
    as Python's parser, and the same refusals, whichever character is out of place."""
    parts = (moment.hour, moment.minute, moment.second, moment.microsecond // 1000)
    chars = list(_usual(moment.year, moment.month, moment.day, *parts))
    for at, char in damage:
        chars[at] = char
    _check_usual("".join(chars))


_RUNTIMES_FORM = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


def _check_usual(value: str) -> None:
    """`value` reads as the parser reads it, and so does the minute-cached fast
    path wherever it answers; it answers for every moment of the
    runtimes' form (it leaves the rest, a space for the ``T`` say, to the parser)."""
    expected = _reference_ms(value)
    assert rfc3339_ms(value) == expected
    arithmetic = _cached_ms(value)
    runtimes_form = _RUNTIMES_FORM.fullmatch(value) is not None and value[:4] >= "1970"
    if arithmetic >= 0 or (expected is not None and runtimes_form):
        assert arithmetic == expected


@given(
    st.integers(1960, 2500),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 60),
    st.integers(0, 61),
    st.integers(0, 999),
)
def test_the_usual_form_refuses_what_is_no_date(
    year: int, month: int, day: int, hour: int, minute: int, second: int, milli: int
) -> None:
    """Month 13, February 29 of a common year, hour 24, second 60…: refused as the parser
    refuses them; every real moment read exactly."""
    _check_usual(_usual(year, month, day, hour, minute, second, milli))


def test_leap_days_and_century_years() -> None:
    for value in (
        "2024-02-29T23:59:59.999Z",
        "2000-02-29T00:00:00.000Z",
        "1970-01-01T00:00:00.000Z",
    ):
        assert rfc3339_ms(value) == _reference_ms(value) == _cached_ms(value) is not None
    for value in (
        "2100-02-29T00:00:00.000Z",
        "2023-02-29T00:00:00.000Z",
        "2026-04-31T00:00:00.000Z",
    ):
        assert rfc3339_ms(value) is None
