"""Shell parsing over a real corpus: completeness share, top programs, parse rate.

Usage: python benchmarks/shell_stats.py DATASET [--repeat 3]

Reads every shell tool call of a built dataset (all runtimes), reports the share of
fragments that are ``complete``, the 20 most frequent programs, and re-parses every command
text with `traceidx.domain.shell.parse_shell` to measure commands/s (median of --repeat runs; every
parse must succeed without raising).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from traceidx.analysis.query import connect
from traceidx.domain.shell import parse_shell


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    con = connect(args.dataset)
    rows = con.execute(
        """SELECT s.runtime, f.completeness, f.text.value, f.text.full_bytes
           FROM items i JOIN sessions s USING (session_id),
                unnest(i.semantic.tool_call.shell_fragments) AS u(f)
           WHERE i.semantic.role = 'agent.tool_call.shell'"""
    ).fetchall()
    by_runtime: dict[str, list[int]] = {}
    for runtime, completeness, _, _ in rows:
        counts = by_runtime.setdefault(runtime, [0, 0])
        counts[0] += 1
        counts[1] += completeness == "complete"
    top = con.execute(
        "SELECT program, count(*) AS n FROM shell_invocations GROUP BY 1 ORDER BY n DESC, 1 "
        "LIMIT 20"
    ).fetchall()
    commands = [text for _, _, text, full in rows if len(text.encode()) == full]
    runs = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for command in commands:
            parse_shell(command)
        runs.append(time.perf_counter() - start)
    seconds = statistics.median(runs)
    report = {
        "fragments": len(rows),
        "complete_share": round(sum(c for _, c in by_runtime.values()) / max(len(rows), 1), 4),
        "complete_share_by_runtime": {
            rt: round(c / n, 4) for rt, (n, c) in sorted(by_runtime.items())
        },
        "top_programs": [[program, n] for program, n in top],
        "reparsed_commands": len(commands),
        "parse_seconds": round(seconds, 3),
        "commands_per_s": round(len(commands) / seconds) if seconds else None,
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
