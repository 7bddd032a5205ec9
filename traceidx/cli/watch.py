"""`traceidx watch`: keep a dataset in step with the trace roots while the agents write.

Changes under the roots (the `watchfiles` package, debounced) start a build of the same paths:
each publish is the same atomic generation a `traceidx build` publishes, and a build that
finds nothing changed publishes nothing. SIGINT and SIGTERM end the watch between builds (a
build in progress finishes first); a crash leaves what a crashed build leaves, the previous
generation intact. One line per build that published.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from traceidx.sources.discover import TRACE_SUFFIXES


def _relevant(path: str) -> bool:
    """Whether a changed path can be a trace (or an OpenCode database and its WAL)."""
    name = Path(path).name
    return name.endswith((*TRACE_SUFFIXES, ".json", ".db", ".db-wal"))


def describe(report: Any) -> str:
    """The line a publish is shown as."""
    actions = ", ".join(f"{n:,} {a}" for a, n in sorted(report.actions.items())) or "no change"
    totals = report.totals()
    return (
        f"{time.strftime('%H:%M:%S')} published generation {report.generation}: {actions}; "
        f"the dataset holds {totals.get('dataset_sources', 0):,} sources"
    )


def watch(
    roots: list[Path],
    run_build: Callable[[], Any],
    say: Callable[[str], None],
    *,
    debounce_ms: int = 1000,
    stop: threading.Event | None = None,
) -> int:
    """Build once, then again after every debounced batch of changes under `roots`, until
    SIGINT/SIGTERM (or `stop`); the exit status of the last build."""
    from watchfiles import watch as changes_of

    stop = stop or threading.Event()

    def finish(signum: int, frame: FrameType | None) -> None:
        stop.set()  # the loop ends after the build in progress, between publishes

    previous = {s: signal.signal(s, finish) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        report = run_build()
        if report.changed:
            say(describe(report))
        status = int(report.exit_code)
        watched = [str(r) for r in roots if r.exists()]
        for batch in changes_of(
            *watched,
            stop_event=stop,
            debounce=debounce_ms,
            watch_filter=lambda _change, path: _relevant(path),
            raise_interrupt=False,
            rust_timeout=500,
            yield_on_timeout=False,
        ):
            if stop.is_set():
                break
            if not batch:
                continue
            report = run_build()
            status = int(report.exit_code)
            if report.changed:
                say(describe(report))
        return status
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
