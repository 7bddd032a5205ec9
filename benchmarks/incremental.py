"""What a small change costs on a large dataset: a no-op build, one line appended, and `watch`.

    python benchmarks/incremental.py [--real-copies 40] [--repeat 5] [--jobs 2] [--out FILE]

Over the real-shaped corpus (``--real-copies`` id-unique copies of the public Claude Code
transcripts: 933 MB at 40) built once cold, it measures, `--repeat` times each:

* ``noop``: the same build again, nothing changed: the build's own seconds in its process
  (`run.run_build`) and the whole ``traceidx build`` command's wall seconds (interpreter
  start and imports included);
* ``append``: one line (a copy of its last line) appended to a 10 MB session, then the build
  (in process and as a command); the report says whether it resumed from its checkpoint. The
  public transcripts hold no session that long, so the corpus gets one more: the longest
  transcript's lines written over and over (one session) until 10 MB;
* ``watch``: ``traceidx watch`` running over the corpus; a line appended to that source, and
  the seconds until the dataset's manifest names a new generation (what a reader sees).

Medians and every run are printed and saved as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora import real_shaped, size_of
from benchmarks.run import run_build, settle
from traceidx.demo import copy_ids
from traceidx.store.dataset import MANIFEST

TARGET_BYTES = 10 << 20


def _append_last_line(path: Path) -> None:
    data = path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1] + b"\n"
    with open(path, "ab") as out:
        out.write(last)
        out.flush()
        os.fsync(out.fileno())


def _grown(source: Path, folder: Path) -> Path:
    """A session of at least `TARGET_BYTES`: `source`'s lines over and over (its ids made
    unique to it, as a copy's are), in `folder`."""
    data = copy_ids(source.read_bytes(), 10_000)
    folder.mkdir()
    target = folder / source.name
    target.write_bytes(data * -(-TARGET_BYTES // len(data)))
    return target


def _command(corpus: Path, dataset: Path, jobs: int) -> float:
    """Wall seconds of a whole ``traceidx build`` command."""
    settle()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "traceidx.cli.main", "build", str(corpus), "--dataset",
         str(dataset), "--jobs", str(jobs)],
        check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - start


def _generation(dataset: Path) -> int:
    try:
        return int(json.loads((dataset / MANIFEST).read_bytes())["generation"])
    except (OSError, ValueError, KeyError):
        return -1


def _watch_latency(corpus: Path, dataset: Path, target: Path, repeat: int) -> list[float]:
    """Seconds from an appended line to a new generation, with ``traceidx watch`` running."""
    command = [sys.executable, "-m", "traceidx.cli.main", "watch", str(corpus), "--dataset",
               str(dataset), "--debounce-ms", "1000"]  # fmt: skip
    watcher = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    runs: list[float] = []
    try:
        time.sleep(3.0)  # its first build (a no-op) and the watch set up
        for _ in range(repeat):
            before = _generation(dataset)
            start = time.perf_counter()
            _append_last_line(target)
            while _generation(dataset) == before:
                if watcher.poll() is not None or time.perf_counter() - start > 30:
                    raise RuntimeError("watch published nothing within 30 s")
                time.sleep(0.005)
            runs.append(time.perf_counter() - start)
            time.sleep(1.5)  # let it settle before the next append
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    return runs


def _summary(runs: list[float]) -> dict[str, Any]:
    return {"median_s": round(statistics.median(runs), 3), "runs": [round(r, 3) for r in runs]}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--real-copies", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--public-claude",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "corpus" / "public" / "claude",
    )
    args = parser.parse_args()
    if not args.public_claude.is_dir():
        parser.error(f"no public Claude Code transcripts at {args.public_claude}")
    with tempfile.TemporaryDirectory(prefix="traceidx-incremental-") as work:
        corpus, dataset = Path(work) / "corpus", Path(work) / "dataset"
        files = real_shaped(corpus, args.public_claude, args.real_copies)
        target = _grown(max(files, key=lambda p: p.stat().st_size), corpus / "grown")
        files.append(target)
        cold = run_build(corpus, dataset, args.jobs)
        noop_in, noop_cmd, append_in, append_cmd, resumed = [], [], [], [], []
        for _ in range(args.repeat):
            noop_in.append(run_build(corpus, dataset, args.jobs)["seconds"])
            noop_cmd.append(_command(corpus, dataset, args.jobs))
            _append_last_line(target)
            appended = run_build(corpus, dataset, args.jobs)
            append_in.append(appended["seconds"])
            resumed.append(appended["totals"]["resumed"])
            _append_last_line(target)
            append_cmd.append(_command(corpus, dataset, args.jobs))
        watch = _watch_latency(corpus, dataset, target, args.repeat)
        result = {
            "corpus": f"real-shaped x{args.real_copies}",
            "files": len(files),
            "megabytes": round(size_of(files) / 1e6, 1),
            "appended_source_mb": round(target.stat().st_size / 1e6, 1),
            "jobs": args.jobs,
            "cold_s": round(cold["seconds"], 2),
            "noop_in_process": _summary(noop_in),
            "noop_command": _summary(noop_cmd),
            "append_one_in_process": _summary(append_in),
            "append_one_resumed": resumed,
            "append_one_command": _summary(append_cmd),
            "watch_append_to_publish": _summary(watch),
        }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
