"""Discovery: the candidate trace files under the runtimes' roots or the paths a user names.

Default roots: each registered runtime's own, as its adapter declares them
(`traceidx.runtimes`): trace folders in a home folder that an environment variable may move
(e.g. ``$CODEX_HOME/sessions``, by default ``~/.codex/sessions``).

When a directory is walked, files ending ``.jsonl``, ``.jsonl.zst`` or ``.jsonl.zstd`` are
candidates, and so are the files a runtime's registry entry declares (`FileRule`: e.g. the
session documents Gemini CLI wrote before 0.58, ``chats/session-*.json``, JSON files the
runtime rewrites whole); a file named explicitly is always a candidate. A folder a runtime
declares as a session folder (`traceidx.runtimes.Folder`: it holds the layout's marker files)
is one candidate, ``<folder>/``, and is not walked into (`traceidx.sources.folder`).
Discovery also chooses each candidate's framing (`framing_of`): a locator ending ``/`` is a
*folder*; a declared file has its rule's framing; otherwise a file ending ``.json`` is a
*document* (`traceidx.sources.document`: a Record per element), any other a source of
*lines* (`traceidx.sources.frame`). The runtime is never chosen here: adapters detect it from
the content. Symlinked files are followed once (the locator is the
canonical path, so a file reached twice is one candidate). A URI (traceidx.storage) is listed
on its filesystem: every object beneath it is a file, its locator its full URI.

A file whose name a runtime declares for its SQLite database (`traceidx.runtimes.Database`,
e.g. ``opencode.db``), found in a walk or named, is not one candidate but one per session it
holds (``<path>#<session id>``, traceidx.sources.rowsource), each with its stamp as its listed size
and modification time; a database that cannot be listed stays one candidate under its own
path, for ingest to report why. One session of a database may be named by its locator. A
database whose files are in the state the dataset last saw them at (`KnownDatabase`) is not
opened: its sessions are the dataset's, with their stamps (its missing ones stay missing).

Only regular files are candidates. Anything else named like a trace — a named pipe, a socket,
a device, a directory, a symlink to any of these, a dangling symlink or a symlink loop — is
never opened (opening a named pipe would wait forever) and is reported as `Ignored`, one
line each.

Superseded copies are not candidates; they are reported with the file that supersedes them:

* a dsh session directory holds one canonical file per format generation
  (``session.jsonl``, ``session.v1.jsonl`` … each optionally ``.zstd``); the highest-numbered
  one is the session's log and older generations are copies left behind by a migration;
* ``X.jsonl`` and ``X.jsonl.zst`` side by side are one Codex rollout in two encodings; the
  plain file takes precedence, as Codex itself reads it;
* ``X.json`` beside ``X.jsonl`` is a Gemini CLI session document that the CLI migrated to
  JSON lines when the session was resumed (it copies every message into ``X.jsonl`` and
  reads only that file from then on);
* ``X.trajectory.jsonl`` beside ``X.jsonl`` is OpenClaw's run trajectory of that transcript
  (a debug trace of its runs' stages), not a transcript.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from traceidx import storage
from traceidx.runtimes import FileRule, any_name, declared, file_rules
from traceidx.sources import folder as session_folder
from traceidx.sources import rowsource
from traceidx.sources.sourceio import kind_of, stat_of
from traceidx.sources.stream import Framing

TRACE_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
_DSH_GENERATION = re.compile(r"session(?:\.v(\d+))?\.jsonl(?:\.zstd)?")
#: the suffix of OpenClaw's run trajectory beside a transcript ``<id>.jsonl``
TRAJECTORY = ".trajectory.jsonl"
#: the registered runtimes' files that are not JSON lines (`traceidx.runtimes.FileRule`)
_RULES: tuple[FileRule, ...] = tuple(file_rules())
_RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in _RULES)


def declared_rule(folder: str, name: str) -> FileRule | None:
    """The registry's rule for a file of that name in that folder, if a runtime declares one."""
    if not any_name(_RULE_NAMES)(name):  # most names match no rule: one pattern says so
        return None
    parent = os.path.basename(folder)
    for rule in _RULES:
        if fnmatch.fnmatchcase(name, rule.name) and (
            rule.folder is None or fnmatch.fnmatchcase(parent, rule.folder)
        ):
            return rule
    return None


def framing_of(locator: str) -> Framing:
    """How a candidate is split into Records: ``rows`` (a session of a runtime's database, or
    the database itself: `traceidx.sources.rowsource`), ``folder`` (a session folder:
    `traceidx.sources.folder`), ``document`` (a JSON file rewritten whole:
    `traceidx.sources.document`) or ``lines`` (`traceidx.sources.frame`)."""
    if session_folder.is_folder(locator):
        return "folder"
    if rowsource.parse(locator) is not None:
        return "rows"
    rule = declared_rule(os.path.dirname(locator), os.path.basename(locator))
    if rule is not None:
        return rule.framing
    return "document" if locator.endswith(".json") else "lines"


def named_like_trace(folder: str, name: str) -> bool:
    """Whether a file of that name in that folder is a candidate when its folder is walked (a
    runtime's database: one candidate per session, `_expanded`)."""
    if name.endswith(TRACE_SUFFIXES) or rowsource.layout_of(name) is not None:
        return True
    return declared_rule(folder, name) is not None


def default_roots() -> dict[str, list[Path]]:
    """Each registered runtime's default trace roots (whether or not they exist)."""
    return {
        name: [root for home in homes for root in home.roots()]
        for name, homes in declared().items()
    }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file to try, by canonical locator, and how it is framed into Records."""

    locator: str
    framing: Framing

    @staticmethod
    def of(locator: str) -> Candidate:
        return Candidate(locator, framing_of(locator))


@dataclass(frozen=True, slots=True)
class Superseded:
    """A file not read because another file holds the same facts."""

    locator: str
    by: str
    why: str


@dataclass(frozen=True, slots=True)
class Ignored:
    """A path named like a trace that is not a regular file, and what it is."""

    locator: str
    what: str


def _inspect(path: str) -> tuple[str, str | None]:
    """The canonical locator of `path` and, if it is not a regular file, what it is."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except OSError as exc:
        if os.path.islink(path):
            what = "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink"
            return path, what
        return path, f"unreadable ({exc.strerror or exc})"
    canonical = os.path.realpath(path)
    if stat.S_ISREG(mode):
        return canonical, None
    what = kind_of(mode)
    if os.path.islink(path):
        what = f"a symlink to {what.removeprefix('a ')}"
    return path, what


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
        elif name.endswith(".json") and name + "l" in names:
            lines = os.path.join(directory, name + "l")
            why = "a session document Gemini CLI migrated to the JSON-lines file beside it"
            out.append(Superseded(os.path.join(directory, name), lines, why))
        elif name.endswith(TRAJECTORY) and name[: -len(TRAJECTORY)] + ".jsonl" in names:
            lines = os.path.join(directory, name[: -len(TRAJECTORY)] + ".jsonl")
            why = "OpenClaw's run trajectory of that transcript (a debug trace, no transcript)"
            out.append(Superseded(os.path.join(directory, name), lines, why))
    return out


def _walk(root: Path, superseded: list[Superseded], ignored: list[Ignored]) -> Iterable[str]:
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
        if session_folder.layout_of(session_folder.entry_name(e) for e in entries) is not None:
            yield session_folder.locator_of(directory)  # a session folder: one source, not walked
            continue
        files: dict[str, os.DirEntry[str]] = {}
        subdirectories: list[str] = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if named_like_trace(directory, entry.name):
                    ignored.append(Ignored(entry.path, "a directory"))
                else:
                    subdirectories.append(entry.path)
            elif named_like_trace(directory, entry.name):
                files[entry.name] = entry
        dropped = superseded_in(directory, files)
        superseded.extend(dropped)
        for gone in dropped:
            del files[os.path.basename(gone.locator)]
        for name in sorted(files):
            entry = files[name]
            if entry.is_file(follow_symlinks=False):
                yield entry.path
                continue
            locator, what = _inspect(entry.path)  # a symlink, or not a regular file
            if what is None:
                yield locator
            else:
                ignored.append(Ignored(locator, what))
        pending.extend(sorted(subdirectories, reverse=True))  # visited in name order


@dataclass(frozen=True, slots=True)
class KnownDatabase:
    """What a dataset holds of a database whose sessions were all last read or listed at one
    state of its files (traceidx.sources.rowsource.state_of): that state, the stamp of each session
    there (by locator), and the sessions that were gone from it."""

    state: str
    stamps: dict[str, tuple[int, int]]
    gone: frozenset[str] = frozenset()


@dataclass(slots=True)
class Discovery:
    """What discovery found under the paths it was given."""

    candidates: list[Candidate]
    superseded: list[Superseded]
    ignored: list[Ignored]
    problems: list[str]
    #: size and modification time (ns) of remote candidates, as their listing gave them (the
    #: stamp of a database's session)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the state of the files of each database listed, or known unchanged, by path
    databases: dict[str, str] = field(default_factory=dict)
    #: sessions of a database known unchanged that were gone from it (still missing)
    gone: set[str] = field(default_factory=set)


def _listed(
    uri: str, found: Discovery, superseded: list[Superseded], problems: list[str]
) -> list[str]:
    """The candidates at a remote location (a file, or the trace files beneath it); the
    listing's size and modification time of each go to `found.stats`."""
    try:
        single, folders = storage.listing(uri)
    except OSError as exc:
        problems.append(f"{uri}: cannot list it ({exc})")
        return []
    if single:
        return [uri]
    out: list[str] = []
    for folder, listed in sorted(folders.items()):
        files = {name: (size, mtime) for name, size, mtime in listed}
        files = {k: v for k, v in files.items() if named_like_trace(folder, k)}
        dropped = superseded_in(folder, files)
        for gone in dropped:
            del files[os.path.basename(gone.locator)]
            by = storage.uri_of(uri, gone.by)
            superseded.append(Superseded(storage.uri_of(uri, gone.locator), by, gone.why))
        for name in sorted(files):
            locator = storage.uri_of(uri, f"{folder}/{name}")
            found.stats[locator] = files[name]
            out.append(locator)
    if not folders:
        problems.append(f"{uri}: no such file or directory (no objects there)")
    return out


def discover(
    paths: Iterable[Path | str], known: Mapping[str, KnownDatabase] | None = None
) -> Discovery:
    """Candidates under `paths` (sorted, de-duplicated), superseded files, paths named like
    traces that are not regular files, and problems (paths that do not exist). `known`: the
    databases a dataset holds the sessions of, by path (not opened while unchanged)."""
    seen: dict[str, Candidate] = {}
    superseded: list[Superseded] = []
    ignored: list[Ignored] = []
    problems: list[str] = []
    listed = Discovery([], [], [], [])
    for path in paths:
        if isinstance(path, str):
            if storage.is_uri(path):
                locators: Iterable[str] = _listed(path, listed, superseded, problems)
                for locator in locators:
                    seen.setdefault(locator, Candidate.of(locator))
                continue
            path = Path(storage.local_path(path))
        if path.is_dir():
            locators = _walk(path, superseded, ignored)
        elif not os.path.lexists(path) and rowsource.names_session(str(path)):
            _session(str(path), seen, listed.stats, problems)
            continue
        elif os.path.lexists(path):
            locator, what = _inspect(str(path.absolute()))
            if what is not None:
                ignored.append(Ignored(locator, what))
                continue
            locators = [locator]
        else:
            problems.append(f"{path}: no such file or directory")
            continue
        for locator in locators:
            if locator in seen or _expanded(locator, seen, listed, known or {}):
                continue
            seen[locator] = Candidate.of(locator)
    dropped = {s.locator: s for s in superseded if _canonical(s.locator) not in seen}
    return Discovery(
        [seen[k] for k in sorted(seen)],
        [dropped[k] for k in sorted(dropped)],
        sorted(ignored, key=lambda i: i.locator),
        problems,
        listed.stats,
        listed.databases,
        listed.gone,
    )


def _expanded(
    locator: str, seen: dict[str, Candidate], found: Discovery, known: Mapping[str, KnownDatabase]
) -> bool:
    """Whether `locator` is a database whose sessions went to `seen` as candidates (with their
    stamps in `found.stats`); a database that cannot be listed is not (it stays one
    candidate). A database in the state `known` says is not opened."""
    if rowsource.layout_of(locator) is None:
        return False
    unchanged = known.get(locator)
    if unchanged is not None and _state(locator) == unchanged.state:
        for candidate, stamp in unchanged.stamps.items():
            seen.setdefault(candidate, Candidate.of(candidate))
            found.stats[candidate] = stamp
        found.gone.update(unchanged.gone)
        found.databases[locator] = unchanged.state
        return True
    try:
        sessions, state = rowsource.survey(locator)
    except (OSError, rowsource.Unreadable, rowsource.Foreign, rowsource.Changed):
        return False
    for session, stamp in sorted(sessions.items()):
        candidate = rowsource.locator_of(locator, session)
        seen.setdefault(candidate, Candidate.of(candidate))
        found.stats[candidate] = stamp
    found.databases[locator] = state
    return True


def _state(path: str) -> str | None:
    try:
        return rowsource.state_of(path)
    except (OSError, rowsource.Unreadable):
        return None


def _session(
    path: str, seen: dict[str, Candidate], stats: dict[str, tuple[int, int]], problems: list[str]
) -> None:
    """One session of a database, named by its locator (``<database>#<session id>``)."""
    where = rowsource.parse(path)
    assert where is not None and where.session is not None
    database = os.path.realpath(where.database)
    try:
        sessions = rowsource.listing(database)
    except (OSError, rowsource.Unreadable, rowsource.Foreign, rowsource.Changed) as exc:
        problems.append(f"{path}: cannot list the sessions of its database ({exc})")
        return
    if where.session not in sessions:
        problems.append(f"{path}: no session {where.session} in {database}")
        return
    locator = rowsource.locator_of(database, where.session)
    seen.setdefault(locator, Candidate.of(locator))
    stats[locator] = sessions[where.session]


def _canonical(locator: str) -> str:
    return locator if storage.is_uri(locator) else str(Path(locator).resolve())


def vanished(locator: str) -> bool:
    """Whether a source's file (or object, or database session, or folder) no longer exists."""
    if session_folder.is_folder(locator):
        try:
            session_folder.members(locator)
        except FileNotFoundError:
            return True
        return False
    where = rowsource.parse(locator)
    if where is not None and where.session is not None:
        return rowsource.gone(locator)
    if not storage.is_uri(locator):
        return not os.path.lexists(locator)
    try:
        stat_of(locator)
    except FileNotFoundError:
        return True
    return False
