"""Build throughput and peak memory on a generated corpus, against raw msgspec decoding.

Usage: python benchmarks/bench_build.py [--sessions N] [--seed S] [--jobs J] [--repeat R]

Generates the demo corpus (N sessions of every runtime), then measures in the same run:
* baseline: decoding every line of the same files with msgspec (no framing, no projection);
* build: a full `traceidx build` into a fresh dataset (framing, adapters, projection,
  Arrow encoding, Parquet publication) in a child process, for its peak RSS.
Reports MB/s of JSONL in, items/s out, peak memory and the build/baseline time ratio
(medians over --repeat runs).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from traceidx.demo import generate_corpus


def baseline(files: list[Path]) -> tuple[float, int]:
    """Seconds to read and msgspec-decode every line; number of lines."""
    decoder = msgspec.json.Decoder()
    start = time.perf_counter()
    lines = 0
    for path in files:
        for line in path.read_bytes().splitlines():
            decoder.decode(line)
            lines += 1
    return time.perf_counter() - start, lines


CHILD = """
import json, resource, sys, time
from pathlib import Path
from traceidx.build import build
start = time.perf_counter()
report = build([Path(sys.argv[1])], Path(sys.argv[2]), jobs=int(sys.argv[3]))
elapsed = time.perf_counter() - start
peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": elapsed, "totals": report.totals(),
                  "peak_kib": max(peak_self, peak_children)}))
"""


def build_once(corpus: Path, jobs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(corpus), str(Path(tmp) / "ds"), str(jobs)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        written = generate_corpus(corpus, sessions=args.sessions, seed=args.seed)
        files = [path for paths in written.values() for path in paths]
        size = sum(f.stat().st_size for f in files)
        base = [baseline(files) for _ in range(args.repeat)]
        runs = [build_once(corpus, args.jobs) for _ in range(args.repeat)]
    base_s = statistics.median(b[0] for b in base)
    build_s = statistics.median(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    totals = runs[0]["totals"]
    assert isinstance(totals, dict)
    peak_mib = max(int(r["peak_kib"]) for r in runs) / 1024  # type: ignore[call-overload]
    report = {
        "sessions": args.sessions,
        "files": len(files),
        "jsonl_mb": round(size / 1e6, 1),
        "lines": base[0][1],
        "baseline_msgspec_decode_s": round(base_s, 3),
        "baseline_mb_per_s": round(size / 1e6 / base_s, 1),
        "build_s": round(build_s, 3),
        "build_mb_per_s": round(size / 1e6 / build_s, 1),
        "items": totals["items"],
        "items_per_s": round(totals["items"] / build_s),
        "build_over_baseline": round(build_s / base_s, 1),
        "peak_rss_mib": round(peak_mib, 1),
        "jobs": args.jobs,
        "bench_process_peak_mib": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
