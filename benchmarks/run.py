"""Benchmark runner: cold build, no-op rebuild, 1% append and queries, against raw decoding.

Usage::

    python benchmarks/run.py [--megabytes 1000] [--real-copies 40] [--single-mb 0]
                             [--jobs 2] [--ccusage] [--out results.json] [--workdir DIR]
                             [--short-sessions] [--repeat N]

For each corpus (``scaled``: id-unique, re-dated copies of the demo's sample of real traces of
all four runtimes up to ``--megabytes``, or of its smaller half only with ``--short-sessions``;
``real-shaped``: ``--real-copies`` id-unique copies of the public Claude Code transcripts, when
the shared corpus is present) it measures, in one run on this machine:

* ``baseline``: reading every trace file (decompressing zstd) and decoding every line with
  msgspec, single process: the raw decode rate of the same bytes; ``parallel_baseline``: the
  same work shared among ``--jobs`` processes (the raw rate on the cores the build uses);
* ``cold``: ``traceidx build`` into an empty dataset in a child process (``--jobs``
  workers): seconds, MB/s of logical JSONL, items/s, peak RSS of the main process and of
  the largest worker, CPU-seconds of all its processes against the CPU-seconds of the
  2-process decode (``cold_over_parallel_baseline_cpu_rate_runs``: steadier than wall time on a
  shared machine) and the share of the cores it kept busy (``cold_core_use``), and the
  ratio of its rate to each baseline's rate (with
  ``--repeat N``, the baselines and the cold build are measured N times, interleaved, and
  the medians reported next to every run's time, and the ratio of each repeat's cold build
  to the 2-process decode measured just before it);
* ``noop``: the same build again (nothing changed);
* ``append``: 1% new lines appended across the corpus (a copy of each chosen source's last
  line), then the build;
* ``append_one``: one line appended to one source, then the build;
* queries, in process over ``traceidx.connect`` (median of 5) and as whole ``traceidx sql``
  commands: daily usage by model, slowest tool calls, top shell programs;
* ``report usage``: the whole warm ``traceidx report usage`` command (median of 5);
* ``ccusage`` (``--ccusage``, real-shaped corpus only): ``npx ccusage@20.0.24 claude daily
  --offline --json`` over the same files, for comparison with a popular usage reporter;
* ``single`` (``--single-mb N``): one source of N MB (the largest scaled file, repeated),
  cold build then one appended line (resumed from the source's checkpoint).

Results print as a table and are saved as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import zstandard

# the benchmarks package; after PYTHONPATH, so that an install given there is measured
sys.path.append(str(Path(__file__).resolve().parents[1]))

import contextlib

import traceidx
from benchmarks.corpora import real_shaped, scaled, size_of
from traceidx.sources.sourceio import StreamStats, logical_chunks

#: child processes import the traceidx this runner imported (an install or the source)
TRACEIDX_HOME = str(Path(traceidx.__file__).resolve().parents[1])


def _child(
    command: list[str], home: str = TRACEIDX_HOME, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": home}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=home, **kwargs)


QUERIES = {
    "daily_usage_by_model": (
        "SELECT strftime(started_at, '%Y-%m-%d') AS day, model, sum(input) AS input, "
        "sum(output) AS output, sum(total) AS total FROM loop_usage GROUP BY ALL ORDER BY ALL"
    ),
    "slowest_tool_calls": (
        "SELECT tool_name, duration_ms, item_id FROM tool_calls "
        "WHERE duration_ms IS NOT NULL ORDER BY duration_ms DESC LIMIT 20"
    ),
    "top_programs": (
        "SELECT program, count(*) AS n FROM shell_invocations GROUP BY ALL ORDER BY n DESC LIMIT 20"
    ),
}

#: the ccusage release compared against (pinned: newer releases need a native binary that
#: is not published for every platform)
CCUSAGE = "ccusage@20.0.24"

# Peak memory: the build process's own high-water mark (VmHWM, which exec resets, unlike
# ru_maxrss) and the largest worker's ru_maxrss. The child sets up its process as the
# `traceidx build` command does (`traceidx.cli.process`: `configure`, `owns_arrow`) and times
# the build alone, without the interpreter's start; its CPU time is the build process's
# during the build plus its workers' (reaped when the build's pool shuts down).
CHILD = """
import json, resource, sys, time
from pathlib import Path
from traceidx.cli.process import configure
configure()
try:
    from traceidx.cli.process import owns_arrow
except ImportError:  # a source tree from before it
    owns_arrow = lambda: None
owns_arrow()
from traceidx.pipeline.job import build
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
start, own = time.perf_counter(), cpu(resource.RUSAGE_SELF)
report = build([Path(sys.argv[1])], Path(sys.argv[2]), jobs=int(sys.argv[3]))
elapsed = time.perf_counter() - start
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
used = cpu(resource.RUSAGE_SELF) - own + workers.ru_utime + workers.ru_stime
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"seconds": elapsed, "cpu_seconds": used, "totals": report.totals(),
                  "actions": dict(report.actions), "exit_code": report.exit_code,
                  "peak_main_kib": hwm, "peak_worker_kib": workers.ru_maxrss}))
"""


def baseline(files: list[Path]) -> dict[str, float]:
    """Raw rate: read (and decompress) every file and msgspec-decode every line (a JSON
    document, ``.json``, as one value)."""
    decoder = msgspec.json.Decoder()
    start, cpu = time.perf_counter(), time.process_time()
    size = lines = 0
    for path in files:
        with open(path, "rb") as handle:
            stream = b"".join(logical_chunks(handle, StreamStats()))
        size += len(stream)
        if path.name.endswith(".json"):
            lines += 1
            with contextlib.suppress(msgspec.DecodeError):
                decoder.decode(stream)
            continue
        for line in stream.split(b"\n"):
            if line:
                lines += 1
                with contextlib.suppress(msgspec.DecodeError):
                    decoder.decode(line)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "mb": size / 1e6,
        "lines": lines,
        "mb_per_s": size / 1e6 / seconds,
    }


def _decode_files(paths: list[str]) -> tuple[int, float]:
    """Bytes of files read (decompressed) and msgspec-decoded in a worker, and its CPU time."""
    result = baseline([Path(p) for p in paths])
    return round(result["mb"] * 1e6), result["cpu_seconds"]


def parallel_baseline(files: list[Path], jobs: int) -> dict[str, float]:
    """The baseline with the files shared among `jobs` processes (largest first, each to
    the least loaded), timed from the first file read to the last line decoded."""
    shares: list[list[str]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for path in sorted(files, key=lambda p: p.stat().st_size, reverse=True):
        least = loads.index(min(loads))
        shares[least].append(str(path))
        loads[least] += path.stat().st_size
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(_decode_files, [[] for _ in range(jobs)]))  # workers started
        start = time.perf_counter()
        done = list(pool.map(_decode_files, shares))
        seconds = time.perf_counter() - start
    size = sum(b for b, _ in done)
    cpu = sum(c for _, c in done)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "mb": size / 1e6,
        "mb_per_s": size / 1e6 / seconds,
    }


def settle() -> None:
    """Write back every dirty page before a measurement starts, so that the kernel's flushing
    of what an earlier step wrote (the corpora just generated, a dataset) does not run, on
    the same cores, inside it (before, the first cold builds after generating the corpora had
    run up to 10% slower than the last ones of the same run)."""
    os.sync()


def run_build(corpus: Path, dataset: Path, jobs: int, home: str = TRACEIDX_HOME) -> dict[str, Any]:
    """A cold or incremental build by a child process importing the traceidx of `home` (a
    source tree: by default the one the runner imported)."""
    settle()
    command = [sys.executable, "-c", CHILD, str(corpus), str(dataset), str(jobs)]
    done = _child(command, home, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def append_lines(files: list[Path], count: int) -> int:
    """Append `count` lines (copies of sources' last lines), spread over the sources."""
    written = 0
    step = max(1, len(files) // max(count, 1))
    index = 0
    while written < count and files:
        path = files[index % len(files)]
        index += step
        with open(path, "rb") as handle:
            data = b"".join(logical_chunks(handle, stats := StreamStats()))
        last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1] + b"\n"
        with open(path, "ab") as out:
            if stats.compression == "zstd":
                out.write(zstandard.ZstdCompressor(write_checksum=True).compress(last))
            else:
                out.write(last)
        written += 1
    return written


def time_queries(dataset: Path) -> dict[str, Any]:
    from traceidx.analysis.query import connect

    out: dict[str, Any] = {}
    start = time.perf_counter()
    con = connect(dataset)
    out["connect_s"] = time.perf_counter() - start
    for name, sql in QUERIES.items():
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            con.execute(sql).fetchall()
            runs.append(time.perf_counter() - start)
        command = [sys.executable, "-m", "traceidx.cli.main", "sql", "--dataset", str(dataset), sql]
        start = time.perf_counter()
        _child(command, check=True)
        out[name] = {
            "in_process_median_s": statistics.median(runs),
            "command_s": time.perf_counter() - start,
        }
    out["report_usage_command_s"] = statistics.median(report_usage(dataset) for _ in range(5))
    return out


def rate(mb: float, seconds: float) -> float:
    return round(mb / seconds, 1) if seconds else 0.0


def scenario(
    name: str, corpus: Path, files: list[Path], jobs: int, repeat: int = 1
) -> dict[str, Any]:
    """Every measurement for one corpus; the baselines and the cold build are measured
    `repeat` times, interleaved (so the machine's drift touches them alike), and their
    medians reported."""
    bases: list[dict[str, float]] = []
    wides: list[dict[str, float]] = []
    colds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=corpus.parent) as tmp:
        for run in range(repeat):
            dataset = Path(tmp) / f"dataset-{run}"
            settle()
            bases.append(baseline(files))
            settle()
            wides.append(parallel_baseline(files, jobs))
            colds.append(run_build(corpus, dataset, jobs))
            if run < repeat - 1:
                shutil.rmtree(dataset)
        base = _median_run(bases)
        wide = _median_run(wides)
        cold = _median_run(colds)
        noop = run_build(corpus, dataset, jobs)
        queries = time_queries(dataset)
        appended = append_lines(files, max(1, int(base["lines"]) // 100))
        append = run_build(corpus, dataset, jobs)
        append_lines(files[len(files) // 2 :], 1)
        append_one = run_build(corpus, dataset, jobs)
    totals = cold["totals"]
    return {
        "corpus": name,
        "files": len(files),
        "physical_mb": round(size_of(files) / 1e6, 1),
        "logical_mb": round(base["mb"], 1),
        "lines": base["lines"],
        "baseline_s": round(base["seconds"], 3),
        "baseline_mb_per_s": round(base["mb_per_s"], 1),
        "cold_s": round(cold["seconds"], 3),
        "cold_mb_per_s": rate(base["mb"], cold["seconds"]),
        "cold_over_baseline_rate": round(base["seconds"] / cold["seconds"], 3),
        "parallel_baseline_mb_per_s": round(wide["mb_per_s"], 1),
        "cold_over_parallel_baseline_rate": round(wide["seconds"] / cold["seconds"], 3),
        "repeats": repeat,
        "cold_s_runs": [round(c["seconds"], 3) for c in colds],
        "baseline_s_runs": [round(b["seconds"], 3) for b in bases],
        "parallel_baseline_s_runs": [round(w["seconds"], 3) for w in wides],
        # each repeat's cold build against the 2-process decode measured just before it
        "cold_over_parallel_baseline_rate_runs": [
            round(w["seconds"] / c["seconds"], 3) for w, c in zip(wides, colds, strict=True)
        ],
        # CPU time, which the machine's neighbours disturb less than wall time: what the
        # build costs against what decoding the same bytes costs, and how busy it keeps
        # the cores (the wall ratio above is about the CPU ratio times the build's core use
        # over the decode's)
        "cold_cpu_s": round(statistics.median(c["cpu_seconds"] for c in colds), 3),
        "parallel_baseline_cpu_s": round(statistics.median(w["cpu_seconds"] for w in wides), 3),
        "cold_over_parallel_baseline_cpu_rate_runs": [
            round(w["cpu_seconds"] / c["cpu_seconds"], 3) for w, c in zip(wides, colds, strict=True)
        ],
        "cold_core_use": round(cold["cpu_seconds"] / (cold["seconds"] * jobs), 3),
        "items": totals["items"],
        "items_per_s": round(totals["items"] / cold["seconds"]),
        "peak_main_mib": round(max(c["peak_main_kib"] for c in colds) / 1024),
        "peak_worker_mib": round(max(c["peak_worker_kib"] for c in colds) / 1024),
        "noop_s": round(noop["seconds"], 3),
        "append_lines": appended,
        "append_s": round(append["seconds"], 3),
        "append_one_s": round(append_one["seconds"], 3),
        "sources": totals["dataset_sources"],
        "queries": queries,
    }


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median time (the lower middle one of an even count)."""
    ordered = sorted(runs, key=lambda r: float(r["seconds"]))
    return ordered[(len(ordered) - 1) // 2]


def ccusage(corpus: Path) -> float | None:
    """Seconds `ccusage claude daily --offline --json` takes over the Claude Code transcripts
    under `corpus` (laid out for it as a config dir whose ``projects/`` is the corpus); None
    when npx is missing or ccusage fails or finds no usage (a run that read nothing is not a
    measurement)."""
    if shutil.which("npx") is None:
        return None
    with tempfile.TemporaryDirectory() as config:
        (Path(config) / "projects").symlink_to(corpus.resolve(), target_is_directory=True)
        env = {**os.environ, "CLAUDE_CONFIG_DIR": config}
        command = ["npx", "--yes", CCUSAGE, "claude", "daily", "--offline", "--json"]
        subprocess.run([*command[:3], "--version"], capture_output=True, env=env)  # install
        settle()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, env=env)
        seconds = time.perf_counter() - start
    try:
        daily = json.loads(done.stdout).get("daily")
    except (ValueError, AttributeError):
        daily = None
    return seconds if done.returncode == 0 and daily else None


def report_usage(dataset: Path) -> float:
    """Seconds the whole `traceidx report usage` command takes on a built dataset (warm:
    after one run that loads the files into the page cache)."""
    command = [
        sys.executable,
        "-m",
        "traceidx.cli.main",
        "report",
        "usage",
        "--dataset",
        str(dataset),
    ]
    _child(command, check=True)
    start = time.perf_counter()
    _child(command, check=True)
    return time.perf_counter() - start


def single(root: Path, megabytes: float, jobs: int) -> dict[str, Any]:
    """One big source (the largest file under `root`, repeated, beside `root`): cold build,
    then one appended line."""
    source = max(root.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    big = root.parent / "single" / "big.jsonl"
    big.parent.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    with open(big, "wb") as out:
        for _ in range(max(1, int(megabytes * 1e6 / len(data)))):
            out.write(data)
    with tempfile.TemporaryDirectory(dir=root.parent) as tmp:
        dataset = Path(tmp) / "dataset"
        cold = run_build(big.parent, dataset, jobs)
        append_lines([big], 1)
        append = run_build(big.parent, dataset, jobs)
    return {
        "source": source.name,
        "mb": round(big.stat().st_size / 1e6, 1),
        "cold_s": round(cold["seconds"], 3),
        "cold_mb_per_s": rate(big.stat().st_size / 1e6, cold["seconds"]),
        "peak_main_mib": round(cold["peak_main_kib"] / 1024),
        "peak_worker_mib": round(cold["peak_worker_kib"] / 1024),
        "append_one_s": round(append["seconds"], 3),
        "append_one_resumed": append["totals"]["resumed"],
        "append_one_peak_main_mib": round(append["peak_main_kib"] / 1024),
    }


def print_table(results: list[dict[str, Any]]) -> None:
    keys = [k for k in results[0] if k not in ("queries", "corpus")]
    width = max(len(k) for k in keys) + 2

    def cell(value: Any) -> str:
        return "/".join(map(str, value)) if isinstance(value, list) else str(value)

    widths = [max(16, *(len(cell(r.get(k, ""))) + 2 for k in keys)) for r in results]
    print(
        "".ljust(width)
        + "".join(r["corpus"].rjust(w) for r, w in zip(results, widths, strict=True))
    )
    for key in keys:
        cells = (cell(r.get(key, "")).rjust(w) for r, w in zip(results, widths, strict=True))
        print(key.ljust(width) + "".join(cells))
    for r in results:
        for name, q in r["queries"].items():
            if isinstance(q, dict):
                print(
                    f"{r['corpus']}: {name}: {q['in_process_median_s'] * 1000:.0f} ms in process, "
                    f"{q['command_s']:.2f} s as a command"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1000)
    parser.add_argument("--real-copies", type=int, default=40)
    parser.add_argument("--single-mb", type=float, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure the baselines and the cold build this many times (medians reported)",
    )
    parser.add_argument(
        "--short-sessions",
        action="store_true",
        help="copy the sample's smaller half of sessions only (many small sources)",
    )
    parser.add_argument("--ccusage", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/latest.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--public-claude", type=Path, default=None)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="traceidx-bench-"))
    results: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    try:
        start = time.perf_counter()
        files = scaled(work / "scaled", args.megabytes, args.short_sessions)
        extra["scale_s"] = round(time.perf_counter() - start, 1)
        results.append(scenario("scaled", work / "scaled", files, args.jobs, args.repeat))
        public = args.public_claude or (
            Path(__file__).resolve().parents[2] / "shared" / "corpus" / "public" / "claude"
        )
        if args.real_copies and public.is_dir():
            root = work / "real" / "projects"
            files = real_shaped(root, public, args.real_copies)
            results.append(scenario("real-shaped", root, files, args.jobs, args.repeat))
            if args.ccusage:
                extra["ccusage_daily_s"] = ccusage(work / "real")
        if args.single_mb:
            extra["single"] = single(work / "scaled", args.single_mb, args.jobs)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "jobs": args.jobs,
        "short_sessions": args.short_sessions,
        "results": results,
        **extra,
    }
    print(f"traceidx from {TRACEIDX_HOME}")
    print_table(results)
    print(json.dumps(extra, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
