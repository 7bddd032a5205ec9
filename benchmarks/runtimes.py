"""The cold build rate of each runtime's traces alone, scaled as the other corpora are.

    python benchmarks/runtimes.py [--megabytes 24] [--jobs 2] [--repeat 3] [--out FILE]
                                  [--runtime NAME ...]

For every registered runtime's folders of the shared corpus's generated set at hand
(``TRACEIDX_CORPUS`` or ``../shared/corpus``; the registry names them), the folder's JSON and
JSON-lines files (traces, documents, session folders' members) are copied until the target
size, each copy in a folder of its own with every id rewritten (`copy_ids`), so sessions stay
unique while every line keeps its real shape and size; a folder whose traces are a database
(OpenCode, Kilo, OpenClaw's SQLite release) is built from its databases as they are (their
ids cannot be rewritten byte for byte); a runtime that keeps sessions as folders (Mistral
Vibe) has each session folder copied whole, every file's path and bytes rewritten the same way
(no decode rate: its files are not all JSON lines). Each corpus is then built cold by a child
process (`run.run_build`), `--repeat` times, and the median's MB/s (bytes of the trace files
per second of the build) is reported with the items per second, beside the 2-process decode
rate of the same files measured in the same run (the ratio is what carries across machines).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora import size_of
from benchmarks.run import TRACEIDX_HOME, parallel_baseline, rate, run_build
from traceidx.demo import copy_ids
from traceidx.runtimes import RUNTIMES

#: folders of the generated set that are not traces
FOREIGN = {"_gen", "_aux"}
#: the files a runtime's traces are made of (JSON lines, plain or zstd, and JSON documents)
JSON_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd", ".json")
#: a Mistral Vibe subagent session's id (its first four hex digits are the copy's)
_CHILD = re.compile(rb"(child-)[0-9a-f]{4}(?=[0-9a-f]{20})")


def corpus_root() -> Path:
    value = os.environ.get("TRACEIDX_CORPUS")
    return Path(value) if value else Path(__file__).resolve().parents[2] / "shared" / "corpus"


def scaled_runtime(source: Path, root: Path, megabytes: float) -> list[Path]:
    """Copies of the trace files under `source` (same layout, ids rewritten per copy) in
    `root`, until their size reaches `megabytes`."""
    files = [
        p
        for p in sorted(source.rglob("*"))
        if p.is_file()
        and p.name.endswith(JSON_SUFFIXES)
        and not FOREIGN & set(p.relative_to(source).parts)
        and p.relative_to(source).parts[0] not in ("manifest.json", "expect.json")
    ]
    if not files:
        return []
    target, written, k = megabytes * 1e6, 0, 0
    out: list[Path] = []
    while written < target:
        for path in files:
            relative = Path(copy_ids(str(path.relative_to(source)).encode(), k).decode())
            copy = root / f"copy-{k:04d}" / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            copy.write_bytes(_rewritten(data, k, zstd=path.name.endswith((".zst", ".zstd"))))
            out.append(copy)
            written += len(data)
        k += 1
    return out


def folder_corpus(source: Path, root: Path, megabytes: float) -> list[Path]:
    """Copies of the session folders under `source` (a runtime that keeps a session as a
    folder: every file of it, its path and bytes with ids rewritten per copy) in `root`,
    until their size reaches `megabytes`."""
    from traceidx.sources.folder import layout_at

    folders = [
        p
        for p in sorted(source.rglob("*"))
        if p.is_dir()
        and not FOREIGN & set(p.relative_to(source).parts)
        and layout_at(str(p)) is not None
    ]
    members = [f for folder in folders for f in sorted(folder.rglob("*")) if f.is_file()]

    def unique(data: bytes, k: int) -> bytes:  # a Vibe subagent's id too: child-<24 hex>
        tag = b"%04x" % k
        return _CHILD.sub(lambda m: m.group(1) + tag, copy_ids(data, k))

    if not members:
        return []
    target, written, k = megabytes * 1e6, 0, 0
    out: list[Path] = []
    while written < target:
        for path in members:
            relative = Path(unique(str(path.relative_to(source)).encode(), k).decode())
            copy = root / f"copy-{k:04d}" / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            copy.write_bytes(unique(data, k))
            out.append(copy)
            written += len(data)
        k += 1
    return out


def _rewritten(data: bytes, k: int, zstd: bool) -> bytes:
    """A trace's bytes with its ids made unique to copy `k` (a zstd file decoded, rewritten
    and encoded again, frame by frame as one stream)."""
    if not zstd:
        return copy_ids(data, k)
    import zstandard

    with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
        plain = reader.read()
    return zstandard.ZstdCompressor().compress(copy_ids(plain, k))


def database_corpus(source: Path, root: Path, names: tuple[str, ...]) -> list[Path]:
    """A runtime's databases under `source` (files named as `names`, `fnmatch` patterns),
    copied as they are."""
    out = []
    found = (p for p in source.rglob("*") if any(fnmatch.fnmatch(p.name, n) for n in names))
    for path in sorted(found):
        copy = root / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
        out.append(copy)
    return out


def _cold(corpus: Path, jobs: int, home: str | None) -> dict[str, Any]:
    dataset = corpus.parent / "dataset"
    shutil.rmtree(dataset, ignore_errors=True)
    done = run_build(corpus, dataset, jobs, home or TRACEIDX_HOME)
    shutil.rmtree(dataset, ignore_errors=True)
    return done


def measure(
    runtime: str,
    corpus: Path,
    files: list[Path],
    jobs: int,
    repeat: int,
    folders: bool = False,
    base: str | None = None,
) -> dict[str, Any]:
    megabytes = size_of(files) / 1e6
    runs, before = [], []
    for n in range(repeat):  # with a base, alternated: base first in even rounds
        if base is not None and n % 2 == 0:
            before.append(_cold(corpus, jobs, base))
        runs.append(_cold(corpus, jobs, None))
        if base is not None and n % 2 == 1:
            before.append(_cold(corpus, jobs, base))
    median = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
    items = median["totals"].get("items", 0)
    lines = files[0].name.endswith(JSON_SUFFIXES) and not folders  # not a database
    decode = parallel_baseline(files, jobs) if lines else None  # of JSON lines files only
    result = {
        "runtime": runtime,
        "files": len(files),
        "megabytes": round(megabytes, 1),
        "seconds": round(median["seconds"], 2),
        "seconds_per_repeat": [round(r["seconds"], 2) for r in runs],
        "mb_per_s": rate(megabytes, median["seconds"]),
        "items_per_s": round(items / median["seconds"]) if median["seconds"] else 0,
        "cpu_seconds": round(median["cpu_seconds"], 2),
        "cpu_seconds_per_repeat": [round(r["cpu_seconds"], 2) for r in runs],
        "exit_codes": sorted({r["exit_code"] for r in runs}),
    }
    if decode is not None:
        result["decode_mb_per_s"] = decode["mb_per_s"]
        result["build_over_decode"] = round(result["mb_per_s"] / decode["mb_per_s"], 3)
        # by CPU time (a shared machine disturbs it less): the decode's over the build's median
        cpu = statistics.median(r["cpu_seconds"] for r in runs)
        result["decode_cpu_seconds"] = round(decode["cpu_seconds"], 2)
        result["build_over_decode_cpu"] = round(decode["cpu_seconds"] / cpu, 3)
    if before:
        base_cpu = statistics.median(r["cpu_seconds"] for r in before)
        result["before_cpu_seconds"] = round(base_cpu, 2)
        result["before_exit_codes"] = sorted({r["exit_code"] for r in before})
        result["cpu_over_before"] = round(
            statistics.median(r["cpu_seconds"] for r in runs) / base_cpu, 3
        )
        if decode is not None:
            result["before_build_over_decode_cpu"] = round(decode["cpu_seconds"] / base_cpu, 3)
    return result


def _commit(tree: Path) -> str:
    """The commit a source tree is checked out at (its path if it is no git checkout)."""
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or str(tree)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=24.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--base",
        type=Path,
        help="a source tree of an earlier commit (e.g. a git worktree): each corpus is built by "
        "it too, alternated, and its CPU-seconds reported as the before column",
    )
    parser.add_argument(
        "--runtime", action="append", choices=sorted(RUNTIMES), help="only these (repeatable)"
    )
    args = parser.parse_args()
    generated = corpus_root() / "generated"
    if not generated.is_dir():
        print(f"no generated corpus at {generated}; set TRACEIDX_CORPUS", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="traceidx-runtimes-") as work:
        chosen = sorted(args.runtime or RUNTIMES)
        for runtime, folder in [(n, f) for n in chosen for f in RUNTIMES[n].fixtures]:
            source = generated / folder
            if not source.is_dir():
                continue
            label = runtime if len(RUNTIMES[runtime].fixtures) == 1 else f"{runtime} ({folder})"
            corpus = Path(work) / folder / "traces"
            database = RUNTIMES[runtime].database
            folders = bool(RUNTIMES[runtime].folders)
            files = database_corpus(source, corpus, database.names) if database else []
            if not files and folders:
                files = folder_corpus(source, corpus, args.megabytes)
            if not files:
                files = scaled_runtime(source, corpus, args.megabytes)
            if not files:
                continue
            base = str(args.base.resolve()) if args.base else None
            results.append(measure(label, corpus, files, args.jobs, args.repeat, folders, base))
            print(json.dumps(results[-1]), file=sys.stderr)
            shutil.rmtree(corpus.parent, ignore_errors=True)
    header = (
        "| runtime | MB | cold build | MB/s | items/s | 2-process decode | build / decode "
        "| CPU-s: build (median) / decode | by CPU | before: CPU-s, by CPU | CPU / before |"
    )
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        decode = f"{r['decode_mb_per_s']:,.1f} MB/s" if "decode_mb_per_s" in r else "–"
        ratio = f"{r['build_over_decode']:.3f}" if "build_over_decode" in r else "–"
        cpu = f"{statistics.median(r['cpu_seconds_per_repeat']):.2f}"
        if "decode_cpu_seconds" in r:
            cpu += f" / {r['decode_cpu_seconds']:.2f}"
        by_cpu = f"{r['build_over_decode_cpu']:.3f}" if "build_over_decode_cpu" in r else "–"
        old = "–"
        if "before_cpu_seconds" in r:
            old = f"{r['before_cpu_seconds']:.2f}"
            if "before_build_over_decode_cpu" in r:
                old += f", {r['before_build_over_decode_cpu']:.3f}"
        change = f"{r['cpu_over_before']:.3f}" if "cpu_over_before" in r else "–"
        print(
            f"| {r['runtime']} | {r['megabytes']:,.1f} | {r['seconds']:.2f} s | "
            f"{r['mb_per_s']:,.1f} | {r['items_per_s']:,} | {decode} | {ratio} | {cpu} | {by_cpu} "
            f"| {old} | {change} |"
        )
    if args.out:
        payload = {"megabytes": args.megabytes, "jobs": args.jobs, "repeat": args.repeat}
        if args.base:
            payload["base"] = _commit(args.base)
        args.out.write_text(json.dumps({**payload, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
