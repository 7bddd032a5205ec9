"""The `traceidx` command's entry point: `statusline` without loading the rest of traceidx
(it runs after every message of an agent), every other command through `traceidx.cli.main`."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["statusline"]:
        from traceidx.cli.statusline import main as statusline

        return statusline(sys.argv[2:])
    from traceidx.cli.main import main as cli

    return cli()
