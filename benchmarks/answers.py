"""How fast the answers come on a built dataset: the warm `report usage` command against
ccusage's daily report on the same Claude Code traces, `search`, and `statusline` against
`python -c pass`; medians of alternated runs.

    python benchmarks/answers.py CORPUS [--dataset DIR] [--repeat 5] [--out FILE]

CORPUS is a folder of Claude Code transcripts (e.g. the real-shaped corpus `benchmarks/run.py`
makes, `--real-copies 40`); the dataset is built there first unless `--dataset` names one.
`traceidx summarize` then writes the summary and the usage rollup, and one untimed run of each
command warms the page cache: the timed `report usage` answers from the rollup, as every report
after the first of a dataset generation does. `report usage (SQL)` is the report in a zone
other than the machine's (`--timezone UTC`, or `Etc/UTC` where the machine's is UTC), which the
rollup does not answer: its SQL runs, as on a generation's first report (the same query in any
zone; such a run writes no rollup).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.run import _child, ccusage, run_build
from traceidx.analysis import rollup
from traceidx.analysis.reports import local_timezone

ENTRY = "import sys; from traceidx.entry import main; sys.argv[0] = 'traceidx'; sys.exit(main())"


def _seconds(command: list[str], stdin: str = "") -> float:
    start = time.perf_counter()
    done = _child(command, input=stdin)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])}: exit {done.returncode}: {done.stderr[-300:]}")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--dataset", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--words", default="pytest failed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="traceidx-answers-"))
    dataset = args.dataset or work / "dataset"
    if args.dataset is None:
        built = run_build(args.corpus, dataset, 2)
        print(f"built {dataset} in {built['seconds']:.1f} s", file=sys.stderr)
    py = sys.executable
    summarize = [py, "-m", "traceidx.cli.main", "summarize", "--dataset", str(dataset)]
    subprocess.run(summarize, check=True, capture_output=True)
    if not (dataset / rollup.NAME).is_file():
        raise SystemExit(f"{dataset}: `traceidx summarize` wrote no {rollup.NAME}")
    report = [py, "-m", "traceidx.cli.main", "report", "usage", "--dataset", str(dataset)]
    # a zone the rollup (written in the machine's) is not for: the same query, other days
    elsewhere = "Etc/UTC" if local_timezone() == "UTC" else "UTC"
    commands = {
        "python -c pass": ([py, "-c", "pass"], ""),
        "traceidx statusline": (
            [py, "-c", ENTRY, "statusline", "--dataset", str(dataset)],
            json.dumps({"session_id": "none", "model": {"display_name": "Opus"}}),
        ),
        "traceidx report usage": (report, ""),
        "traceidx report usage (SQL)": ([*report, "--timezone", elsewhere], ""),
        "traceidx search": (
            [
                py,
                "-m",
                "traceidx.cli.main",
                "search",
                "--dataset",
                str(dataset),
                *args.words.split(),
            ],
            "",
        ),
    }
    for command, stdin in commands.values():  # warm: the files in the page cache
        _seconds(command, stdin)
    spans: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, (command, stdin) in commands.items():
            spans[name].append(_seconds(command, stdin))
    ccusage_runs = [s for s in (ccusage(args.corpus) for _ in range(min(args.repeat, 3))) if s]
    medians: dict[str, Any] = {name: statistics.median(v) for name, v in spans.items()}
    if ccusage_runs:
        medians["ccusage claude daily"] = statistics.median(ccusage_runs)
    for name, value in medians.items():
        print(f"| {name} | {value:.3f} s |")
    ratios = {
        "statusline / python -c pass": medians["traceidx statusline"] / medians["python -c pass"],
    }
    if "ccusage claude daily" in medians:
        for name in ("report usage", "report usage (SQL)"):
            ratios[f"ccusage / {name}"] = (
                medians["ccusage claude daily"] / medians[f"traceidx {name}"]
            )
    for name, value in ratios.items():
        print(f"| {name} | {value:.2f} |")
    if args.out:
        result = {"corpus": str(args.corpus.name), "repeat": args.repeat, "medians": medians}
        args.out.write_text(json.dumps({**result, "ratios": ratios}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
