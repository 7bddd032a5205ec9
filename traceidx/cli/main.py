"""The `traceidx` command line: a thin layer over build, query and the dataset manifest.

Exit status: 0 success (every source indexed or deliberately skipped); 1 at least one source
failed or a query/inspection failed; 2 usage error (bad flags, missing dataset); 3 the dataset
is locked by another build. Errors are one line on stderr: where, what, and the next step.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx import __version__, compiled, runtimes
from traceidx.analysis.reports import DEFAULT_GROUP_BY, DIMENSIONS, PERIODS, REPORTS
from traceidx.cli.output import cell, print_rows, terminal_width, totals_row
from traceidx.cli.process import configure
from traceidx.errors import DamagedPart, DatasetLocked, ReportError, TraceidxError, UsageError
from traceidx.storage import default_dataset, location
from traceidx.store.manifest import Manifest

if TYPE_CHECKING:  # a Store is made only where a command reads the dataset
    from traceidx.store.base import Store

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_LOCKED = 0, 1, 2, 3


class _RegisteredRuntimes:
    """The registered runtimes as argparse choices, listed only when a command names a runtime
    (listing them loads every adapter)."""

    def __contains__(self, name: object) -> bool:
        return name in runtimes.names()

    def __iter__(self) -> Iterator[str]:
        return iter(runtimes.names())


_RUNTIMES: Any = _RegisteredRuntimes()
_WIDE = "show every column whole (tables fit 100 columns, or the terminal, by default)"
#: the formats a table is fitted in (where --wide applies)
_FITTED = ("table", "markdown")


def _err(message: str) -> None:
    sys.stderr.write(f"traceidx: {message}\n")


# -- commands ---------------------------------------------------------------------------------


def cmd_build(args: argparse.Namespace) -> int:
    from traceidx.pipeline.job import build
    from traceidx.projection.ingest import Settings
    from traceidx.sources.rowsource import names_session

    runtimes = frozenset(args.runtime) if args.runtime else None
    paths = [_location(p) for p in args.paths] if args.paths else None
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
            _err(
                f"no trace folders at the default roots ({looked}); name files or folders to index"
            )
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
        _err(f"{problem}; check the path")
    for ignored in report.ignored:
        _err(f"{ignored.locator}: {ignored.what}, not a trace file; skipped without opening it")
    for line in report.damaged:
        _err(line)
    for locator in report.lost:
        _err(
            f"{locator}: its facts lived in a damaged part and the file is gone or unreadable; "
            "they are lost from the dataset (restore the file and build again to get them back)"
        )
    if report.tightened:
        _err(
            f"{args.dataset}: {report.tightened} paths were readable by other users; "
            "made private (folders 0700, files 0600)"
        )
    warnings = [w for r in report.results for w in r.warnings]
    for warning in warnings:
        _err(warning)
    totals = report.totals()
    summary = {
        "dataset": str(args.dataset),
        "generation": report.generation,
        "published": report.changed,
        **totals,
        "actions": dict(sorted(report.actions.items())),
        "skipped_reasons": dict(report.skip_reasons()),
        "failed_sources": {r.locator: r.reason for r in report.results if r.state == "failed"},
        "ignored": {i.locator: i.what for i in report.ignored},
        "damaged_parts": report.damaged,
        "lost_sources": report.lost,
        "tightened_paths": report.tightened,
        "warnings": warnings,
        "unknown_record_types": dict(
            sum((Counter(r.unknown_types) for r in report.results), Counter())
        ),
        "new_copies": dict(sorted(report.copies.items())),
        "redacted_by_type": dict(sorted(report.redacted().items())),
    }
    if args.format == "json":
        json.dump(summary, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        _print_build_summary(summary)
    return report.exit_code


def _print_build_summary(s: dict[str, Any]) -> None:
    w = sys.stdout.write
    verb = "published generation" if s["published"] else "unchanged at generation"
    w(f"dataset {s['dataset']}: {verb} {s['generation']}\n")
    actions = ", ".join(f"{n} {a}" for a, n in s["actions"].items()) or "nothing to do"
    if s.get("resumed"):
        actions += f" ({s['resumed']} resumed from a checkpoint)"
    w(f"this run: {actions}\n")
    w(
        f"sources seen: {s['indexed']} indexed, {s['skipped']} skipped, {s['failed']} failed; "
        f"the dataset holds {s['dataset_sources']} "
        f"({s['missing']} missing on disk, {s['bytes'] / 1e6:.1f} MB of complete lines)\n"
    )
    w(
        f"facts: {s['sessions']} sessions, {s['loops']} loops, {s['items']} items, "
        f"{s['records']} records\n"
    )
    if s["copies"]:
        found = f", {len(s['new_copies']):,} found by this run" if s["new_copies"] else ""
        w(f"copies counted once: {s['copies']:,} sources copy another's records{found}\n")
    if s["redacted_by_type"]:
        kinds = ", ".join(f"{k} {v:,}" for k, v in s["redacted_by_type"].items())
        w(f"redacted: {s['redacted']:,} secrets replaced in published text ({kinds})\n")
    for reason, count in sorted(s["skipped_reasons"].items()):
        w(f"  skipped {count}: {reason}\n")
    for locator, reason in sorted(s["failed_sources"].items()):
        w(f"  failed: {locator}: {reason}\n")
    if s["unknown_record_types"]:
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(s["unknown_record_types"].items()))
        w(f"  unknown record types kept as records only: {kinds}\n")


def _location(text: str) -> Path | str:
    """A local path, or a URI of a filesystem pyarrow.fs supports (traceidx.storage)."""
    return location(text)


def _manifest(store: Store, dataset: Path | str) -> Manifest:
    manifest = store.read()
    if manifest is None:
        raise UsageError(f"{dataset}: no dataset here yet; run `traceidx build` first")
    return manifest


def _refuse_options_that_do_not_apply(args: argparse.Namespace) -> None:
    """A report option given to a report that does not apply it is a usage error, not a
    silent no-op."""
    from traceidx.analysis.reports import report_options

    applies = report_options(args.name)
    for option in ("limit", "period", "group_by"):
        if getattr(args, option, None) is not None and option not in applies:
            flag = "--" + option.replace("_", "-")
            users = [n for n in REPORTS if option in report_options(n)]
            raise UsageError(
                f"{flag} does not apply to the {args.name} report; it applies to: "
                f"{', '.join(users)}"
            )


def _hint_unknown_models(con: Any, models: list[str] | None) -> None:
    """Say so when a --model names no model call of the dataset (the report is then empty)."""
    if not models:
        return
    known = {row[0] for row in con.execute("SELECT DISTINCT model FROM model_calls").fetchall()}
    unknown = [m for m in models if m not in known]
    if unknown:
        some = ", ".join(sorted(k for k in known if k)[:8])
        _err(f"--model {', '.join(unknown)}: no model call names it; models here: {some}")


def cmd_report(args: argparse.Namespace) -> int:
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import params, report_detail, report_summary, run_report

    _refuse_options_that_do_not_apply(args)
    p = params(
        since=args.since,
        until=args.until,
        timezone=args.timezone,
        runtimes=args.runtime,
        models=args.model,
        period=args.period,
        limit=args.limit,
        prices=args.prices,
        group_by=args.group_by,
    )
    con = connect(args.dataset)
    _hint_unknown_models(con, args.model)
    output = getattr(args, "output", None)  # only `report` has --output
    if args.name == "html":
        return _write_html(con, p, output)
    if output is not None:
        raise UsageError("--output is for `report html`; other reports write to stdout")
    rel = run_report(con, args.name, p)
    columns, data = list(rel.columns), rel.fetchall()
    total = totals_row(columns, data, "total") if args.name == "usage" else None
    if args.format in ("table", "markdown"):
        span = f"{p.since or 'all time'} … {p.until or 'now'}"
        summary = f"{args.name}: {report_summary(args.name)}"
        room = None if args.wide or args.format == "markdown" else terminal_width()
        sys.stdout.write((textwrap.fill(summary, room) if room else summary) + "\n")
        sys.stdout.write(f"({span}, timezone {p.timezone})\n\n")
    print_rows(columns, data, args.format, total, wide=args.wide, detail=report_detail(args.name))
    return EXIT_OK


def _write_html(con: Any, p: Any, output: Path | None) -> int:
    from traceidx.analysis.htmlreport import write

    if output is None:
        raise UsageError("report html needs --output FILE (the HTML file to write)")
    path = write(con, p, output.expanduser())
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)\n")
    return EXIT_OK


def cmd_prune(args: argparse.Namespace) -> int:
    from traceidx.pipeline.job import prune

    report = prune(args.dataset, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    if args.format == "table":
        sys.stdout.write(
            f"{verb} the facts of {len(report.removed)} vanished source"
            f"{'s' if len(report.removed) != 1 else ''}; generation {report.generation}\n"
        )
        for locator in report.removed:
            sys.stdout.write(f"  {locator}\n")
    else:
        print_rows(["removed"], [(loc,) for loc in report.removed], args.format)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from traceidx.store.open import reader

    store = reader(args.dataset)
    manifest = _manifest(store, args.dataset)
    # on object storage sizes come from one listing, and access is the bucket policy's
    damage, wide = store.check_parts(manifest, checksums=True), store.exposed()
    for d in damage:
        _err(d.line(args.dataset))
    if wide:
        _err(
            f"{args.dataset}: {len(wide)} paths are readable by other users (e.g. {wide[0]}); "
            "the next `traceidx build` makes them private"
        )
    states: Counter[tuple[str, str]] = Counter()
    for entry in manifest.sources.values():
        state = entry.state
        if state == "indexed" and entry.missing:
            state = "missing"
        elif state == "indexed" and entry.failed:
            state = "failed (previous facts kept)"
        elif state == "indexed" and entry.duplicate_of:
            state = "copy (counted once)"
        states[(entry.runtime or "-", state)] += 1
    rows = [(rt, st, n) for (rt, st), n in sorted(states.items())]
    if args.format == "table":
        sys.stdout.write(
            f"dataset {args.dataset}\ngeneration {manifest.generation} "
            f"published {manifest.published_at}\n"
        )
    print_rows(["runtime", "state", "sources"], rows, args.format, wide=args.wide)
    return EXIT_FAILED if damage else EXIT_OK


def cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    from traceidx.analysis.query import connect, rows

    query = args.query if args.query != "-" else sys.stdin.read()
    con = connect(args.dataset, prices=args.prices)
    try:
        columns, data = rows(con, query)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        _err(f"query failed: {first}; see `traceidx schema` for tables and columns")
        return EXIT_FAILED
    print_rows(columns, data, args.format, wide=args.wide)
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from datetime import date

    from traceidx.analysis.query import connect
    from traceidx.analysis.search import COLUMNS, Query, search

    def day(flag: str, value: str | None) -> date | None:
        try:
            return date.fromisoformat(value) if value else None
        except ValueError:
            raise UsageError(f"{flag} {value!r} is not a date (YYYY-MM-DD)") from None

    q = Query(
        " ".join(args.text),
        regex=args.regex,
        runtimes=tuple(args.runtime or ()),
        roles=tuple(args.role or ()),
        since=day("--since", args.since),
        until=day("--until", args.until),
        limit=args.limit,
    )
    q.check()
    con = connect(args.dataset)
    rows = search(con, q)
    if args.format != "table":
        print_rows(list(COLUMNS), rows, args.format, wide=args.wide)
        return EXIT_OK
    # a table for reading: when, where, what matched, and the record to inspect
    shown = ["time", "runtime", "project", "snippet", "record_id"]
    at = {c: COLUMNS.index(c) for c in COLUMNS}
    table = [
        (
            r[at["occurred_at"]].strftime("%Y-%m-%d %H:%M") if r[at["occurred_at"]] else None,
            *(r[at[c]] for c in shown[1:]),
        )
        for r in rows
    ]
    print_rows(shown, table, "table", wide=args.wide)
    return EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    from traceidx.cli.watch import watch
    from traceidx.pipeline.job import build
    from traceidx.projection.ingest import Settings
    from traceidx.sources.discover import default_roots

    if not isinstance(args.dataset, Path):
        raise UsageError("watch: keeps a local dataset (a folder) in step, not object storage")
    paths: list[Path] = [Path(p).expanduser() for p in args.paths]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder; name trace files or folders")
    roots = paths or [r for found in default_roots().values() for r in found if r.exists()]
    if not roots:
        raise UsageError("no trace folders at the default roots; name folders to watch")
    settings = Settings()

    def run() -> Any:
        return build(list(roots), args.dataset, settings=settings, jobs=args.jobs)

    sys.stderr.write(f"watching {len(roots)} folder(s); Ctrl-C or SIGTERM stops\n")
    return watch(roots, run, lambda text: print(text, flush=True), debounce_ms=args.debounce_ms)


def cmd_mcp(args: argparse.Namespace) -> int:
    from traceidx.cli.mcpserver import main as serve

    if not isinstance(args.dataset, Path):
        raise UsageError("mcp: serves a local dataset (a folder), not object storage")
    return serve(args.dataset)


def cmd_summarize(args: argparse.Namespace) -> int:
    from traceidx.analysis import summary

    if not isinstance(args.dataset, Path):
        raise UsageError("summarize: the summary is kept beside a local dataset only")
    path = summary.write(args.dataset)
    sys.stdout.write(f"wrote {path}\n")
    return EXIT_OK


def cmd_statusline(args: argparse.Namespace) -> int:
    from traceidx.cli.statusline import main as statusline

    return statusline(["--dataset", str(args.dataset)])


def cmd_schema(args: argparse.Namespace) -> int:
    from traceidx.analysis.query import describe_views, view_summary
    from traceidx.domain.model import COLUMN_DOCS, DERIVED_COLUMNS
    from traceidx.domain.schema import table_schema

    # tables: the derived Arrow schema; views: DuckDB's description of the shipped view SQL
    out: list[tuple[str, str, str, str, str]] = []
    for table, docs in COLUMN_DOCS.items():
        for field in table_schema(table):
            out.append(("table", table, field.name, str(field.type), docs.get(field.name, "")))
    views = describe_views()
    for view, columns in views.items():
        docs = {**COLUMN_DOCS.get(view, {}), **DERIVED_COLUMNS.get(view, {})}
        for name, kind in columns:
            out.append(("view", view, name, kind, docs.get(name, "")))
    if args.format == "table":
        for kind_of, heading in (("table", "tables"), ("view", "views")):
            sys.stdout.write(f"{heading}:\n")
            for name in dict.fromkeys(row[1] for row in out if row[0] == kind_of):
                about = f"  — {view_summary(name)}" if kind_of == "view" else ""
                sys.stdout.write(f"{name}{about}\n")
                for k, t, column, kind, doc in out:
                    if k == kind_of and t == name:
                        short = kind if len(kind) <= 40 else kind[:39] + "…"
                        lead = f"  {column:<20} {short:<41} "
                        room = None if args.wide else max(terminal_width() - len(lead), 20)
                        lines = textwrap.wrap(doc, room) if room and doc else [doc]
                        for index, text in enumerate(lines):
                            start = lead if index == 0 else " " * len(lead)
                            sys.stdout.write(f"{start}{text}".rstrip() + "\n")
        return EXIT_OK
    header = ["kind", "table", "column", "type", "description"]
    print_rows(header, list(out), args.format, wide=args.wide)
    return EXIT_OK


def cmd_inspect(args: argparse.Namespace) -> int:
    from traceidx.analysis.evidence import inspect_record
    from traceidx.analysis.query import connect

    con = connect(args.dataset)
    info = inspect_record(con, args.record_id)
    if info is None:
        _err(f"record {args.record_id} is not in {args.dataset}; list ids with `traceidx sql`")
        return EXIT_FAILED
    verdict = str(info["verification"])
    if args.format == "json":
        json.dump(info, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for name, value in info.items():
            if name != "content" and (name != "json_path" or value is not None):
                sys.stdout.write(f"{name}: {cell(value)}\n")
        if info["content"] is not None:
            sys.stdout.write(f"content:\n{info['content']}\n")
    return EXIT_OK if verdict == "verified" or verdict.startswith("source missing") else EXIT_FAILED


def cmd_demo(args: argparse.Namespace) -> int:
    from traceidx.analysis.htmlreport import write as write_html
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import params, report_detail, run_report
    from traceidx.demo import write_demo
    from traceidx.pipeline.job import build

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
    shown: tuple[tuple[str, str, dict[str, Any], list[str] | None], ...] = (
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
    for title, name, extra, keep in shown:
        rel = run_report(con, name, params(timezone="UTC", **extra))
        if keep is not None:
            rel = rel.select(", ".join(keep))
        columns, data = list(rel.columns), rel.fetchall()
        total = totals_row(columns, data, "total") if name == "usage" else None
        sys.stdout.write(f"\n{title} (traceidx report {name}):\n")
        print_rows(columns, data, "table", total, detail=report_detail(name))
    try:
        page = write_html(con, params(timezone="UTC", period="week"), corpus / "report.html")
        sys.stdout.write(f"\nthe HTML report (charts and tables, one file): {page}\n")
    except ReportError as exc:  # the html extra is not installed
        _err(f"no HTML report: {exc}")
    sys.stdout.write(
        f"\nnext: traceidx report tools --dataset {dataset}\n"
        f'      traceidx sql --dataset {dataset} "SELECT * FROM loop_usage LIMIT 5"\n'
    )
    return report.exit_code


# -- parser -----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dataset",
        type=_location,
        default=None,
        help="dataset directory or URI, e.g. s3://bucket/prefix "
        "(default: $TRACEIDX_DATASET or $XDG_DATA_HOME/traceidx)",
    )
    fmt = argparse.ArgumentParser(add_help=False)
    fmt.add_argument("--format", choices=("table", "json", "csv"), default="table")
    fmt.add_argument("--wide", action="store_true", help=_WIDE)

    parser = argparse.ArgumentParser(
        prog="traceidx", description="Coding-agent traces as a queryable Parquet dataset."
    )
    build_kind = "compiled with mypyc" if compiled() else "pure Python"
    parser.add_argument(
        "--version", action="version", version=f"traceidx {__version__} ({build_kind})"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    summary = argparse.ArgumentParser(add_help=False)  # a build prints a summary, not rows
    summary.add_argument("--format", choices=("table", "json"), default="table")
    p = sub.add_parser(
        "build", parents=[common, summary], help="index trace files into the dataset"
    )
    p.add_argument(
        "paths",
        nargs="*",
        help="trace files or directories, local or URIs like s3://bucket/prefix "
        "(default: runtime roots)",
    )
    p.add_argument(
        "--runtime", action="append", choices=_RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: cores)")
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where sources are read: this machine's process pool, or Ray tasks",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        help="the Ray cluster to run on (default: $RAY_ADDRESS, else a Ray started here)",
    )
    p.add_argument("--text-limit", type=_positive, default=64 * 1024, help="published text bound")
    p.add_argument(
        "--origin",
        default=None,
        help="the machine or person the named traces came from, recorded on the sources this "
        "build indexes first (default: this machine's hostname)",
    )
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace secrets (keys, tokens, private keys, passwords in URLs) in published "
        "text with a marker (needs traceidx[redact]; switching re-projects every source)",
    )
    p.add_argument("--rebuild", action="store_true", help="re-project every source from scratch")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("report", parents=[common], help="run a report (usage, models, …)")
    p.add_argument(
        "name", choices=(*REPORTS, "html"), help="the report (html: charts and tables, one file)"
    )
    _report_options(p)
    p.add_argument(
        "--group-by",
        default=None,
        help=f"usage: comma-separated dimensions among {','.join(DIMENSIONS)} "
        f"(default: {','.join(DEFAULT_GROUP_BY)})",
    )
    p.add_argument("--output", type=Path, help="html: the file to write")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "prices",
        parents=[common],
        help="each model with the price entry it matched, and the unpriced ones",
    )
    _report_options(p)
    p.set_defaults(func=cmd_report, name="prices", group_by=None)

    p = sub.add_parser(
        "prune", parents=[common, fmt], help="remove the facts of sources whose files are gone"
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")
    p.set_defaults(func=cmd_prune)

    p = sub.add_parser("status", parents=[common, fmt], help="dataset generation and sources")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("sql", parents=[common, fmt], help="run a SQL query over the views")
    p.add_argument("query", help="SQL text, or - to read it from stdin")
    p.add_argument(
        "--prices",
        type=Path,
        help="a prices JSON file whose entries override genai-prices in model_calls.cost_usd",
    )
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser(
        "search",
        parents=[common, fmt],
        help="items whose published text matches, newest first, with the ids to inspect",
    )
    p.add_argument("text", nargs="+", help="words that must all appear (any case), or a pattern")
    p.add_argument("--regex", action="store_true", help="match TEXT as a regular expression")
    p.add_argument(
        "--runtime", action="append", choices=_RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument(
        "--role",
        action="append",
        help="only items of this role (e.g. human.request) or family (human, agent, tool, …)",
    )
    p.add_argument("--since", help="first UTC date included (YYYY-MM-DD)")
    p.add_argument("--until", help="last UTC date included (YYYY-MM-DD)")
    p.add_argument("--limit", type=_positive, default=20, help="at most this many items")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "watch",
        parents=[common],
        help="keep the dataset in step with the trace roots as agents write (one line per publish)",
    )
    p.add_argument("paths", nargs="*", help="folders or files to watch (default: runtime roots)")
    p.add_argument("--jobs", type=_positive, default=None, help="worker processes per build")
    p.add_argument(
        "--debounce-ms",
        type=_positive,
        default=1000,
        help="wait this long after a change for more before building (default 1000)",
    )
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the dataset to coding agents over MCP (stdio; read-only: sql, report, "
        "schema, inspect, search)",
    )
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser(
        "statusline",
        parents=[common],
        help="one line for an agent's status bar: this session's cost, today, this week",
    )
    p.set_defaults(func=cmd_statusline)

    p = sub.add_parser(
        "summarize",
        parents=[common],
        help="write the summary statusline reads (statusline starts it when the dataset changed)",
    )
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("schema", parents=[common, fmt], help="tables, columns and meanings")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("inspect", parents=[common, fmt], help="re-read and verify one record")
    p.add_argument("record_id", type=_record_id, help="a record's id, as any command prints it")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "demo",
        parents=[common],
        help="build the bundled sample traces, re-dated to now, and report",
    )
    p.add_argument("--corpus", help="where to write the demo traces (default: a temp dir)")
    p.set_defaults(func=cmd_demo)
    return parser


def _report_options(p: argparse.ArgumentParser) -> None:
    """The options of `report` and `prices`."""
    p.add_argument("--since", help="first local date included (YYYY-MM-DD)")
    p.add_argument("--until", help="last local date included (YYYY-MM-DD)")
    p.add_argument("--timezone", help="IANA zone for dates and periods (default: this machine's)")
    p.add_argument(
        "--runtime", action="append", choices=_RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument("--model", action="append", help="only this model id (repeatable)")
    p.add_argument("--period", choices=PERIODS, help="usage: day (default), week or month")
    p.add_argument(
        "--limit",
        type=_positive,
        default=None,
        help="at most this many rows (slowest: 20 by default)",
    )
    p.add_argument(
        "--prices", type=Path, help="a prices JSON file whose entries override genai-prices"
    )
    p.add_argument("--format", choices=("table", "markdown", "json", "csv"), default="table")
    p.add_argument("--wide", action="store_true", help=_WIDE)


def _positive(text: str) -> int:
    """A count given on the command line: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def _record_id(text: str) -> int:
    """An id as typed or pasted (thousands separators, as older tables printed them, allowed)."""
    try:
        return int(text.replace(",", "").replace("_", "").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a record id: {text!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    configure()  # before anything loads Arrow
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if getattr(args, "wide", False) and getattr(args, "format", "table") not in _FITTED:
        _err(f"--wide is for --format {' or '.join(_FITTED)}; {args.format} has every column")
        return UsageError.exit_code
    args.dataset_given = args.dataset is not None
    if args.dataset is None:
        args.dataset = default_dataset()
    try:
        return int(args.func(args))
    except DatasetLocked as exc:
        _err(f"{exc}; wait for that build to finish, then retry")
        return exc.exit_code
    except DamagedPart as exc:
        for line in exc.lines:
            _err(line)
        return exc.exit_code
    except TraceidxError as exc:
        _err(str(exc))
        return exc.exit_code
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
