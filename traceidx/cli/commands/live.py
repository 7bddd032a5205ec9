"""Running beside the agents: `watch`, `mcp`, `summarize` and `statusline`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from traceidx.cli.commands import EXIT_OK
from traceidx.errors import UsageError


def cmd_watch(args: argparse.Namespace) -> int:
    from traceidx.cli.commands.build import leave_summary
    from traceidx.cli.process import owns_arrow
    from traceidx.cli.watch import watch
    from traceidx.pipeline.job import build
    from traceidx.projection.ingest import Settings
    from traceidx.sources.discover import default_roots
    from traceidx.store.dataset import check_folder

    if not isinstance(args.dataset, Path):
        raise UsageError("watch: keeps a local dataset (a folder) in step, not object storage")
    check_folder(args.dataset)  # before watching: a folder that is no dataset is left alone
    owns_arrow()
    paths: list[Path] = [Path(p).expanduser() for p in args.paths]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder; name trace files or folders")
    roots = paths or [r for found in default_roots().values() for r in found if r.exists()]
    if not roots:
        raise UsageError("no trace folders at the default roots; name folders to watch")
    settings = Settings()

    def run() -> Any:
        report = build(list(roots), args.dataset, settings=settings, jobs=args.jobs)
        leave_summary(args.dataset)  # statusline's numbers follow each publish
        return report

    sys.stderr.write(f"watching {len(roots)} folder(s); Ctrl-C or SIGTERM stops\n")
    return watch(roots, run, lambda text: print(text, flush=True), debounce_ms=args.debounce_ms)


def cmd_mcp(args: argparse.Namespace) -> int:
    from traceidx.cli.mcpserver import limits
    from traceidx.cli.mcpserver import main as serve

    if not isinstance(args.dataset, Path):
        raise UsageError("mcp: serves a local dataset (a folder), not object storage")
    return serve(args.dataset, limits(args.timeout, args.memory_limit))


def cmd_summarize(args: argparse.Namespace) -> int:
    from traceidx.analysis import rollup, summary

    if not isinstance(args.dataset, Path):
        raise UsageError("summarize: the summary is kept beside a local dataset only")
    for path in (summary.write(args.dataset), rollup.write(args.dataset)):
        sys.stdout.write(f"wrote {path}\n")
    return EXIT_OK


def cmd_statusline(args: argparse.Namespace) -> int:
    from traceidx.cli.statusline import main as statusline

    return statusline(["--dataset", str(args.dataset)])
