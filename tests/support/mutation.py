"""Real traces with values swapped for values of other JSON types, for robustness tests.

Each variant of a corpus file keeps every line, and in about one line in five replaces one
value (anywhere in the record: a type tag, a nested id, a text, a whole block) by a value of
another shape: a number for a string, a list for an object, null for anything… Variants are
deterministic (seeded by file and variant number).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import msgspec

from tests.support.files import CORPUS, DATA, FIXTURES, WITH_CORPUS
from traceidx.adapters import detect
from traceidx.demo import SAMPLE

REPLACEMENTS: list[Any] = [
    *(0, -1, 1.5, 2**40, True),
    *("", "x", "2026-01-01"),
    None,
    *([], ["x"], {}, {"x": 1}),
]


def recognised_files(max_bytes: int) -> list[Path]:
    """Every trace of at most `max_bytes` whose first lines an adapter claims: the committed
    fixtures, and the shared corpus's public and generated traces when it is present (else the
    demo's sample, copies of generated traces)."""
    roots = [FIXTURES, DATA]
    roots += [CORPUS / "public", CORPUS / "generated"] if WITH_CORPUS else [SAMPLE]
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.jsonl")):
            if not path.is_file() or path.stat().st_size > max_bytes:
                continue
            head = []
            for line in path.read_bytes().splitlines()[:32]:
                try:
                    head.append(msgspec.json.decode(line))
                except msgspec.DecodeError:
                    continue
            if detect(head, None) is not None:
                out.append(path)
    return out


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*path, index))
    return out


def mutate(line: bytes, rng: random.Random) -> bytes:
    """The line with one value replaced (unchanged when it holds no JSON value to replace)."""
    try:
        record = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return line
    paths = _paths(record)
    if not paths:
        return line
    path = rng.choice(paths)
    parent = record
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = rng.choice(REPLACEMENTS)
    return msgspec.json.encode(record)


def write_variants(files: list[Path], root: Path, variants: int) -> int:
    """`variants` mutated copies of each file under `root` (one folder per copy, the file
    keeping its name); how many files were written."""
    count = 0
    for index, source in enumerate(files):
        lines = source.read_bytes().splitlines(keepends=True)
        for variant in range(variants):
            rng = random.Random(f"{source.name}:{variant}")
            mutated = [
                mutate(line.rstrip(b"\n"), rng) + b"\n" if rng.random() < 0.2 else line
                for line in lines
            ]
            target = root / f"{index:04d}-{variant}" / source.name
            target.parent.mkdir(parents=True)
            target.write_bytes(b"".join(mutated))
            count += 1
    return count
