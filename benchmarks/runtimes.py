"""The cold build rate of each runtime's traces alone, scaled as the other corpora are.

    python benchmarks/runtimes.py [--megabytes 24] [--jobs 2] [--repeat 3] [--out FILE]

For every registered runtime whose folder of the shared corpus's generated set is at hand
(``TRACEIDX_CORPUS`` or ``../shared/corpus``), its trace files are copied until the target
size, each copy in a folder of its own with every id rewritten (`copy_ids`), so sessions stay
unique while every line keeps its real shape and size; a runtime whose traces are a database
(OpenCode) is built from its one database as it is (its ids cannot be rewritten byte for
byte); a runtime that keeps sessions as folders (Mistral Vibe) has each session folder copied
whole, every file's path and bytes rewritten the same way (no decode rate: its files are not
all JSON lines). Each corpus is then built cold by a child process (`run.run_build`),
`--repeat` times, and the median's MB/s (bytes of the trace files per second of the build)
is reported with the items per second, beside the 2-process decode rate of the same files
measured in the same run (the ratio is what carries across machines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora import size_of, trace_files
from benchmarks.run import parallel_baseline, rate, run_build
from traceidx.demo import copy_ids
from traceidx.runtimes import RUNTIMES

#: the generated set's folder of each runtime
FOLDERS = {"claude_code": "claude"}
#: folders of the generated set that are not traces
FOREIGN = {"_gen", "_aux"}
#: a Mistral Vibe subagent session's id (its first four hex digits are the copy's)
_CHILD = re.compile(rb"(child-)[0-9a-f]{4}(?=[0-9a-f]{20})")


def _corpus_root() -> Path:
    value = os.environ.get("TRACEIDX_CORPUS")
    return Path(value) if value else Path(__file__).resolve().parents[2] / "shared" / "corpus"


def scaled_runtime(source: Path, root: Path, megabytes: float) -> list[Path]:
    """Copies of the trace files under `source` (same layout, ids rewritten per copy) in
    `root`, until their size reaches `megabytes`."""
    files = [p for p in trace_files(source) if not FOREIGN & set(p.relative_to(source).parts)]
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
    from traceidx.sources.folder import layout_of

    folders = [
        p
        for p in sorted(source.rglob("*"))
        if p.is_dir()
        and not FOREIGN & set(p.relative_to(source).parts)
        and layout_of(f.name for f in p.iterdir() if f.is_file()) is not None
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


def database_corpus(source: Path, root: Path) -> list[Path]:
    """A runtime's databases under `source`, copied as they are."""
    out = []
    for path in sorted(source.rglob("*.db")):
        copy = root / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
        out.append(copy)
    return out


def measure(
    runtime: str, corpus: Path, files: list[Path], jobs: int, repeat: int
) -> dict[str, Any]:
    megabytes = size_of(files) / 1e6
    runs = []
    for n in range(repeat):
        dataset = corpus.parent / f"dataset-{n}"
        shutil.rmtree(dataset, ignore_errors=True)
        runs.append(run_build(corpus, dataset, jobs))
        shutil.rmtree(dataset, ignore_errors=True)
    median = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
    items = median["totals"].get("items", 0)
    lines = not files[0].name.endswith(".db") and RUNTIMES[runtime].folders == ()
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
        "exit_codes": sorted({r["exit_code"] for r in runs}),
    }
    if decode is not None:
        result["decode_mb_per_s"] = decode["mb_per_s"]
        result["build_over_decode"] = round(result["mb_per_s"] / decode["mb_per_s"], 3)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=24.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    generated = _corpus_root() / "generated"
    if not generated.is_dir():
        print(f"no generated corpus at {generated}; set TRACEIDX_CORPUS", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="traceidx-runtimes-") as work:
        for runtime in sorted(RUNTIMES):
            source = generated / FOLDERS.get(runtime, runtime)
            if not source.is_dir():
                continue
            corpus = Path(work) / runtime / "traces"
            if RUNTIMES[runtime].database is not None:
                files = database_corpus(source, corpus)
            elif RUNTIMES[runtime].folders:
                files = folder_corpus(source, corpus, args.megabytes)
            else:
                files = scaled_runtime(source, corpus, args.megabytes)
            if not files:
                continue
            results.append(measure(runtime, corpus, files, args.jobs, args.repeat))
            print(json.dumps(results[-1]), file=sys.stderr)
            shutil.rmtree(corpus.parent, ignore_errors=True)
    header = "| runtime | MB | cold build | MB/s | items/s | 2-process decode | build / decode |"
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        decode = f"{r['decode_mb_per_s']:,.1f} MB/s" if "decode_mb_per_s" in r else "–"
        ratio = f"{r['build_over_decode']:.3f}" if "build_over_decode" in r else "–"
        print(
            f"| {r['runtime']} | {r['megabytes']:,.1f} | {r['seconds']:.2f} s | "
            f"{r['mb_per_s']:,.1f} | {r['items_per_s']:,} | {decode} | {ratio} |"
        )
    if args.out:
        payload = {"megabytes": args.megabytes, "jobs": args.jobs, "repeat": args.repeat}
        args.out.write_text(json.dumps({**payload, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
