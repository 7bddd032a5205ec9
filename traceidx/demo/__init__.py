"""Deterministic demo corpora, one generator per runtime (the demo and the benchmarks share them).

Each runtime module exposes ``generate(root, *, sessions, seed, long_sessions) -> list[Path]``,
writing files laid out as that runtime lays them out under its own home directory
(``root/<runtime>/...``); how long the sessions are is decided in ``shape``.
``python -m traceidx.demo OUT --sessions N --seed S [--runtime R ...]``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

#: runtime -> module under traceidx.demo holding its generator.
GENERATORS: dict[str, str] = {
    "claude_code": "claude",
    "codex": "codex",
    "dsh": "dsh",
    "pi": "pi",
}

Generator = Callable[..., list[Path]]


def generator(runtime: str) -> Generator:
    """The corpus generator of one runtime."""
    module = importlib.import_module(f"traceidx.demo.{GENERATORS[runtime]}")
    fn: Generator = module.generate
    return fn


def generate_corpus(
    root: Path,
    *,
    sessions: int = 12,
    seed: int = 0,
    runtimes: Iterable[str] | None = None,
    long_sessions: bool = True,
) -> dict[str, list[Path]]:
    """Write `sessions` sessions of every (or each chosen) runtime under `root`/<runtime>
    (without `long_sessions`, every session is a short one: many small sources)."""
    chosen = list(runtimes) if runtimes is not None else list(GENERATORS)
    return {
        rt: generator(rt)(
            Path(root) / rt, sessions=sessions, seed=seed + i, long_sessions=long_sessions
        )
        for i, rt in enumerate(chosen)
    }


def main(argv: list[str] | None = None) -> int:
    """CLI: write a demo corpus and say how much was written."""
    summary = (__doc__ or "").split("\n", 1)[0]
    parser = argparse.ArgumentParser(prog="python -m traceidx.demo", description=summary)
    parser.add_argument("out", type=Path, help="output root (one folder per runtime)")
    parser.add_argument("--sessions", type=int, default=12, help="sessions per runtime")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runtime", action="append", choices=sorted(GENERATORS))
    args = parser.parse_args(argv)
    written = generate_corpus(
        args.out, sessions=args.sessions, seed=args.seed, runtimes=args.runtime
    )
    for runtime, paths in written.items():
        size = sum(p.stat().st_size for p in paths)
        print(f"{runtime}: {len(paths)} files, {size} bytes under {args.out / runtime}")
    return 0
