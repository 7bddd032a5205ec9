"""`traceidx statusline` against `python -c pass`: the median wall time of each, alternated.

    python benchmarks/statusline.py DATASET [--repeat 21]

The statusline runs as the console script does (`traceidx.entry.main`) with a Claude Code
status JSON on stdin naming the dataset's costliest recent session; the ratio of the medians
is what the benchmark reports (the aim: under 3).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENTRY = "import sys; from traceidx.entry import main; sys.argv[0] = 'traceidx'; sys.exit(main())"


def _time(command: list[str], stdin: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    summary = json.loads((args.dataset / "summary.json").read_text("utf-8"))
    session = max(summary["sessions"].items(), key=lambda kv: kv[1][0] or 0)[0].split("/", 1)[1]
    stdin = json.dumps({"session_id": session, "model": {"display_name": "Opus"}})
    status = [sys.executable, "-c", ENTRY, "statusline", "--dataset", str(args.dataset)]
    empty = [sys.executable, "-c", "pass"]
    spans: dict[str, list[float]] = {"python -c pass": [], "traceidx statusline": []}
    for _ in range(args.repeat):
        spans["python -c pass"].append(_time(empty, ""))
        spans["traceidx statusline"].append(_time(status, stdin))
    medians = {name: statistics.median(values) for name, values in spans.items()}
    for name, value in medians.items():
        print(f"{name:<22} {value * 1000:7.1f} ms (median of {args.repeat})")
    ratio = medians["traceidx statusline"] / medians["python -c pass"]
    print(f"{'ratio':<22} {ratio:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
