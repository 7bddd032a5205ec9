"""Prices of model calls: genai-prices entries (or a user's overrides) resolved to rate tables.

A call is priced by the entry its (model, provider) matches:

* an override (``--prices FILE``, else ``$TRACEIDX_PRICES``, else
  ``$XDG_CONFIG_HOME/traceidx/prices.json``): ``{"models": [{"pattern": REGEX, "input": …,
  "cached_input": …, "cache_write": …, "output": …}]}`` in USD per million tokens, the first
  entry whose pattern matches the model (``re.search``) winning; overrides take precedence;
* else genai-prices (the version pinned in pyproject.toml), looked up under the provider the
  trace states if genai-prices knows it, else the model family's provider (claude →
  anthropic, gpt / o-series → openai, deepseek → deepseek), else by the model name alone.

A matched entry becomes rows of `RATE_COLUMNS`: per price period (genai-prices' conditional
prices, in order: a start date or a UTC time-of-day window) and per long-context band (the
band whose ``above`` is the largest below the call's input tokens), USD per token for the
uncached input, cache reads, cache writes and output, plus a fixed USD per call. The rates
are read from genai-prices itself (its price of one probe call per member), so every unit it
knows (a missing cache rate means cache reads cost input, say) is applied as it applies it.
A model nothing matches is unpriced.

Resolved entries are cached per genai-prices version (``$XDG_CACHE_HOME/traceidx``), so a
report imports genai-prices only for a model it has not seen.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from traceidx.errors import ReportError

if TYPE_CHECKING:
    import duckdb

#: the provider genai-prices files a model family under (by model-name prefix)
FAMILY_PROVIDERS: Final = (
    (re.compile(r"claude"), "anthropic"),
    (re.compile(r"gpt|o\d"), "openai"),
    (re.compile(r"deepseek"), "deepseek"),
)

#: columns of one rate row (USD per token, and per call)
RATE_COLUMNS: Final = (
    "ordinal",  # the period's place in the entry's price list (the last active one applies)
    "kind",  # always | from_date | time_of_day
    "start_date",  # from_date: first UTC date
    "start_s",  # time_of_day: UTC seconds of the day, window start (inclusive)
    "end_s",  # time_of_day: window end (exclusive; before the start: the window wraps)
    "above",  # the band applies when the call's input tokens exceed this (-1: base band)
    "per_call",
    "input",
    "cached",
    "cache_write",
    "output",
)

#: bump when the cached rows change shape or meaning
_CACHE_FORMAT: Final = 1
_PROBE: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class Match:
    """The entry a (model, provider) pair matched: where from, its id, and its rate rows."""

    source: str  # "genai-prices" or "override"
    provider: str | None  # the provider of the entry (genai-prices)
    entry: str  # genai-prices model id, or the override's pattern
    rates: tuple[tuple[Any, ...], ...]


# -- overrides ----------------------------------------------------------------------------------


def override_file(explicit: Path | None = None) -> Path | None:
    """The user's price file: `explicit`, else $TRACEIDX_PRICES, else the config file."""
    if explicit is not None:
        return explicit
    named = os.environ.get("TRACEIDX_PRICES")
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    path = Path(config) / "traceidx" / "prices.json"
    return path if path.is_file() else None


def load_overrides(explicit: Path | None = None) -> list[dict[str, Any]]:
    """The override entries in precedence order (checked: a bad one is a ReportError)."""
    path = override_file(explicit)
    if path is None:
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
        entries = data["models"]
        if not isinstance(entries, list):
            raise TypeError("'models' is not a list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReportError(
            f"{path}: cannot read prices ({exc}); expected "
            '{"models": [{"pattern", "input", "cached_input", "cache_write", "output"}]}'
        ) from exc
    for entry in entries:
        try:
            re.compile(entry["pattern"])
            for key in ("input", "cached_input", "cache_write", "output"):
                if float(entry[key]) < 0:
                    raise ValueError(f"{key} is negative")
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise ReportError(f"{path}: bad price entry {entry!r}: {exc}") from exc
    return entries


def _override_match(model: str, overrides: list[dict[str, Any]]) -> Match | None:
    for entry in overrides:
        if re.search(entry["pattern"], model):
            per_token = [float(entry[k]) / 1e6 for k in ("input", "cached_input", "cache_write")]
            row = (0, "always", None, None, None, -1, 0.0, *per_token, float(entry["output"]) / 1e6)
            return Match("override", None, entry["pattern"], (row,))
    return None


# -- genai-prices -------------------------------------------------------------------------------


def genai_prices_version() -> str:
    """The installed genai-prices version, without importing it: from the name of its
    metadata folder beside the package (listing the installed distributions costs 50 ms),
    else from the metadata API."""
    from importlib.util import find_spec

    spec = find_spec("genai_prices")
    if spec is not None and spec.origin is not None:
        for info in Path(spec.origin).parent.parent.glob("genai_prices-*.dist-info"):
            return info.name.removeprefix("genai_prices-").removesuffix(".dist-info")
    from importlib.metadata import version

    return version("genai-prices")


def _candidates(model: str, provider: str | None) -> list[str | None]:
    """Provider ids to look the model up under, in order (None: by the model name alone)."""
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    out: list[str | None] = []
    if provider:
        known = find_provider_by_id(get_snapshot().providers, provider)
        if known is not None:
            out.append(known.id)
    lowered = model.lower()
    for pattern, family in FAMILY_PROVIDERS:
        if pattern.match(lowered) and family not in out:
            out.append(family)
            break
    out.append(None)
    return out


def _lookup(model: str, provider: str | None) -> Match | None:
    """The genai-prices entry of a (model, provider) pair, as rate rows (None if unknown)."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    for candidate in _candidates(model, provider):
        try:
            found, info = snapshot.find_provider_model(model, None, candidate, None)
        except LookupError:
            continue
        rates = _rates(info)
        return None if rates is None else Match("genai-prices", found.id, info.id, rates)
    return None


def _rates(info: Any) -> tuple[tuple[Any, ...], ...] | None:
    """Rate rows of a genai-prices model entry (None if it cannot price token usage)."""
    from genai_prices import types

    periods = (
        info.prices
        if isinstance(info.prices, list)
        else [types.ConditionalPrice(prices=info.prices)]
    )
    rows: list[tuple[Any, ...]] = []
    for ordinal, period in enumerate(periods):
        constraint = period.constraint
        when: tuple[Any, ...] = ("always", None, None, None)
        if isinstance(constraint, types.StartDateConstraint):
            when = ("from_date", constraint.start_date.isoformat(), None, None)
        elif isinstance(constraint, types.TimeOfDateConstraint):
            when = (
                "time_of_day",
                None,
                _utc_seconds(constraint.start_time),
                _utc_seconds(constraint.end_time),
            )
        elif constraint is not None:
            return None
        for above, size in _bands(period.prices):
            band = _probe(period.prices, size)
            if band is None:
                return None
            rows.append((ordinal, *when, above, *band))
    return tuple(rows)


def _utc_seconds(value: Any) -> int:
    """Seconds of the UTC day of a time of day (a naive one is UTC)."""
    from datetime import UTC, date, datetime

    moment = datetime.combine(date(1970, 1, 1), value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    return utc.hour * 3600 + utc.minute * 60 + utc.second


def _bands(prices: Any) -> list[tuple[int, int]]:
    """(above, a probe's input tokens inside the band) of the base band (above -1) and of
    every tier start of any member of a price set (a tier applies above its start; a tier
    from 0 leaves the base band to calls of no input, priced by the tier's rates here)."""
    from genai_prices.types import TieredPrices

    values = vars(prices).values()
    starts = sorted({t.start for v in values if isinstance(v, TieredPrices) for t in v.tiers})
    base = min(starts[0], _PROBE) if starts else _PROBE
    return [(-1, base or 1), *[(start, start + 1) for start in starts if start > 0]]


def _probe(prices: Any, size: int) -> tuple[float, ...] | None:
    """(per call, input, cached, cache write, output) USD per token, as genai-prices prices
    probe calls of `size` input tokens (None if it refuses them)."""
    from genai_prices import Usage

    def price(**usage: int) -> Decimal:
        return Decimal(prices.calc_price(Usage(**usage))["total_price"])

    try:
        fixed = price()
        plain = price(input_tokens=size)
        rates = (
            plain,
            price(input_tokens=size, cache_read_tokens=size),
            price(input_tokens=size, cache_write_tokens=size),
            price(input_tokens=size, output_tokens=size) - plain + fixed,
        )
    except (ValueError, ArithmeticError):
        return None
    return (float(fixed), *(float((r - fixed) / size) for r in rates))


# -- resolution with a per-version cache --------------------------------------------------------


def _cache_file(version: str) -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "traceidx" / f"genai-prices-{version}-{_CACHE_FORMAT}.json"


def _key(model: str, provider: str | None) -> str:
    return f"{model}\x1f{provider or ''}"


def resolve(
    pairs: list[tuple[str, str | None]], overrides: list[dict[str, Any]]
) -> dict[tuple[str, str | None], Match | None]:
    """The match of each (model, provider) pair (None: unpriced)."""
    out: dict[tuple[str, str | None], Match | None] = {}
    rest = []
    for model, provider in pairs:
        match = _override_match(model, overrides)
        if match is not None:
            out[model, provider] = match
        else:
            rest.append((model, provider))
    if not rest:
        return out
    path = _cache_file(genai_prices_version())
    try:
        cached: dict[str, Any] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        cached = {}
    fresh = False
    for model, provider in rest:
        key = _key(model, provider)
        if key not in cached:
            match = _lookup(model, provider)
            cached[key] = None if match is None else [match.provider, match.entry, match.rates]
            fresh = True
        entry = cached[key]
        out[model, provider] = (
            None
            if entry is None
            else Match("genai-prices", entry[0], entry[1], tuple(tuple(r) for r in entry[2]))
        )
    if fresh:
        _store(path, cached)
    return out


def _store(path: Path, cached: dict[str, Any]) -> None:
    """Write the cache (atomically; a cache that cannot be written is not an error)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(cached), "utf-8")
        temporary.replace(path)
    except OSError:
        pass


def load(con: duckdb.DuckDBPyConnection, override: Path | None = None) -> None:
    """Temp tables ``price_matches`` (model, provider, source, matched_provider, entry) and
    ``price_rates`` (model, provider, `RATE_COLUMNS`) for every (model, provider) pair of the
    dataset's billed model calls (those with usage)."""
    overrides = load_overrides(override)
    pairs = con.execute(
        "SELECT DISTINCT model, provider FROM _model_calls "
        "WHERE model IS NOT NULL AND usage IS NOT NULL"
    ).fetchall()
    matches = resolve([(m, p) for m, p in pairs], overrides)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE price_matches (model VARCHAR, provider VARCHAR, "
        "source VARCHAR, matched_provider VARCHAR, entry VARCHAR)"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE price_rates (model VARCHAR, provider VARCHAR, "
        "ordinal INTEGER, kind VARCHAR, start_date DATE, start_s INTEGER, end_s INTEGER, "
        "above BIGINT, per_call DOUBLE, input DOUBLE, cached DOUBLE, cache_write DOUBLE, "
        "output DOUBLE)"
    )
    found = [(k, m) for k, m in matches.items() if m is not None]
    _insert(con, "price_matches", [[*k, m.source, m.provider, m.entry] for k, m in found])
    _insert(con, "price_rates", [[*k, *row] for k, m in found for row in m.rates])


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[list[Any]]) -> None:
    """Insert rows in one statement (a statement per row costs a millisecond each)."""
    if rows:
        marks = "(" + ", ".join("?" * len(rows[0])) + ")"
        values = [value for row in rows for value in row]
        con.execute(f"INSERT INTO {table} VALUES {', '.join([marks] * len(rows))}", values)
