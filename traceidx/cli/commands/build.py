"""Building and keeping the dataset: `build`, `prune`, `status` and `demo`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.cli.commands import EXIT_FAILED, EXIT_OK, Reply
from traceidx.cli.output import Document, Rows, emit, err, totals_row
from traceidx.errors import ReportError, UsageError
from traceidx.storage import location
from traceidx.store.manifest import Manifest

if TYPE_CHECKING:  # a Store is made only where a command reads the dataset
    from traceidx.store.base import Store


def cmd_build(args: argparse.Namespace) -> Reply:
    from traceidx.cli.process import owns_arrow
    from traceidx.pipeline.job import build
    from traceidx.projection.ingest import Settings
    from traceidx.sources.rowsource import names_session

    owns_arrow()

    runtimes = frozenset(args.runtime) if args.runtime else None
    paths = [location(p) for p in args.paths] if args.paths else None
    dataset = args.dataset
    if isinstance(dataset, Path) and dataset.exists() and not dataset.is_dir():
        raise UsageError(
            f"{dataset}: a file, not a folder; --dataset names the dataset's folder (new or "
            "existing)"
        )
    missing = [
        p
        for p in paths or []
        if isinstance(p, Path) and not p.exists() and not names_session(str(p))
    ]
    if missing:  # nothing is read, nothing published
        raise UsageError(
            f"{missing[0]}: no such file or folder; name existing trace files or folders (or "
            "none, for the runtimes' own folders)"
        )
    settings = Settings(text_limit=args.text_limit, runtimes=runtimes, redact=args.redact)
    if args.origin is not None and not args.origin.strip():
        raise UsageError("--origin: empty name; name the machine or person the traces came from")
    if args.redact:
        from traceidx.domain.redact import detectors

        detectors()  # refuses at once when detect-secrets is not installed
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, result: Any) -> None:
        if result.state == "failed":
            sys.stderr.write(f"\rfailed: {result.locator}: {result.reason}\n")
        if tty or done == total or done % 500 == 0:
            end = "\n" if done == total else ""
            sys.stderr.write(f"\rsyncing sources {done}/{total}{end}")
            sys.stderr.flush()

    if paths is None:
        from traceidx.pipeline.plan import default_paths
        from traceidx.sources.discover import default_roots

        if not default_paths(settings):
            looked = ", ".join(str(r) for roots in default_roots().values() for r in roots)
            err(f"no trace folders at the default roots ({looked}); name files or folders to index")
    report = build(
        paths,
        args.dataset,
        settings=settings,
        jobs=args.jobs,
        progress=progress,
        rebuild=args.rebuild,
        engine=args.engine,
        ray_address=args.ray_address,
        origin=args.origin.strip() if args.origin else None,
    )
    for problem in report.problems:
        err(f"{problem}; check the path")
    for ignored in report.ignored:
        err(f"{ignored.locator}: {ignored.what}, not a trace file; skipped without opening it")
    for line in report.damaged:
        err(line)
    for locator in report.lost:
        err(
            f"{locator}: its facts lived in a damaged part and the file is gone or unreadable; "
            "they are lost from the dataset (restore the file and build again to get them back)"
        )
    if report.tightened:
        err(
            f"{args.dataset}: {report.tightened} paths were readable by other users; "
            "made private (folders 0700, files 0600)"
        )
    summary = report.summary(args.dataset)
    for warning in summary["warnings"]:
        err(warning)
    if isinstance(args.dataset, Path):
        leave_summary(args.dataset)
    return Reply(Document(summary, summary_text(summary), indent=1), report.exit_code)


def leave_summary(dataset: Path) -> None:
    """Leave the summary a statusline reads current for the dataset's published generation
    (a folder that cannot take it is said so in one line; the build stands)."""
    from traceidx.analysis import summary

    try:
        summary.refresh(dataset)
    except OSError as exc:
        err(
            f"{dataset / summary.NAME}: not written ({exc.strerror or exc}); "
            "`traceidx summarize` writes it"
        )


def summary_text(s: dict[str, Any]) -> str:
    """A build's summary (`BuildReport.summary`) as people read it."""
    lines: list[str] = []
    verb = "published generation" if s["published"] else "unchanged at generation"
    lines.append(f"dataset {s['dataset']}: {verb} {s['generation']}")
    actions = ", ".join(f"{n} {a}" for a, n in s["actions"].items()) or "nothing to do"
    if s.get("resumed"):
        actions += f" ({s['resumed']} resumed from a checkpoint)"
    lines.append(f"this run: {actions}")
    lines.append(
        f"sources seen: {s['indexed']} indexed, {s['skipped']} skipped, {s['failed']} failed; "
        f"the dataset holds {s['dataset_sources']} "
        f"({s['missing']} missing on disk, {s['bytes'] / 1e6:.1f} MB of complete lines)"
    )
    lines.append(
        f"facts: {s['sessions']} sessions, {s['loops']} loops, {s['items']} items, "
        f"{s['records']} records"
    )
    if s["copies"]:
        found = f", {len(s['new_copies']):,} found by this run" if s["new_copies"] else ""
        lines.append(f"copies counted once: {s['copies']:,} sources copy another's records{found}")
    if s["redacted_by_type"]:
        kinds = ", ".join(f"{k} {v:,}" for k, v in s["redacted_by_type"].items())
        lines.append(f"redacted: {s['redacted']:,} secrets replaced in published text ({kinds})")
    for reason, count in sorted(s["skipped_reasons"].items()):
        lines.append(f"  skipped {count}: {reason}")
    for locator, reason in sorted(s["failed_sources"].items()):
        lines.append(f"  failed: {locator}: {reason}")
    if s["unknown_record_types"]:
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(s["unknown_record_types"].items()))
        lines.append(f"  unknown record types kept as records only: {kinds}")
    return "".join(line + "\n" for line in lines)


def _manifest(store: Store, dataset: Path | str) -> Manifest:
    manifest = store.read()
    if manifest is None:
        raise UsageError(f"{dataset}: no dataset here yet; run `traceidx build` first")
    return manifest


def cmd_prune(args: argparse.Namespace) -> Reply:
    from traceidx.pipeline.job import prune

    report = prune(args.dataset, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    removed = report.removed
    text = (
        f"{verb} the facts of {len(removed)} vanished source{'s' if len(removed) != 1 else ''}; "
        f"generation {report.generation}\n" + "".join(f"  {locator}\n" for locator in removed)
    )
    return Reply(Rows(["removed"], [(loc,) for loc in removed], human=lambda _: text))


def cmd_status(args: argparse.Namespace) -> Reply:
    from traceidx.store.open import reader

    store = reader(args.dataset)
    manifest = _manifest(store, args.dataset)
    # on object storage sizes come from one listing, and access is the bucket policy's
    damage, wide = store.check_parts(manifest, checksums=True), store.exposed()
    for d in damage:
        err(d.line(args.dataset))
    if wide:
        err(
            f"{args.dataset}: {len(wide)} paths are readable by other users (e.g. {wide[0]}); "
            "the next `traceidx build` makes them private"
        )
    rows = [(rt, st, n) for (rt, st), n in sorted(manifest.source_states().items())]
    heading = (
        f"dataset {args.dataset}",
        f"generation {manifest.generation} published {manifest.published_at}",
    )
    result = Rows(["runtime", "state", "sources"], rows, heading=heading)
    return Reply(result, EXIT_FAILED if damage else EXIT_OK)


#: the reports `demo` shows: title, report, its parameters and the columns kept (None: all)
_DEMO_REPORTS: tuple[tuple[str, str, dict[str, Any], list[str] | None], ...] = (
    ("token usage by month, runtime and model", "usage", {"period": "month"}, None),
    (
        "models side by side",
        "models",
        {},
        [
            "model",
            "runtimes",
            "loops",
            "tokens_per_loop_median",
            "cache_hit_share",
            "tool_calls_per_loop",
            "tool_failure_rate",
            "cost_usd",
        ],
    ),
    ("the slowest tool calls", "slowest", {"limit": 5}, None),
)


def cmd_demo(args: argparse.Namespace) -> int:
    from traceidx.analysis.htmlreport import write as write_html
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import params, report_detail, run_report
    from traceidx.demo import write_demo
    from traceidx.pipeline.job import build
    from traceidx.store.dataset import check_folder

    if args.dataset_given and isinstance(args.dataset, Path):
        check_folder(args.dataset)  # before the demo traces are written
    corpus = Path(args.corpus or tempfile.mkdtemp(prefix="traceidx-demo-"))
    written = write_demo(corpus)
    counts = ", ".join(f"{len(paths)} {runtime}" for runtime, paths in written.items())
    sys.stderr.write(f"demo corpus: {counts} trace files in {corpus}\n")
    dataset = args.dataset if args.dataset_given else corpus / "dataset"
    report = build([corpus / runtime for runtime in written], dataset)
    t = report.totals()
    sys.stdout.write(
        f"built {dataset}: {t['indexed']} sources, {t['sessions']} sessions, {t['loops']} loops, "
        f"{t['items']} items\n"
    )
    con = connect(dataset)
    for title, name, extra, keep in _DEMO_REPORTS:
        rel = run_report(con, name, params(timezone="UTC", **extra))
        if keep is not None:
            rel = rel.select(", ".join(keep))
        columns, data = list(rel.columns), rel.fetchall()
        total = totals_row(columns, data, "total") if name == "usage" else None
        sys.stdout.write(f"\n{title} (traceidx report {name}):\n")
        emit(Rows(columns, data, total, report_detail(name)), "table")
    try:
        page = write_html(con, params(timezone="UTC", period="week"), corpus / "report.html")
        sys.stdout.write(f"\nthe HTML report (charts and tables, one file): {page}\n")
    except ReportError as exc:  # the html extra is not installed
        err(f"no HTML report: {exc}")
    sys.stdout.write(
        f"\nnext: traceidx report tools --dataset {dataset}\n"
        f'      traceidx sql --dataset {dataset} "SELECT * FROM loop_usage LIMIT 5"\n'
    )
    return report.exit_code
