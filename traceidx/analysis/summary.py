"""A small summary of a dataset's recent spend, for readers that must not load a data library.

``summary.json`` beside the manifest holds, for the manifest it was computed from (its size and
modification time): each session of the last `DAYS` days (runtime, native id → cost, tokens,
first and last call) and the cost and tokens of each UTC hour of those days. `traceidx
statusline` reads it with the standard library alone; when the manifest changed it asks for
a fresh one (``traceidx summarize``, run in the background) and shows the last one meanwhile.
`traceidx build` and `traceidx watch` leave a current one after they publish (`refresh`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: the file beside the manifest
NAME = "summary.json"
#: how far back the summary reaches (a week's cost needs up to 7 days)
DAYS = 8


def manifest_stamp(dataset: Path) -> list[int] | None:
    """The manifest's size and modification time: what a summary is current for."""
    try:
        st = (dataset / "manifest.json").stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def compute(dataset: Path, days: int = DAYS) -> dict[str, Any]:
    """The summary of a local dataset's last `days` days (its views, through DuckDB)."""
    from traceidx.analysis.query import connect

    stamp = manifest_stamp(dataset)
    con = connect(dataset)
    try:
        since = f"now() - INTERVAL {int(days)} DAY"
        calls = f"""
            SELECT s.runtime, s.native_id, c.cost_usd, c.usage.input + c.usage.output AS tokens,
                   epoch_ms(c.occurred_at) AS called_ms
            FROM model_calls AS c JOIN sessions AS s USING (session_id)
            WHERE c.usage IS NOT NULL AND c.occurred_at >= {since}"""
        sessions = con.execute(
            f"SELECT runtime || '/' || native_id, sum(cost_usd), sum(tokens)::BIGINT, "
            f"min(called_ms), max(called_ms) FROM ({calls}) GROUP BY 1"
        ).fetchall()
        hours = con.execute(
            f"SELECT (called_ms // 3600000)::BIGINT, sum(cost_usd), sum(tokens)::BIGINT "
            f"FROM ({calls}) GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    return {
        "manifest": stamp,
        "sessions": {
            key: [cost, tokens, first, last] for key, cost, tokens, first, last in sessions
        },
        "hours": {str(hour): [cost, tokens] for hour, cost, tokens in hours},
    }


def write(dataset: Path) -> Path:
    """Compute and write the summary (atomically, private as the dataset)."""
    return write_beside(dataset, NAME, compute(dataset))


def current(dataset: Path) -> bool:
    """Whether the summary was computed from the manifest that is current now."""
    data = read(dataset)
    stamp = manifest_stamp(dataset)
    return stamp is not None and data is not None and data.get("manifest") == stamp


def refresh(dataset: Path) -> Path | None:
    """Write the summary unless it is current (what a build leaves, so that a statusline has
    numbers on its first call); None when it was current already, or nothing is published."""
    if manifest_stamp(dataset) is None or current(dataset):
        return None
    return write(dataset)


def read(dataset: Path) -> dict[str, Any] | None:
    """The summary as written, or None when there is none (or it cannot be read)."""
    return read_beside(dataset, NAME)


def write_beside(dataset: Path, name: str, value: dict[str, Any]) -> Path:
    """Write a JSON object beside the manifest, atomically and private as the dataset."""
    target = dataset / name
    partial = dataset / f".{name}.{os.getpid()}.partial"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
        json.dump(value, sink, separators=(",", ":"))
    partial.replace(target)
    return target


def read_beside(dataset: Path, name: str) -> dict[str, Any] | None:
    """A JSON object written beside the manifest; None when absent or unreadable."""
    try:
        value = json.loads((dataset / name).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
