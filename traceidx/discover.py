"""Discovery: the candidate trace files under the runtimes' roots or the paths a user names.

Default roots: each registered runtime's own, as its adapter declares them
(`traceidx.runtimes`): trace folders in a home folder that an environment variable may move
(e.g. ``$CODEX_HOME/sessions``, by default ``~/.codex/sessions``).

When a directory is walked, files ending ``.jsonl``, ``.jsonl.zst`` or ``.jsonl.zstd`` are
candidates; a file named explicitly is always a candidate. The runtime is never chosen here:
adapters detect it from the content. Symlinked files are followed once (the locator is the
canonical path, so a file reached twice is one candidate).

Superseded copies are not candidates; they are reported with the file that supersedes them:

* a dsh session directory holds one canonical file per format generation
  (``session.jsonl``, ``session.v1.jsonl`` … each optionally ``.zstd``); the highest-numbered
  one is the session's log and older generations are copies left behind by a migration;
* ``X.jsonl`` and ``X.jsonl.zst`` side by side are one Codex rollout in two encodings; the
  plain file takes precedence, as Codex itself reads it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from traceidx.runtimes import declared

TRACE_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
_DSH_GENERATION = re.compile(r"session(?:\.v(\d+))?\.jsonl(?:\.zstd)?")


def default_roots() -> dict[str, list[Path]]:
    """Each registered runtime's default trace roots (whether or not they exist)."""
    return {
        name: [root for home in homes for root in home.roots()]
        for name, homes in declared().items()
    }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file to try, by canonical locator."""

    locator: str


@dataclass(frozen=True, slots=True)
class Superseded:
    """A file not read because another file holds the same facts."""

    locator: str
    by: str
    why: str


def superseded_in(directory: str, names: Iterable[str]) -> list[Superseded]:
    """The files among `names` (of one directory) that another file there supersedes."""
    names = set(names)
    out: list[Superseded] = []
    generations = {
        name: int(m.group(1) or 0)
        for name in names
        if (m := _DSH_GENERATION.fullmatch(name)) is not None
    }
    if len(generations) > 1:
        best = max(generations, key=lambda n: (generations[n], n.endswith(".jsonl")))
        why = "an older dsh log generation; the session's log is the highest-numbered file"
        for name in sorted(generations):
            if name != best:
                out.append(
                    Superseded(os.path.join(directory, name), os.path.join(directory, best), why)
                )
    for name in sorted(names):
        if name.endswith(".jsonl.zst") and name[: -len(".zst")] in names:
            plain = os.path.join(directory, name[: -len(".zst")])
            why = "a compressed copy of a rollout whose plain file takes precedence"
            out.append(Superseded(os.path.join(directory, name), plain, why))
    return out


def _walk(root: Path, superseded: list[Superseded]) -> Iterable[str]:
    """Canonical locators of the candidates under `root`. The walk starts from the canonical
    root and does not enter symlinked directories, so only a symlinked file needs resolving.
    A directory that cannot be listed is passed over (as `os.walk` does)."""
    pending = [str(root.resolve())]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        files: dict[str, os.DirEntry[str]] = {}
        subdirectories: list[str] = []
        for entry in entries:
            if entry.is_dir():  # (a symlink to a directory too, never entered)
                if not entry.is_symlink():
                    subdirectories.append(entry.path)
            elif entry.name.endswith(TRACE_SUFFIXES):
                files[entry.name] = entry
        dropped = superseded_in(directory, files)
        superseded.extend(dropped)
        for gone in dropped:
            del files[os.path.basename(gone.locator)]
        for name in sorted(files):
            entry = files[name]
            yield os.path.realpath(entry.path) if entry.is_symlink() else entry.path
        pending.extend(sorted(subdirectories, reverse=True))  # visited in name order


def discover(paths: Iterable[Path]) -> tuple[list[Candidate], list[Superseded], list[str]]:
    """Candidates under `paths` (sorted, de-duplicated), superseded files, problems."""
    seen: dict[str, Candidate] = {}
    superseded: list[Superseded] = []
    problems: list[str] = []
    for path in paths:
        if path.is_dir():
            locators: Iterable[str] = _walk(path, superseded)
        elif path.exists():
            locators = [str(path.resolve())]
        else:
            problems.append(f"{path}: no such file or directory")
            continue
        for locator in locators:
            if locator not in seen:
                seen[locator] = Candidate(locator)
    dropped = {s.locator: s for s in superseded if str(Path(s.locator).resolve()) not in seen}
    return [seen[k] for k in sorted(seen)], [dropped[k] for k in sorted(dropped)], problems
