"""Warm usage reports side by side: `traceidx report usage` against ccusage's daily report.

Usage::

    python benchmarks/warm_report.py --workdir DIR [--repeat 5] [--out results.json]

DIR holds the corpora `benchmarks/run.py --workdir DIR` writes (``scaled/``: the 1 GB scaled
corpus of all four runtimes; ``real/``: the real-shaped Claude Code corpus); each is built once
into ``DIR/dataset-<corpus>`` when that dataset does not exist yet. Then, ``--repeat`` times
and interleaved, the whole `traceidx report usage` command runs on each built dataset and
`ccusage claude daily --offline --json` over the real-shaped transcripts (the traces both
read: ccusage reads Claude Code only). Medians and every run are printed and saved as JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.run import CCUSAGE, _child, ccusage, report_usage, settle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/warm-report.json"))
    args = parser.parse_args()
    datasets = {}
    for corpus in ("scaled", "real"):
        root, dataset = args.workdir / corpus, args.workdir / f"dataset-{corpus}"
        if not root.is_dir():
            continue
        if not dataset.is_dir():
            build = [sys.executable, "-m", "traceidx.cli.main", "build", "--dataset", str(dataset)]
            _child([*build, "--jobs", str(args.jobs), str(root)], check=True)
        datasets[corpus] = dataset
    runs: dict[str, list[float]] = {f"report_usage_{c}_s": [] for c in datasets}
    runs["ccusage_daily_real_s"] = []
    for _ in range(args.repeat):
        for corpus, dataset in datasets.items():
            settle()
            runs[f"report_usage_{corpus}_s"].append(round(report_usage(dataset), 3))
        if "real" in datasets:
            seconds = ccusage(args.workdir / "real")
            if seconds is not None:
                runs["ccusage_daily_real_s"].append(round(seconds, 3))
    medians = {k: round(statistics.median(v), 3) for k, v in runs.items() if v}
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "ccusage": CCUSAGE,
        "medians": medians,
        "runs": runs,
    }
    for key, value in medians.items():
        print(f"{key:<28} {value:8.3f} s   runs: {runs[key]}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
