"""The `traceidx` command's entry point: `statusline` without loading the rest of traceidx
(it runs after every message of an agent), every other command through `traceidx.cli`."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["statusline"]:
        from traceidx.statusline import main as statusline

        return statusline(sys.argv[2:])
    from traceidx.cli import main as cli

    return cli()
