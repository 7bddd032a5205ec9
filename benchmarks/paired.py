"""Paired before/after benchmark: an earlier commit's install against the working tree's.

Usage::

    python benchmarks/paired.py --base COMMIT [--head COMMIT] [--repeat 3] [--jobs 2]
                                [--real-copies 40 | --megabytes N [--runtime NAME]]
                                [--workdir DIR] [--pure]
                                [--out FILE]

Each side is installed the way a user gets it (``pip install`` of its tree; a commit from when
traceidx shipped mypyc-compiled modules is compiled unless ``--pure``) into a folder of its
own under ``--workdir``: the base from ``git archive`` of ``--base``, the head from ``--head``
or, by default, the working tree as it is (uncommitted edits included). Installs of a commit
are kept and reused; the working tree is installed again on every run.

Both then build the same corpus cold (``real-shaped``: ``--real-copies`` id-unique copies of
the public Claude Code transcripts, the default; or the ``scaled`` demo sample up to
``--megabytes``; or, with ``--runtime``, one runtime's traces of the shared corpus's
generated set scaled to ``--megabytes`` as `benchmarks/runtimes.py` scales them), alternated
ABBA so that neither side always runs first, each build a whole ``traceidx build`` process
started in a folder with no source tree beside it. For every build it records wall seconds,
CPU-seconds of the whole process tree and the peak resident memory of the largest process in
it (``wait4``'s ``ru_maxrss``, which covers the build process and its reaped workers), and
checks that it exited 0. It prints both sides' medians, the median
of the per-round ratios head/base (and its range) and the ratio of peak memories, and saves
the JSON to ``--out``.
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
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

# the benchmarks package, importable when run as a script
REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

from benchmarks.corpora import real_shaped, scaled, size_of  # noqa: E402
from benchmarks.run import CCUSAGE, ccusage  # noqa: E402
from benchmarks.runtimes import corpus_root, scaled_runtime  # noqa: E402
from traceidx.runtimes import RUNTIMES  # noqa: E402

#: what a build or report process runs: the package's own command-line entry point (a module
#: of its own in older commits, inside the `cli` package now)
BUILD = """import sys
try:
    from traceidx.cli.main import main
except ImportError:
    from traceidx.cli import main
sys.exit(main(sys.argv[1:]))"""


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _install(tree: Path, target: Path, pure: bool) -> None:
    """`pip install` `tree` into `target` (no dependencies: this interpreter's are used)."""
    shutil.rmtree(target, ignore_errors=True)
    env = {**os.environ, "TRACEIDX_PURE": "1" if pure else ""}
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    command += ["--no-build-isolation", "--target", str(target), str(tree)]
    subprocess.run(command, env=env, check=True)


def compiled(target: Path) -> bool:
    """Whether an install holds extension modules (older commits compiled theirs with mypyc)."""
    return any(target.glob("traceidx/**/*.so"))


def install_commit(commit: str, workdir: Path, pure: bool) -> tuple[str, Path]:
    """The install of `commit` under `workdir` (made once, then reused); its full hash."""
    sha = _git("rev-parse", "--verify", f"{commit}^{{commit}}")
    target = workdir / f"install-{sha[:12]}{'-pure' if pure else ''}"
    stamp = target / ".installed"
    if stamp.exists():
        return sha, target
    source = workdir / f"src-{sha[:12]}"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryFile() as spool:
        spool.write(archive)
        spool.seek(0)
        with tarfile.open(fileobj=spool) as tar:
            tar.extractall(source, filter="data")
    print(f"installing {sha[:12]} ...", file=sys.stderr, flush=True)
    _install(source, target, pure)
    stamp.touch()
    return sha, target


def install_tree(workdir: Path, pure: bool) -> Path:
    """The working tree as it is, installed again under `workdir`."""
    print("installing the working tree ...", file=sys.stderr, flush=True)
    source = workdir / "src-worktree"
    shutil.rmtree(source, ignore_errors=True)
    listed = _git("ls-files", "--cached", "--others", "--exclude-standard", "-z")
    for name in filter(None, listed.split("\0")):
        path = REPO / name
        if path.is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    target = workdir / f"install-worktree{'-pure' if pure else ''}"
    _install(source, target, pure)
    return target


def corpus(workdir: Path, args: argparse.Namespace) -> tuple[Path, int]:
    """The corpus both sides build (made once per shape and size, then reused)."""
    if args.runtime:
        root = workdir / f"corpus-{args.runtime}-{args.megabytes:g}"
        traces = corpus_root() / "generated" / RUNTIMES[args.runtime].fixtures[0]
        make = lambda: scaled_runtime(traces, root, args.megabytes)  # noqa: E731
    elif args.megabytes:
        root = workdir / f"corpus-scaled-{args.megabytes:g}"
        make = lambda: scaled(root, args.megabytes)  # noqa: E731
    else:
        root = workdir / f"corpus-real-{args.real_copies}"
        make = lambda: real_shaped(root, args.public_claude, args.real_copies)  # noqa: E731
    stamp = workdir / f"{root.name}.files"
    if not stamp.exists():
        shutil.rmtree(root, ignore_errors=True)
        files = make()
        stamp.write_text(str(size_of(files)))
    return root, int(stamp.read_text())


def cold_build(install: Path, root: Path, dataset: Path, jobs: int) -> dict[str, Any]:
    """One cold `traceidx build` of `root` into an empty `dataset` by `install`."""
    shutil.rmtree(dataset, ignore_errors=True)
    os.sync()  # what an earlier step wrote is flushed before, not during, the measurement
    env = {**os.environ, "PYTHONPATH": str(install)}
    command = [sys.executable, "-c", BUILD, "build", "--dataset", str(dataset)]
    command += ["--jobs", str(jobs), str(root)]
    start = time.perf_counter()
    child = subprocess.Popen(
        command,
        env=env,
        cwd=install.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        tail = errors.decode(errors="replace")[-2000:]
        raise SystemExit(f"paired: the build by {install.name} exited {child.returncode}\n{tail}")
    size = sum(p.stat().st_size for p in dataset.rglob("*") if p.is_file())
    return {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
        "dataset_bytes": size,
    }


def warm_report(install: Path, dataset: Path) -> float:
    """Seconds of a warm `traceidx report usage` on `dataset` by `install` (the whole process,
    after one run that loaded the files)."""
    env = {**os.environ, "PYTHONPATH": str(install)}
    command = [sys.executable, "-c", BUILD, "report", "usage", "--dataset", str(dataset)]
    seconds = 0.0
    for _ in range(2):
        start = time.perf_counter()
        subprocess.run(command, env=env, cwd=install.parent, stdout=subprocess.DEVNULL, check=True)
        seconds = time.perf_counter() - start
    return seconds


def summarise(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {
        key: statistics.median(run[key] for run in runs)
        for key in ("seconds", "cpu_seconds", "peak_mib", "dataset_bytes", "report_seconds")
    }


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--head", help="the later commit (default: the working tree as it is)")
    parser.add_argument("--repeat", type=int, default=3, help="ABBA rounds (each builds twice)")
    parser.add_argument("--jobs", type=int, default=2, help="build workers")
    parser.add_argument("--real-copies", type=int, default=40, help="copies of the transcripts")
    parser.add_argument("--megabytes", type=float, default=0, help="the scaled corpus instead")
    parser.add_argument(
        "--runtime", help="with --megabytes: one runtime's generated traces, scaled (runtimes.py)"
    )
    parser.add_argument(
        "--pure", action="store_true", help="install a side that compiles with mypyc without it"
    )
    parser.add_argument(
        "--ccusage", action="store_true", help=f"also time {CCUSAGE} daily each round (npx)"
    )
    parser.add_argument(
        "--public-claude", type=Path, default=REPO.parent / "shared/corpus/public/claude"
    )
    parser.add_argument("--workdir", type=Path, help="kept installs and corpora (default: temp)")
    parser.add_argument("--out", type=Path, help="the JSON result (default: results/paired-*)")
    args = parser.parse_args()
    if args.repeat < 1 or args.jobs < 1:
        parser.error("--repeat and --jobs must be at least 1")
    if args.runtime and not args.megabytes:
        parser.error("--runtime needs --megabytes (the size its traces are scaled to)")
    if not args.megabytes and not args.public_claude.is_dir():
        parser.error(f"no public Claude Code transcripts at {args.public_claude} (--public-claude)")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="traceidx-paired-"))
    workdir.mkdir(parents=True, exist_ok=True)
    base_sha, base = install_commit(args.base, workdir, args.pure)
    if args.head:
        head_sha, head = install_commit(args.head, workdir, args.pure)
    else:
        head_sha, head = _git("rev-parse", "HEAD") + "+worktree", install_tree(workdir, args.pure)
    root, size = corpus(workdir, args)
    sides = {"base": base, "head": head}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
    reporter: list[float] = []  # ccusage's seconds, a run per round
    for n in range(args.repeat):
        order = ("base", "head") if n % 2 == 0 else ("head", "base")
        for side in order:
            dataset = workdir / f"dataset-{side}"
            run = cold_build(sides[side], root, dataset, args.jobs)
            run["report_seconds"] = warm_report(sides[side], dataset)
            runs[side].append(run)
            print(
                f"round {n + 1}/{args.repeat} {side}: {run['seconds']:.2f} s, "
                f"{run['cpu_seconds']:.1f} CPU-s, {run['peak_mib']:.0f} MiB, "
                f"report usage {run['report_seconds']:.2f} s",
                file=sys.stderr,
                flush=True,
            )
        if args.ccusage and not args.megabytes:
            seconds = ccusage(root)
            if seconds is None:
                raise SystemExit(f"paired: {CCUSAGE} failed or read nothing (npx, network?)")
            reporter.append(seconds)
            print(f"round {n + 1}/{args.repeat} ccusage: {seconds:.2f} s", file=sys.stderr)
    ratios = [h["seconds"] / b["seconds"] for b, h in zip(runs["base"], runs["head"], strict=True)]
    cpu_ratios = [
        h["cpu_seconds"] / b["cpu_seconds"] for b, h in zip(runs["base"], runs["head"], strict=True)
    ]
    medians = {side: summarise(side_runs) for side, side_runs in runs.items()}
    result = {
        "base": base_sha,
        "head": head_sha,
        "build": {side: "compiled" if compiled(path) else "pure" for side, path in sides.items()},
        "corpus": {"path_name": root.name, "bytes": size},
        "jobs": args.jobs,
        "repeat": args.repeat,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "runs": runs,
        "medians": medians,
        "time_ratio_median": statistics.median(ratios),
        "time_ratio_range": [min(ratios), max(ratios)],
        "cpu_ratio_median": statistics.median(cpu_ratios),
        "peak_ratio": medians["head"]["peak_mib"] / medians["base"]["peak_mib"],
        "peak_max_mib": {side: max(r["peak_mib"] for r in rs) for side, rs in runs.items()},
    }
    if reporter:
        result["ccusage"] = {"release": CCUSAGE, "seconds": reporter}
        result["ccusage_median_s"] = statistics.median(reporter)
        result["rate_over_ccusage"] = {  # traceidx's rate on these bytes over ccusage's
            side: statistics.median(reporter) / medians[side]["seconds"] for side in medians
        }
    report_ratios = [
        h["report_seconds"] / b["report_seconds"]
        for b, h in zip(runs["base"], runs["head"], strict=True)
    ]
    result["report_ratio_median"] = statistics.median(report_ratios)
    rows = [
        ("", "cold build (median)", "CPU-seconds", "peak memory", "dataset", "warm report usage")
    ]
    for side, sha in (("base", base_sha), ("head", head_sha)):
        m = medians[side]
        rows.append(
            (
                f"{side} {sha[:12]}",
                f"{m['seconds']:.2f} s",
                f"{m['cpu_seconds']:.1f}",
                f"{m['peak_mib']:.0f} MiB",
                f"{m['dataset_bytes'] / 1e6:,.1f} MB",
                f"{m['report_seconds']:.3f} s",
            )
        )
    rows.append(
        (
            "head / base",
            f"{result['time_ratio_median']:.3f} ({min(ratios):.2f}-{max(ratios):.2f})",
            f"{result['cpu_ratio_median']:.3f}",
            f"{result['peak_ratio']:.3f}",
            "",
            f"{result['report_ratio_median']:.3f}",
        )
    )
    print(f"{size / 1e6:,.1f} MB of traces ({root.name}), --jobs {args.jobs}, {args.repeat} rounds")
    print(_table(rows))
    if reporter:
        rate = result["rate_over_ccusage"]
        print(
            f"{CCUSAGE} daily: {result['ccusage_median_s']:.2f} s (median); traceidx's rate over "
            f"its: base {rate['base']:.2f}, head {rate['head']:.2f}"
        )
    out = args.out or REPO / "benchmarks/results" / f"paired-{time.strftime('%Y-%m-%d-%H%M')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
