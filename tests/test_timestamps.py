"""Runtime timestamps to epoch milliseconds: exact, floored, UTC when no zone is written."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from traceidx.timestamps import epoch_number_ms, rfc3339_ms

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
