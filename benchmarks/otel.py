"""OpenTelemetry export against a cold build: `traceidx export otel` to a file over the
real-shaped corpus, timed beside the cold build of the same corpus.

Usage::

    python benchmarks/otel.py [--real-copies 9] [--repeat 3] [--jobs 2] [--workdir DIR]
                              [--out benchmarks/results/otel.json]

The real-shaped corpus (`benchmarks.corpora.real_shaped`: the public Claude Code transcripts,
``--real-copies`` id-unique copies; 40 are the 933 MB corpus of `benchmarks/run.py`) is written
once. Then, ``--repeat`` times and interleaved: a cold build into an empty dataset (the child
`benchmarks/run.py` times: the build alone, in a process set up as the command's, with
``--jobs`` workers), and the whole `traceidx export otel --output FILE --quiet` command on that
dataset, with ``--jobs`` processes writing JSON and with one (wall seconds from the process's
start; CPU-seconds of the one-process export, all of its work). Medians, every run, the spans
per kind and the ratio export / cold build (wall) are printed and saved as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora import real_shaped, size_of
from benchmarks.run import TRACEIDX_HOME, run_build, settle


def export(dataset: Path, out: Path, jobs: int) -> dict[str, Any]:
    """The whole export command, timed: wall and CPU seconds, its summary line, the file's size.
    The CPU time is the command's process alone: with `jobs` above 1 the processes that write
    JSON are not its children (a forkserver's), so only ``jobs=1`` counts all of it."""
    import subprocess

    settle()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "traceidx.cli.main", "export", "otel"),
            *("--dataset", str(dataset), "--output", str(out), "--quiet", "--jobs", str(jobs)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": TRACEIDX_HOME},
        cwd=TRACEIDX_HOME,
        check=True,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "summary": done.stdout.strip(),
        "file_mb": out.stat().st_size / 1e6,
    }


def spans(dataset: Path) -> dict[str, int]:
    """The spans of each kind an export of the whole dataset sends."""
    from traceidx.analysis import otelspans
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import params

    con = connect(dataset)
    try:
        otelspans.prepare(con, params(timezone="UTC"), otelspans.Scope())
        return otelspans.counts(con)
    finally:
        con.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--real-copies", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/otel.json"))
    parser.add_argument(
        "--public-claude",
        type=Path,
        default=Path(TRACEIDX_HOME).parent / "shared" / "corpus" / "public" / "claude",
    )
    args = parser.parse_args()
    temporary = None
    if args.workdir is None:
        temporary = tempfile.TemporaryDirectory(prefix="traceidx-otel-bench-")
        args.workdir = Path(temporary.name)
    root = args.workdir / "real"
    files = real_shaped(root, args.public_claude, args.real_copies)
    megabytes = size_of(files) / 1e6
    print(f"real-shaped corpus: {len(files)} files, {megabytes:.1f} MB", flush=True)
    runs: dict[str, list[Any]] = {"cold": [], "export": [], "export_one_process": []}
    dataset = args.workdir / "dataset"
    for k in range(args.repeat):
        if dataset.exists():
            import shutil

            shutil.rmtree(dataset)
        built = run_build(root, dataset, args.jobs)
        if built["exit_code"] != 0:
            raise SystemExit(f"the cold build failed: {built}")
        runs["cold"].append({"seconds": built["seconds"], "cpu_seconds": built["cpu_seconds"]})
        out = args.workdir / "spans.jsonl"
        runs["export"].append(export(dataset, out, args.jobs))
        runs["export_one_process"].append(export(dataset, out, 1))
        cold, sent, one = runs["cold"][-1], runs["export"][-1], runs["export_one_process"][-1]
        print(
            f"repeat {k + 1}: cold build {cold['seconds']:.2f} s ({cold['cpu_seconds']:.1f} "
            f"CPU-s), export {sent['seconds']:.2f} s, one process {one['seconds']:.2f} s "
            f"({one['cpu_seconds']:.1f} CPU-s): {sent['summary']}",
            flush=True,
        )
    medians = {
        f"{kind}_{measure}": round(statistics.median(r[measure] for r in runs[kind]), 3)
        for kind in runs
        for measure in ("seconds", "cpu_seconds")
    }
    ratios = [
        e["seconds"] / c["seconds"] for c, e in zip(runs["cold"], runs["export"], strict=True)
    ]
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "jobs": args.jobs,
        "corpus": {"real_copies": args.real_copies, "files": len(files), "mb": round(megabytes, 1)},
        "spans": spans(dataset),
        "medians": medians,
        "export_over_cold": {
            "median": round(statistics.median(ratios), 3),
            "runs": [round(r, 3) for r in ratios],
        },
        "file_mb": round(runs["export"][-1]["file_mb"], 1),
        "runs": runs,
    }
    for key, value in medians.items():
        print(f"{key:<24} {value:8.3f}")
    print(f"export / cold build, median of {args.repeat}: {result['export_over_cold']['median']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    if temporary is not None:
        temporary.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
