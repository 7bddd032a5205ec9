"""The `traceidx` command line: a thin layer over build, query and the dataset manifest.

It parses the arguments (`traceidx.cli.parser`), runs the command they name
(`traceidx.cli.commands`) and prints its result in the format asked for
(`traceidx.cli.output.emit`, the one place a format is applied).

Exit status: 0 success (every source indexed or deliberately skipped); 1 at least one source
failed or a query/inspection failed; 2 usage error (bad flags, missing dataset); 3 the dataset
is locked by another build. Errors are one line on stderr: where, what, and the next step.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from traceidx.cli.commands import EXIT_OK, Reply
from traceidx.cli.output import emit, err
from traceidx.cli.parser import output_format, parser, refuse_wide
from traceidx.cli.process import configure
from traceidx.errors import DamagedPart, TraceidxError, UsageError
from traceidx.storage import default_dataset

#: the module (in `traceidx.cli.commands`) and function of each command (`prices` is a
#: report); a command's module is imported when it runs, so `report usage` answered from its
#: rollup loads no build code
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("build", "cmd_build"),
    "report": ("query", "cmd_report"),
    "prices": ("query", "cmd_report"),
    "prune": ("build", "cmd_prune"),
    "status": ("build", "cmd_status"),
    "sql": ("query", "cmd_sql"),
    "search": ("query", "cmd_search"),
    "watch": ("live", "cmd_watch"),
    "mcp": ("live", "cmd_mcp"),
    "statusline": ("live", "cmd_statusline"),
    "summarize": ("live", "cmd_summarize"),
    "schema": ("query", "cmd_schema"),
    "inspect": ("query", "cmd_inspect"),
    "demo": ("build", "cmd_demo"),
    "export": ("export", "cmd_export"),
}


def command(name: str) -> Callable[[argparse.Namespace], int | Reply]:
    """The function of a command (its module imported on first use)."""
    module, function = COMMANDS[name]
    # (an import statement's machinery: `python -X importtime` shows what the command loads)
    loaded = __import__(f"traceidx.cli.commands.{module}", fromlist=[function])
    found: Callable[[argparse.Namespace], int | Reply] = getattr(loaded, function)
    return found


def run(args: argparse.Namespace) -> int:
    """Run the command `args` name; print its result in the format asked for."""
    reply = command(args.command)(args)
    if isinstance(reply, Reply):
        emit(reply.result, output_format(args), wide=getattr(args, "wide", False))
        return reply.code
    return int(reply)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    configure()  # before anything loads Arrow
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        refuse_wide(args)
    except UsageError as exc:
        err(str(exc))
        return exc.exit_code
    args.dataset_given = args.dataset is not None
    if args.dataset is None:
        args.dataset = default_dataset()
    try:
        return run(args)
    except DamagedPart as exc:
        for line in exc.lines:
            err(line)
        return exc.exit_code
    except TraceidxError as exc:
        err(str(exc))
        return exc.exit_code
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
