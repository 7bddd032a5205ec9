"""The commands: each takes the parsed arguments and returns its exit status, or a `Reply`
whose result `traceidx.cli.main` prints in the format the user asked for
(`traceidx.cli.output.emit`); no command looks at ``--format``. Beside errors and progress on
stderr, only output that has no format is written by a command itself (`report html`'s and
`summarize`'s "wrote" line, `export otel`'s summary line, `watch`'s publishes, `demo`'s
walk-through).

``build`` builds and keeps the dataset (build, prune, status, demo), ``query`` reads it (report,
prices, sql, search, schema, inspect), ``live`` runs beside the agents (watch, mcp, summarize,
statusline), ``export`` sends it to other systems (export otel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from traceidx.cli.output import Result

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_LOCKED = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Reply:
    """A command's result to print, and its exit status."""

    result: Result
    code: int = EXIT_OK
