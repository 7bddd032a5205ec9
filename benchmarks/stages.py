"""Where a cold build's worker time goes: each stage of the per-source work timed cumulatively.

Usage::

    python benchmarks/stages.py CORPUS [--repeat 3]

Over every trace file under CORPUS, in this one process (CPU-seconds, the best of
``--repeat``), each step doing all the steps before it again:

1. ``read``: read and decompress every file (`traceidx.sources.sourceio`);
2. ``frame``: and cut it into records with their fingerprints (`traceidx.sources.frame`);
3. ``decode``: and decode every line whole with msgspec (a reference, not a step of the
   build: what a reporter that parses every line does at least);
4. ``ingest``: the build's own reading: framing, the adapters' narrow decoding and their
   facts, and the projection (ids, items, bounded texts, shell parsing) (`projection.ingest`);
5. ``worker``: the whole worker: batches of sources read as in ``ingest``, their rows encoded
   as Arrow tables and written to IPC spool files (`traceidx.pipeline.worker.process_batch`).

``adapters+projection`` is ``ingest`` minus ``frame``; ``encoding+spool`` is ``worker`` minus
``ingest``. What a build adds after its workers (Parquet parts, links, the manifest) is the
publication, timed by ``benchmarks/paired.py`` and ``run.py`` as part of the whole build.
Shell commands parsed once are cached per process, as in a build's workers.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from traceidx.pipeline.sync import Decision
from traceidx.pipeline.worker import SourceWork, Task, process_batch, tune_process
from traceidx.projection.ingest import Settings, ingest
from traceidx.sources.frame import Framer
from traceidx.sources.sourceio import StreamStats, logical_chunks, open_regular

SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _read(files: list[str]) -> None:
    for locator in files:
        with open_regular(locator) as stream:
            for _ in logical_chunks(stream, StreamStats()):
                pass


def _frame(files: list[str]) -> None:
    for locator in files:
        framer = Framer()
        with open_regular(locator) as stream:
            for chunk in logical_chunks(stream, StreamStats()):
                for _ in framer.feed(chunk):
                    pass


def _decode(files: list[str]) -> None:
    decoder = msgspec.json.Decoder()
    for locator in files:
        framer = Framer()
        with open_regular(locator) as stream:
            for chunk in logical_chunks(stream, StreamStats()):
                for line in framer.feed(chunk):
                    if line.data is not None:
                        decoder.decode(line.data)


def _ingest(files: list[str]) -> None:
    for locator in files:
        ingest(locator, Settings())


def _spool(files: list[str]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="traceidx-stages-"))
    try:
        task = Task(Settings(), {}, folder, {})
        work = [SourceWork(Decision(locator, "new")) for locator in files]
        for at in range(0, len(work), 128):
            process_batch(work[at : at + 128], task)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


STAGES: dict[str, Callable[[list[str]], None]] = {
    "read": _read,
    "frame": _frame,
    "decode": _decode,
    "ingest": _ingest,
    "worker": _spool,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = sorted(str(p) for p in args.corpus.rglob("*") if p.name.endswith(SUFFIXES))
    if not files:
        parser.error(f"no trace files under {args.corpus}")
    size = sum(Path(f).stat().st_size for f in files)
    tune_process()
    seconds = {}
    for name, stage in STAGES.items():
        runs = []
        for _ in range(args.repeat):
            start = _cpu()
            stage(files)
            runs.append(_cpu() - start)
        seconds[name] = min(runs)
    print(f"{len(files):,} files, {size / 1e6:,.1f} MB, CPU-seconds (best of {args.repeat})")
    for name, value in seconds.items():
        print(f"  {name:<8} {value:7.2f}")
    print(f"  adapters+projection: {seconds['ingest'] - seconds['frame']:.2f}")
    print(f"  encoding+spool:      {seconds['worker'] - seconds['ingest']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
