"""Engine benchmark: the Ray build of the scaled corpus against the local process pool.

Usage::

    python benchmarks/engines.py [--megabytes 1000] [--jobs 2]
        [--repeat 3] [--out benchmarks/results/engines.json] [--workdir DIR]

On one scaled corpus (`benchmarks.corpora.scaled`, the corpus ``run.py`` measures) it runs
cold builds into empty datasets, ``--repeat`` times each, interleaved (local, Ray, local,
Ray …), each in a child process as a user's ``traceidx build --jobs N [--engine ray]`` would:

* ``seconds``: the whole build (for Ray, starting and stopping a Ray on this machine too);
* ``read_s``: from the start until the last source's outcome arrived (planning and reading),
  and ``publish_s``: the rest (writing parts and the manifest, by the driver alone; for Ray
  this includes stopping the Ray it started);
* ``cpu_seconds`` (local engine only: Ray's workers are not the build's children) and from it
  the **per-core rate**: decoded MB per CPU-second, what one core reads and projects;

and reports the medians, and **Ray's overhead**: the median Ray build time over the median
local build time (and the same ratio per interleaved pair).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

import traceidx
from benchmarks.corpora import scaled, size_of

TRACEIDX_HOME = str(Path(traceidx.__file__).resolve().parents[1])

# the child times the build alone (not the interpreter's start), and when the last source's
# outcome arrived (the progress callback), as the `traceidx build` command runs it
CHILD = """
import json, resource, sys, time
from pathlib import Path
from traceidx.cli.process import configure
configure()
from traceidx.pipeline.job import build
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
last = [0.0]
def progress(done, total, outcome):
    last[0] = time.perf_counter()
start, own = time.perf_counter(), cpu(resource.RUSAGE_SELF)
report = build([Path(sys.argv[1])], Path(sys.argv[2]), jobs=int(sys.argv[3]),
               engine=sys.argv[4], progress=progress)
end = time.perf_counter()
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
used = cpu(resource.RUSAGE_SELF) - own + workers.ru_utime + workers.ru_stime
print(json.dumps({"seconds": end - start, "read_s": last[0] - start, "publish_s": end - last[0],
                  "cpu_seconds": used, "totals": report.totals(),
                  "exit_code": report.exit_code}))
"""


def cold_build(corpus: Path, dataset: Path, jobs: int, engine: str) -> dict[str, Any]:
    """One cold build in a child process; its measures."""
    os.sync()  # what an earlier step wrote is not written back inside this one
    env = {**os.environ, "PYTHONPATH": TRACEIDX_HOME, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(corpus), str(dataset), str(jobs), engine],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["exit_code"] != 0:
        raise SystemExit(f"the {engine} build of {corpus} failed:\n{done.stderr}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/engines.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="traceidx-engines-"))
    corpus = work / "scaled"
    started = time.perf_counter()
    files = scaled(corpus, args.megabytes)
    scale_s = time.perf_counter() - started
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "ray": []}
    for k in range(args.repeat):
        for engine in runs:
            dataset = work / f"dataset-{engine}-{k}"
            result = cold_build(corpus, dataset, args.jobs, engine)
            runs[engine].append(result)
            sys.stderr.write(
                f"repeat {k + 1}/{args.repeat} {engine}: {result['seconds']:.2f} s "
                f"(read {result['read_s']:.2f} s, publish {result['publish_s']:.2f} s)\n"
            )
            subprocess.run(["rm", "-rf", str(dataset)], check=True)
    totals = runs["local"][0]["totals"]
    decoded_mb = totals["bytes"] / 1e6
    medians = {
        engine: {
            measure: statistics.median(r[measure] for r in results)
            for measure in ("seconds", "read_s", "publish_s", "cpu_seconds")
        }
        for engine, results in runs.items()
    }
    local_cpu = medians["local"]["cpu_seconds"]
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "jobs": args.jobs,
        "repeat": args.repeat,
        "scale_s": scale_s,
        "files": len(files),
        "physical_mb": size_of(files) / 1e6,
        "decoded_mb": decoded_mb,
        "items": totals["items"],
        "runs": runs,
        "medians": medians,
        "ray_over_local": medians["ray"]["seconds"] / medians["local"]["seconds"],
        "ray_over_local_runs": [
            r["seconds"] / loc["seconds"] for loc, r in zip(runs["local"], runs["ray"], strict=True)
        ],
        "per_core_mb_per_cpu_s": decoded_mb / local_cpu if local_cpu else None,
        "publish_share_local": medians["local"]["publish_s"] / medians["local"]["seconds"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(
        f"{len(files):,} files, {decoded_mb:,.1f} decoded MB, --jobs {args.jobs}, "
        f"{args.repeat} interleaved repeats\n"
        f"local pool: {medians['local']['seconds']:.2f} s median "
        f"(read {medians['local']['read_s']:.2f} s, publish {medians['local']['publish_s']:.2f} s)"
        f"\nRay:        {medians['ray']['seconds']:.2f} s median "
        f"(read {medians['ray']['read_s']:.2f} s, publish {medians['ray']['publish_s']:.2f} s)\n"
        f"Ray / local: {report['ray_over_local']:.2f} "
        f"(per pair: {', '.join(f'{x:.2f}' for x in report['ray_over_local_runs'])})\n"
        f"per-core rate: {report['per_core_mb_per_cpu_s']:.1f} decoded MB per CPU-second"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
