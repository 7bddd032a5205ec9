"""Sending the dataset elsewhere: `export otel` (OTLP traces to a file or an endpoint)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from traceidx.cli.commands import EXIT_OK
from traceidx.cli.output import err
from traceidx.errors import UsageError

_BAR = 30


class _Progress:
    """A progress bar on stderr: redrawn in place on a terminal, else a line per tenth."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.total = 0
        self.done = 0
        self.shown = -1

    def started(self, totals: dict[str, int]) -> None:
        self.total = sum(totals.values())
        if not self.quiet:
            parts = ", ".join(f"{n} {kind.replace('_', ' ')}s" for kind, n in totals.items())
            sys.stderr.write(f"exporting {self.total} spans: {parts}\n")

    def advance(self, spans: int) -> None:
        self.done += spans
        if self.quiet or not self.total:
            return
        share = min(self.done / self.total, 1.0)
        tenth = int(share * 10)
        if not self.tty and tenth == self.shown and self.done < self.total:
            return
        self.shown = tenth
        filled = int(share * _BAR)
        bar = "#" * filled + "-" * (_BAR - filled)
        end = "\n" if self.done >= self.total or not self.tty else ""
        sys.stderr.write(f"\r[{bar}] {self.done}/{self.total} spans{end}")
        sys.stderr.flush()


def cmd_export(args: argparse.Namespace) -> int:
    from traceidx.analysis import otelsink
    from traceidx.analysis.otel import export, require
    from traceidx.analysis.otelspans import Scope
    from traceidx.analysis.reports import params

    require()
    p = params(
        since=args.since,
        until=args.until,
        timezone=args.timezone,
        runtimes=args.runtime,
        models=args.model,
        prices=args.prices,
    )
    url = otelsink.endpoint(args.endpoint) if args.output is None else None
    if args.output is not None and args.endpoint:
        raise UsageError("--output and --endpoint: give one place to export to")
    if args.output is None and url is None:
        raise UsageError(
            "export otel: give --output FILE (OTLP/JSON lines) or --endpoint URL (OTLP/HTTP), "
            "or set OTEL_EXPORTER_OTLP_ENDPOINT"
        )
    destination = str(args.output.resolve()) if args.output is not None else str(url)
    sources: list[int] | None = None
    key = ""
    if args.since_last:
        if not isinstance(args.dataset, Path):
            raise UsageError("--since-last keeps its state beside a local dataset's manifest")
        key = json.dumps(
            {
                "to": destination,
                "since": args.since,
                "until": args.until,
                "timezone": p.timezone,
                "runtimes": sorted(args.runtime or []),
                "models": sorted(args.model or []),
                "projects": sorted(args.project or []),
                "content": args.content,
            },
            sort_keys=True,
        )
        current, settings = otelsink.signatures(args.dataset)
        sources = otelsink.changed_sources(args.dataset, key, current, settings)
    scope = Scope(
        projects=tuple(args.project or ()),
        sources=None if sources is None else tuple(sources),
    )
    sink: Any = (
        otelsink.FileSink(args.output, jobs=args.jobs or os.cpu_count() or 1)
        if args.output is not None
        else otelsink.HttpSink(str(url))
    )
    progress = _Progress(args.quiet)
    try:
        done = export(
            args.dataset,
            sink,
            p,
            scope,
            content=args.content,
            batch=args.batch,
            started=progress.started,
            progress=progress.advance,
        )
    except BaseException:
        if isinstance(sink, otelsink.FileSink):
            sink.abandon()
        raise
    if args.since_last:
        otelsink.remember(args.dataset, key, current, settings)
    rejected = getattr(sink, "rejected", 0)
    if rejected:
        err(f"{destination}: the endpoint rejected {rejected} spans (it said so in its reply)")
    spans = sum(done.spans.values())
    where = f"wrote {args.output}" if args.output is not None else f"sent to {url}"
    sys.stdout.write(f"{where}: {spans} spans in {done.traces} traces, {done.requests} requests\n")
    return EXIT_OK
