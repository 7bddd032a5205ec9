"""The command line's parser: its commands, their options and the validators of option values.

It only parses: `traceidx.cli.main` runs the command the parsed arguments name.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from traceidx import __version__, storage
from traceidx.analysis.reports import DEFAULT_GROUP_BY, DIMENSIONS, PERIODS, REPORTS
from traceidx.cli.output import FITTED
from traceidx.errors import UsageError


class _RegisteredRuntimes:
    """The registered runtimes as argparse choices, listed only when a command names a runtime
    (listing them loads every adapter)."""

    def __contains__(self, name: object) -> bool:
        from traceidx import runtimes

        return name in runtimes.names()

    def __iter__(self) -> Iterator[str]:
        from traceidx import runtimes

        return iter(runtimes.names())


RUNTIMES: Any = _RegisteredRuntimes()
_WIDE = "show every column whole (tables fit 100 columns, or the terminal, by default)"


class Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line on stderr (exit status 2): what is wrong, and
    where the command's options are described."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"traceidx: error: {message} (see {self.prog} --help)\n")


def _dataset_option(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--dataset",
        type=storage.location,
        default=None,
        help=f"dataset directory or URI, e.g. s3://bucket/prefix (default: {default})",
    )


def parser() -> argparse.ArgumentParser:
    """The `traceidx` parser: every command and its options."""
    common = Parser(add_help=False)
    _dataset_option(common, "$TRACEIDX_DATASET or $XDG_DATA_HOME/traceidx")
    fmt = Parser(add_help=False)
    fmt.add_argument("--format", choices=("table", "json", "csv"), default="table")
    fmt.add_argument("--wide", action="store_true", help=_WIDE)

    top = Parser(prog="traceidx", description="Coding-agent traces as a queryable Parquet dataset.")
    top.add_argument("--version", action="version", version=f"traceidx {__version__}")
    sub = top.add_subparsers(dest="command", required=True)

    summary = Parser(add_help=False)  # a build prints a summary, not rows
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
        "--runtime", action="append", choices=RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument("--jobs", type=positive, default=None, help="worker processes (default: cores)")
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
    p.add_argument("--text-limit", type=positive, default=64 * 1024, help="published text bound")
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

    p = sub.add_parser("report", parents=[common], help="run a report (usage, models, …)")
    p.add_argument(
        "name", choices=(*REPORTS, "html"), help="the report (html: charts and tables, one file)"
    )
    report_options(p)
    p.add_argument(
        "--group-by",
        default=None,
        help=f"usage: comma-separated dimensions among {','.join(DIMENSIONS)} "
        f"(default: {','.join(DEFAULT_GROUP_BY)})",
    )
    p.add_argument("--output", type=Path, help="html: the file to write")

    p = sub.add_parser(
        "prices",
        parents=[common],
        help="each model with the price entry it matched, and the unpriced ones",
    )
    report_options(p)
    p.set_defaults(name="prices", group_by=None)

    p = sub.add_parser("export", help="send the dataset to another system (otel: OTLP traces)")
    targets = p.add_subparsers(dest="target", required=True)
    p = targets.add_parser(
        "otel",
        parents=[common],
        help="sessions, loops, model calls and tool calls as OpenTelemetry traces (GenAI "
        "conventions) to an OTLP/HTTP endpoint or an OTLP/JSON lines file",
    )
    p.add_argument(
        "--output",
        type=Path,
        help="write OTLP/JSON lines (one ExportTraceServiceRequest a line) to this file",
    )
    p.add_argument(
        "--endpoint",
        help="the OTLP/HTTP endpoint, e.g. http://localhost:4318 (/v1/traces added when it has "
        "no path; default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    p.add_argument("--since", help="first local date included (YYYY-MM-DD)")
    p.add_argument("--until", help="last local date included (YYYY-MM-DD)")
    p.add_argument("--timezone", help="IANA zone for --since/--until (default: this machine's)")
    p.add_argument(
        "--runtime", action="append", choices=RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument("--model", action="append", help="only this model id (repeatable)")
    p.add_argument("--project", action="append", help="only this project (repeatable)")
    p.add_argument(
        "--since-last",
        action="store_true",
        help="only the sessions published since the last export to the same place and scope "
        "(state kept beside the manifest)",
    )
    p.add_argument(
        "--content",
        action="store_true",
        help="include prompts, answers, tool arguments and results (the dataset's published, "
        "redacted when built with --redact, text; off by default)",
    )
    p.add_argument("--batch", type=positive, default=2000, help="spans per request (default 2000)")
    p.add_argument(
        "--jobs",
        type=positive,
        default=None,
        help="--output: processes writing JSON (default: cores)",
    )
    p.add_argument(
        "--prices", type=Path, help="a prices JSON file whose entries override genai-prices"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")

    p = sub.add_parser(
        "prune", parents=[common, fmt], help="remove the facts of sources whose files are gone"
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")

    p = sub.add_parser("status", parents=[common, fmt], help="dataset generation and sources")

    p = sub.add_parser("sql", parents=[common, fmt], help="run a SQL query over the views")
    p.add_argument("query", help="SQL text, or - to read it from stdin")
    p.add_argument(
        "--prices",
        type=Path,
        help="a prices JSON file whose entries override genai-prices in model_calls.cost_usd",
    )

    p = sub.add_parser(
        "search",
        parents=[common, fmt],
        help="items whose published text matches, newest first, with the ids to inspect",
    )
    p.add_argument("text", nargs="+", help="words that must all appear (any case), or a pattern")
    p.add_argument("--regex", action="store_true", help="match TEXT as a regular expression")
    p.add_argument(
        "--runtime", action="append", choices=RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument(
        "--role",
        action="append",
        type=role,
        help="only items of this role (e.g. human.request) or family (human, agent, tool, …)",
    )
    p.add_argument("--since", help="first UTC date included (YYYY-MM-DD)")
    p.add_argument("--until", help="last UTC date included (YYYY-MM-DD)")
    p.add_argument("--limit", type=positive, default=20, help="at most this many items")

    p = sub.add_parser(
        "watch",
        parents=[common],
        help="keep the dataset in step with the trace roots as agents write (one line per publish)",
    )
    p.add_argument("paths", nargs="*", help="folders or files to watch (default: runtime roots)")
    p.add_argument("--jobs", type=positive, default=None, help="worker processes per build")
    p.add_argument(
        "--debounce-ms",
        type=positive,
        default=1000,
        help="wait this long after a change for more before building (default 1000)",
    )

    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the dataset to coding agents over MCP (stdio; read-only: sql, report, "
        "schema, inspect, search)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="stop a tool call's query after this many seconds "
        "(default: $TRACEIDX_MCP_TIMEOUT, else 30)",
    )
    p.add_argument(
        "--memory-limit",
        default=None,
        metavar="SIZE",
        help="the most memory the queries may take, e.g. 512MB, 2GB "
        "(default: $TRACEIDX_MCP_MEMORY_LIMIT, else 1GB)",
    )

    p = sub.add_parser(
        "statusline",
        parents=[common],
        help="one line for an agent's status bar: this session's cost, today, this week",
    )

    p = sub.add_parser(
        "summarize",
        parents=[common],
        help="write the summary statusline reads and the rollup `report usage` answers from "
        "(statusline starts it when the dataset changed)",
    )

    p = sub.add_parser("schema", parents=[common, fmt], help="tables, columns and meanings")

    p = sub.add_parser("inspect", parents=[common, fmt], help="re-read and verify one record")
    p.add_argument("record_id", type=record_id, help="a record's id, as any command prints it")

    p = sub.add_parser("demo", help="build the bundled sample traces, re-dated to now, and report")
    _dataset_option(p, "a folder named dataset in the demo corpus folder")
    p.add_argument("--corpus", help="where to write the demo traces (default: a temp dir)")
    return top


def report_options(p: argparse.ArgumentParser) -> None:
    """The options of `report` and `prices`."""
    p.add_argument("--since", help="first local date included (YYYY-MM-DD)")
    p.add_argument("--until", help="last local date included (YYYY-MM-DD)")
    p.add_argument("--timezone", help="IANA zone for dates and periods (default: this machine's)")
    p.add_argument(
        "--runtime", action="append", choices=RUNTIMES, metavar="RUNTIME", help="only this runtime"
    )
    p.add_argument("--model", action="append", help="only this model id (repeatable)")
    p.add_argument("--period", choices=PERIODS, help="usage: day (default), week or month")
    p.add_argument(
        "--limit",
        type=positive,
        default=None,
        help="at most this many rows (slowest: 20 by default)",
    )
    p.add_argument(
        "--prices", type=Path, help="a prices JSON file whose entries override genai-prices"
    )
    p.add_argument(
        "--format",
        choices=("table", "markdown", "json", "csv"),
        default=None,
        help="how rows are printed (default: table; not for html, which writes a file)",
    )
    p.add_argument("--wide", action="store_true", help=_WIDE)


def positive(text: str) -> int:
    """A count given on the command line: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def role(text: str) -> str:
    """An item role (``human.request``) or a family of roles (``human``) of the contract."""
    from traceidx.domain.model import VALUE_BY_ROLE

    families = sorted({name.split(".")[0] for name in VALUE_BY_ROLE})
    if text in VALUE_BY_ROLE or text in families:
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is no role or family of roles; families: {', '.join(families)} (roles are "
        "family.name, e.g. human.request; `traceidx schema` describes items.semantic)"
    )


def record_id(text: str) -> int:
    """An id as typed or pasted: its digits, also quoted as JSON writes it or with thousands
    separators as older tables printed it."""
    try:
        return int(text.strip().strip('"').replace(",", "").replace("_", "").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a record id: {text!r}") from None


def seconds(text: str) -> float:
    """A duration given on the command line: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def refuse_wide(args: argparse.Namespace) -> None:
    """``--wide`` fits no table in a format that fits none; ``report html`` takes neither
    ``--format`` nor ``--wide``."""
    if getattr(args, "name", None) == "html":  # a file, in one format
        for flag, given in (("--format", args.format is not None), ("--wide", args.wide)):
            if given:
                raise UsageError(
                    f"{flag} does not apply to `report html`: it writes one HTML file "
                    "(--output FILE); other reports print rows in a format"
                )
    if getattr(args, "wide", False) and output_format(args) not in FITTED:
        raise UsageError(
            f"--wide is for --format {' or '.join(FITTED)}; {args.format} has every column"
        )


def output_format(args: argparse.Namespace) -> str:
    """The format a command prints its result in (the table when none was asked for)."""
    return getattr(args, "format", None) or "table"


def refuse_options_that_do_not_apply(args: argparse.Namespace) -> None:
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
