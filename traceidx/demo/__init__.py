"""The demo corpus: real traces of all four runtimes, shipped with the package, re-dated to now.

``sample/`` holds traces the real runtimes wrote (Claude Code, Codex, Pi and dsh, driven by a
scripted model; see ``sample/README.md``), each laid out as its runtime lays out its home:
``claude_code/projects/…``, ``codex/sessions/YYYY/MM/DD/…``, ``pi/sessions/…`` and
``dsh/sessions/…``. `copy_sample` writes them elsewhere with every timestamp moved by the same
whole number of days, so durations, ordering and day boundaries stay exactly as recorded;
`write_demo` picks the number of days that brings the newest event to within a day of now.
`copy_ids` makes every id of a copy unique (benchmarks and tests scale corpora with it).

Times occur in the runtimes' own forms, and each is moved in place (so a line keeps its
length): dates ``YYYY-MM-DD`` (alone, or starting an RFC 3339 time of any precision and
offset, or in a file name such as ``rollout-2026-11-30T06-29-50-….jsonl``) and the date
folders ``YYYY/MM/DD``, and epoch numbers (milliseconds or seconds, integral or not). Only
values within the sample's own days are moved: a date elsewhere in a trace (an API version, a
dated model name) is not a time of the session.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Final

import zstandard

from traceidx.sources.sourceio import StreamStats, logical_chunks

#: the shipped sample (package data)
SAMPLE: Final = Path(__file__).resolve().parent / "sample"
#: the sample's runtime folders, each a runtime's home (what a build is pointed at)
RUNTIMES: Final = tuple(sorted(p.name for p in SAMPLE.iterdir() if p.is_dir()))
#: the first and last day (UTC) of the sample's events, and its newest event
FIRST_DAY: Final = date(2026, 9, 1)
LAST_DAY: Final = date(2026, 11, 30)
NEWEST: Final = datetime(2026, 11, 30, 6, 40, 6, 142000, tzinfo=UTC)

TRACE_SUFFIXES: Final = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
DAY_MS: Final = 86_400_000
_EPOCH: Final = date(1970, 1, 1)
_DATE: Final = re.compile(rb"(?<![0-9])([0-9]{4})([-/])([0-9]{2})\2([0-9]{2})(?![0-9])")
# epoch seconds (10 digits) or milliseconds (13), not part of a longer word or number
_EPOCH_NUMBER: Final = re.compile(rb"(?<![\w.])(1[0-9]{9})([0-9]{3})?(?![\w])")
_LOW_S: Final = ((FIRST_DAY - _EPOCH).days - 1) * 86_400
_HIGH_S: Final = ((LAST_DAY - _EPOCH).days + 2) * 86_400

#: an edit of a file's bytes (or of its path's, relative to the sample root)
Edit = Callable[[bytes], bytes]


def days_to(now: datetime) -> int:
    """The whole days that move the sample's newest event to within the day before `now`."""
    return (now - NEWEST) // timedelta(days=1)


def shift(data: bytes, days: int) -> bytes:
    """`data` (trace text or a path) with every time of the sample moved by `days` days."""
    if days == 0:
        return data

    def moved_date(m: re.Match[bytes]) -> bytes:
        year, sep, month, day = m.groups()
        try:
            then = date(int(year), int(month), int(day))
        except ValueError:
            return m.group(0)
        if not FIRST_DAY - timedelta(days=1) <= then <= LAST_DAY + timedelta(days=1):
            return m.group(0)
        return (
            (then + timedelta(days=days)).strftime(f"%Y{sep.decode()}%m{sep.decode()}%d").encode()
        )

    def moved_epoch(m: re.Match[bytes]) -> bytes:
        seconds = int(m.group(1))
        if not _LOW_S <= seconds < _HIGH_S:
            return m.group(0)
        if m.group(2) is None:
            return str(seconds + days * 86_400).encode()
        return str(int(m.group(0)) + days * DAY_MS).encode()

    return _EPOCH_NUMBER.sub(moved_epoch, _DATE.sub(moved_date, data))


def sample_files(root: Path = SAMPLE) -> list[Path]:
    """The trace files of the sample (relative to `root`), sorted."""
    return sorted(
        p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.name != "README.md"
    )


def is_trace(path: Path) -> bool:
    return path.name.endswith(TRACE_SUFFIXES)


def copy_sample(
    dest: Path,
    days: int,
    *,
    edit: Edit | None = None,
    only: Iterable[Path] | None = None,
    root: Path = SAMPLE,
) -> dict[str, list[Path]]:
    """Copy the sample (or the files `only` of it) under `dest`, every time moved by `days`
    days and the bytes of each file and of its relative path then passed through `edit`;
    returns the trace files written, by runtime."""
    written: dict[str, list[Path]] = {runtime: [] for runtime in RUNTIMES}
    for relative in sorted(only) if only is not None else sample_files(root):
        name = shift(str(relative).encode(), days)
        target = dest / (edit(name) if edit else name).decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        if not is_trace(relative):
            shutil.copyfile(root / relative, target)  # a side file (Claude's subagent meta)
            continue
        with open(root / relative, "rb") as handle:
            stats = StreamStats()
            data = shift(b"".join(logical_chunks(handle, stats)), days)
        if edit:
            data = edit(data)
        if stats.compression == "zstd":
            data = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data)
        target.write_bytes(data)
        written[relative.parts[0]].append(target)
    return written


def write_demo(dest: Path, now: datetime | None = None) -> dict[str, list[Path]]:
    """The demo corpus under `dest`: the sample with its newest event moved to about `now`
    (by default, this moment); returns the trace files written, by runtime."""
    return copy_sample(dest, days_to(now or datetime.now(UTC)))


#: UUIDs (v4 and the time-ordered v7 that Codex, Pi and dsh use): names, headers, references
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: the runtimes' native ids: messages, requests, tool calls and reasoning items (Claude
#: ``msg_``/``req_``/``toolu_``; Codex and Pi ``call_``/``fc_``/``rs_``/``resp_``/``ctc_``;
#: dsh ``call_00_``), and Claude's subagent ids (``agent-a<16 hex>``, ``"agentId":"a…"``)
_NATIVE = re.compile(
    rb"\b((?:msg|req|toolu|call|fc|fco|rs|resp|ctc|ctco)_(?:[0-9]{2}_)?|a(?=[0-9a-f]{16}\b))"
    rb"([A-Za-z0-9]{4})"
)


def copy_ids(data: bytes, k: int) -> bytes:
    """`data` (lines or a path) with every UUID and native id made unique to copy `k` (the
    first four characters of each become `k` in hex: the same sizes)."""
    tag = b"%04x" % k
    data = _UUID.sub(lambda m: tag + m.group(0)[4:], data)
    return _NATIVE.sub(lambda m: m.group(1) + tag, data)
