"""Folder framing: a session its runtime keeps as a folder of several files, read as one Source.

Some runtimes keep a session as a folder of files that only together tell it (Mistral Vibe
3.x: a journal in segments, generation snapshots, content-addressed chunks; Vibe 1.x/2.x: a
``meta.json`` beside ``messages.jsonl``). A runtime declares the layout of such folders in
the registry (`traceidx.runtimes.Folder`): the marker files that make a folder a session,
and the member files that are framed, in order. This module is the only code that lists and
reads those members; discovery makes such a folder one candidate and never walks into it.

**Sources.** The folder is one Source; its locator is the folder's canonical path followed by
``/`` (`is_folder` tells a folder locator by that alone). Its *stamp*, which sync compares
as a file's (size, modification time), is the members' total size and their latest
modification time (`stamp`): a line appended to a journal segment, a new generation or a
deleted segment all change it, and a change re-reads the folder whole (its runtime rewrites
and prunes members, so there is no appended prefix to keep).

**Records.** The members are framed one after another, pattern by pattern in the declared
order (names sorted within a pattern), and each Record's `json_path` names the member that
holds it, relative to the folder; its `content_range` is a byte range *in that member*:

* a member ending ``.jsonl``: one Record per complete line (as `traceidx.sources.frame`
  frames lines), `json_path` the member's path;
* a JSON member whose root is an array: one Record per element, `json_path`
  ``<member>[<index>]``, its range the element's bytes (`traceidx.sources.document`);
* any other member: one Record of the whole document, `json_path` the member's path.

What the adapter receives for a Record is ``{"member": <path>, "index": <element index or
null>, "value": <the decoded JSON>}``: the member tells it what the value is. Fingerprints
are taken over exactly the record's bytes, and ``traceidx inspect`` re-reads them from the
member (`read_member`). Only local folders are read (a folder on object storage is not a
source).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from traceidx.runtimes import Folder, folders
from traceidx.sources.document import _elements, _skip_space
from traceidx.sources.frame import FINGERPRINT_ALGORITHM, FINGERPRINTS, FramedLine, Framer

#: what ends the locator of a folder source
SUFFIX: Final = "/"
_DECODE: Final = msgspec.json.Decoder()
_ELEMENT: Final = re.compile(r"(.*)\[(\d+)\]")


def is_folder(locator: str) -> bool:
    """Whether a locator names a folder source."""
    return locator.endswith(SUFFIX)


def locator_of(path: str) -> str:
    """The locator of the session folder at `path`."""
    return os.path.realpath(path) + SUFFIX


def layout_of(names: Iterable[str]) -> Folder | None:
    """The declared folder layout whose every marker is among a folder's entry `names` (a
    file's name, a folder's name followed by ``/``)."""
    present = set(names)
    for layouts in folders().values():
        for layout in layouts:
            if all(marker in present for marker in layout.markers):
                return layout
    return None


def entry_name(entry: os.DirEntry[str]) -> str:
    """A folder entry's name as layouts' markers name it (a folder's ends with ``/``)."""
    return entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name


def layout_at(folder: str) -> Folder | None:
    """The declared layout of the session folder at `folder` (None: it is not one)."""
    try:
        names = [entry_name(e) for e in os.scandir(folder)]
    except NotADirectoryError:
        return None
    return layout_of(names)


def members(locator: str) -> list[str]:
    """The member files of a folder source (paths relative to it), in framing order.
    FileNotFoundError: the folder is gone, or no longer a declared session folder."""
    root = locator.removesuffix(SUFFIX)
    layout = layout_at(root)
    if layout is None:
        raise FileNotFoundError(2, "no longer a session folder", root)
    found: dict[str, None] = {}
    files: list[str] = []
    for directory, _, names in os.walk(root):
        inside = os.path.relpath(directory, root)
        prefix = "" if inside == "." else inside + os.sep
        files += [prefix + name for name in names if os.path.isfile(os.path.join(directory, name))]
    files.sort()
    for pattern in layout.members:
        matches = _pattern(pattern)
        for name in files:
            if matches(name):
                found.setdefault(name)
    return list(found)


@functools.lru_cache(maxsize=64)
def _pattern(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """A member pattern compiled once (`fnmatch` rules, case-sensitive)."""
    return re.compile(fnmatch.translate(pattern)).match


def stamp(locator: str) -> tuple[int, int]:
    """The members' total size and latest modification time (ns): the folder's (size, mtime)."""
    root = locator.removesuffix(SUFFIX)
    size = mtime = 0
    for name in members(locator):
        info = os.stat(os.path.join(root, name))
        size += info.st_size
        mtime = max(mtime, info.st_mtime_ns)
    return size, mtime


@dataclass(slots=True)
class FolderRecord:
    """One Record of a folder: where it is (`line`: position, byte range in its member,
    fingerprint and bytes), its `json_path`, what its adapter receives and how it parsed."""

    line: FramedLine
    path: str
    value: Any
    status: str


def _decoded(member: str, index: int | None, data: bytes | None) -> tuple[Any, str]:
    if data is None:
        return None, "oversized"
    try:
        value = _DECODE.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None, "malformed"
    return {"member": member, "index": index, "value": value}, "ok"


def _document(
    member: str, data: bytes, position: int, limit: int, algorithm: str
) -> list[FolderRecord]:
    hashed = FINGERPRINTS[algorithm]
    start, end = _skip_space(data, 0), len(data)
    while end > start and data[end - 1] in b" \t\r\n":
        end -= 1
    if start == end:
        return []
    whole = data[start:end]
    ranges: list[tuple[int, int]] | None = None
    if whole[:1] == b"[" and len(whole) <= limit:
        try:
            _DECODE.decode(whole)
            ranges = _elements(data, start)
        except (msgspec.DecodeError, UnicodeDecodeError, ValueError, IndexError):
            ranges = None
    if ranges is None:
        kept = whole if len(whole) <= limit else None
        line = FramedLine(position, start, end, hashed(whole), kept)
        return [FolderRecord(line, member, *_decoded(member, None, kept))]
    out = []
    for index, (first, last) in enumerate(ranges):
        element = data[first:last]
        line = FramedLine(position + index, first, last, hashed(element), element)
        out.append(FolderRecord(line, f"{member}[{index}]", *_decoded(member, index, element)))
    return out


def records(
    locator: str, max_record_bytes: int, algorithm: str = FINGERPRINT_ALGORITHM
) -> Iterator[FolderRecord]:
    """The Records of a folder source, in order (FileNotFoundError: it is gone)."""
    root = locator.removesuffix(SUFFIX)
    position = 0
    for member in members(locator):
        with open(os.path.join(root, member), "rb") as stream:
            data = stream.read()
        if member.endswith(".jsonl"):
            framer = Framer(max_record_bytes, algorithm=algorithm)
            for line in framer.feed(data):
                line.position = position
                position += 1
                yield FolderRecord(line, member, *_decoded(member, None, line.data))
            continue
        found = _document(member, data, position, max_record_bytes, algorithm)
        position += len(found)
        yield from found


def read_member(locator: str, json_path: str, start: int, end: int) -> bytes:
    """The bytes of a folder source's record, from the member its `json_path` names."""
    element = _ELEMENT.fullmatch(json_path)
    member = element.group(1) if element else json_path
    root = locator.removesuffix(SUFFIX)
    path = os.path.normpath(os.path.join(root, member))
    if not path.startswith(root + os.sep):
        raise FileNotFoundError(2, "not a member of the folder", json_path)
    with open(path, "rb") as stream:
        stream.seek(start)
        return stream.read(end - start)
