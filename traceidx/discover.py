"""Discovery: the candidate trace files under the runtimes' roots or the paths a user names.

Default roots (each overridable by an environment variable): Claude Code
``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``. Only ``*.jsonl`` files are
candidates when a directory is walked; a file named explicitly is always a candidate. The
runtime is never chosen here: adapters detect it from the content. Symlinked files are
followed once (the locator is the canonical path, so a file reached twice is one candidate).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TRACE_SUFFIXES = (".jsonl",)


def default_roots() -> dict[str, Path]:
    """Each runtime's default trace root (whether or not it exists)."""
    home = Path.home()
    claude = os.environ.get("CLAUDE_CONFIG_DIR")
    return {
        "claude_code": (Path(claude) if claude else home / ".claude") / "projects",
    }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file to try, by canonical locator."""

    locator: str


def _walk(root: Path) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(TRACE_SUFFIXES):
                yield Path(dirpath) / name


def discover(paths: Iterable[Path]) -> tuple[list[Candidate], list[str]]:
    """Candidates under `paths` (sorted, de-duplicated) and problems with the paths."""
    seen: dict[str, Candidate] = {}
    problems: list[str] = []
    for path in paths:
        if path.is_dir():
            files: Iterable[Path] = _walk(path)
        elif path.exists():
            files = [path]
        else:
            problems.append(f"{path}: no such file or directory")
            continue
        for file in files:
            locator = str(file.resolve())
            seen.setdefault(locator, Candidate(locator))
    return [seen[k] for k in sorted(seen)], problems
