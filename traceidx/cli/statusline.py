"""`traceidx statusline`: one line for a coding agent's status bar, from the dataset's summary.

Claude Code runs a statusline command after each message with a JSON object on stdin
(``session_id``, ``model.display_name``, ``workspace.current_dir``, …). The line says this
session's cost and tokens, today's and this week's cost (local time, every runtime's sessions),
and the session's burn rate (its cost per hour from its first call to its last). It reads
``summary.json`` (`analysis.summary`) with the standard library only; when the dataset changed
since, it starts ``traceidx summarize`` in the background and shows what it has.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from traceidx.analysis import summary
from traceidx.storage import default_dataset


def _dataset(argv: list[str]) -> Path:
    """`--dataset DIR` if given, else the default dataset (as every command finds it; a
    dataset on object storage has no local summary)."""
    if "--dataset" in argv:
        at = argv.index("--dataset")
        if at + 1 < len(argv):
            return Path(argv[at + 1]).expanduser()
    return Path(str(default_dataset()))


def _money(value: float | None) -> str:
    return "$–" if value is None else f"${value:,.2f}"


def _tokens(value: int | None) -> str:
    if not value:
        return "0"
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def _local_starts(now: float) -> tuple[float, float]:
    """The epoch seconds at which today and this week (from Monday) began, local time."""
    local = time.localtime(now)
    midnight = time.mktime((*local[:3], 0, 0, 0, 0, 0, -1))
    return midnight, midnight - local.tm_wday * 86400


def line(
    stdin: dict[str, Any], data: dict[str, Any] | None, now: float, *, pending: bool = False
) -> str:
    """The status line for the session `stdin` names, from a summary (`pending`: none yet,
    but one is being computed)."""
    model = stdin.get("model")
    name = model.get("display_name") if isinstance(model, dict) else None
    parts = [str(name)] if name else []
    if data is None:
        why = "being computed" if pending else "run traceidx build"
        return " · ".join([*parts, f"traceidx: no summary yet ({why})"])
    session_id = stdin.get("session_id")
    suffix = "/" + session_id if isinstance(session_id, str) and session_id else None
    sessions = data.get("sessions", {})
    found = next((v for k, v in sessions.items() if suffix and k.endswith(suffix)), None)
    if found is not None:
        parts.append(f"session {_money(found[0])} ({_tokens(found[1])} tok)")
    today_start, week_start = _local_starts(now)
    today = week = 0.0
    for hour, sums in data.get("hours", {}).items():
        start, cost = int(hour) * 3600, sums[0]
        if cost is not None and start + 3600 > week_start:
            week += cost
            if start + 3600 > today_start:
                today += cost
    parts += [f"today {_money(today)}", f"week {_money(week)}"]
    if found is not None:
        cost, _, first, last = found
        if cost and last - first >= 5 * 60_000:  # a rate over at least five minutes
            parts.append(f"{_money(cost / ((last - first) / 3_600_000))}/h")
    return " · ".join(parts)


def _refresh(dataset: Path) -> None:
    """Start `traceidx summarize` for the dataset in the background (its output discarded);
    ``-P``: the working directory is not put on the import path, so that a folder there named
    ``traceidx`` is not imported instead."""
    subprocess.Popen(
        [sys.executable, "-P", "-m", "traceidx.cli.main", "summarize", "--dataset", str(dataset)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def main(argv: list[str]) -> int:
    """Read the agent's JSON on stdin, print the line; exit 0 whatever happens (a status bar
    shows the line, not an error)."""
    try:
        raw = sys.stdin.read()
        stdin = json.loads(raw) if raw.strip() else {}
    except ValueError:
        stdin = {}
    if not isinstance(stdin, dict):
        stdin = {}
    dataset = _dataset(argv)
    data = summary.read(dataset)
    stamp = summary.manifest_stamp(dataset)
    stale = stamp is not None and (data is None or data.get("manifest") != stamp)
    if stale:
        _refresh(dataset)
    print(line(stdin, data, time.time(), pending=stale))
    return 0
