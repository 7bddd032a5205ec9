"""Document framing: a JSON file rewritten as a whole, split into Records by JSON path.

Some runtimes keep a session as one JSON document that they rewrite as it grows (Gemini CLI
before 0.58: ``chats/session-*.json`` = ``{sessionId, projectHash, startTime, lastUpdated,
messages: [...]}``). Discovery chooses this framing for such files
(`traceidx.sources.discover.framing_of`); the Records of a document are:

* position 0, JSON path ``$``: the document itself, located by the byte range of its root
  value. What its adapter receives is the root object without its ``messages`` member, so a
  document reads, record by record, the way the same session's JSON-lines file does (its
  metadata first, then one record per message);
* positions 1…n, JSON path ``$.messages[i]``: each element of the root's ``messages`` array,
  located by the byte range of that element in the file.

A document whose root is an array (the task files of Cline's VS Code extension:
``tasks/<task id>/ui_messages.json`` = ``[message, ...]``) has no member naming its session:
its runtime names the session by the file's folder. Its Records are the root at position 0,
JSON path ``$``, of which its adapter receives ``{"$file": "<folder>/<file name>"}`` (the last
two parts of the source's locator, as framing was given them), then each element of the
array at positions 1…n, JSON path ``$[i]``.

Each Record's fingerprint is taken over exactly its byte range (`traceidx.sources.frame`), so
`traceidx inspect` re-reads and verifies it as it does a line. A rewrite re-projects the
source; Record ids are functions of (source, position), so a message that keeps its place in
the array keeps its ids (Gemini CLI only appends messages, or drops the last ones on a
rewind). A document that is not JSON (a rewrite caught half-way) is one ``malformed``
Record; one larger than the record limit is one ``oversized`` Record, not parsed.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.sources.frame import FINGERPRINT_ALGORITHM, FINGERPRINTS, FramedLine

_DECODE: Final = msgspec.json.Decoder()
#: the characters that open, close or quote a JSON value
_STRUCTURE: Final = re.compile(rb'["\[\]{}]')
#: the end of a scalar (a number, true, false, null)
_SCALAR_END: Final = re.compile(rb"[\s,\]}]")
_SPACE: Final = b" \t\r\n"
#: the member whose elements are Records of their own
MESSAGES: Final = "messages"
#: the member of the value an array document's root Record stands for: where the file is
FILE: Final = "$file"


class DocumentRecord:
    """One Record of a document: where it is (`line`: position, byte range, fingerprint and
    bytes), its JSON path, the value its adapter receives and how it parsed."""

    __slots__ = ("line", "path", "status", "value")

    def __init__(self, line: FramedLine, path: str, value: Any, status: str) -> None:
        self.line = line
        self.path = path
        self.value = value
        self.status = status


def _skip_space(data: bytes, at: int) -> int:
    while at < len(data) and data[at] in _SPACE:
        at += 1
    return at


def _string_end(data: bytes, at: int) -> int:
    """The offset just past the string that opens at `at` (a ``"``)."""
    scan = at + 1
    while True:
        quote = data.find(b'"', scan)
        if quote < 0:
            raise ValueError("unterminated string")
        slashes = 0
        while data[quote - 1 - slashes] == 0x5C:  # backslash
            slashes += 1
        if slashes % 2 == 0:
            return quote + 1
        scan = quote + 1


def _value_end(data: bytes, at: int) -> int:
    """The offset just past the JSON value that starts at `at`."""
    first = data[at]
    if first == 0x22:  # a string
        return _string_end(data, at)
    if first not in b"[{":
        found = _SCALAR_END.search(data, at)
        return found.start() if found else len(data)
    depth, scan = 0, at
    while True:
        found = _STRUCTURE.search(data, scan)
        if found is None:
            raise ValueError("unterminated value")
        char, scan = data[found.start()], found.start() + 1
        if char == 0x22:
            scan = _string_end(data, found.start())
        elif char in b"[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return scan


def _elements(data: bytes, at: int) -> list[tuple[int, int]]:
    """The byte ranges of the elements of the array that opens at `at`."""
    out: list[tuple[int, int]] = []
    scan = _skip_space(data, at + 1)
    while data[scan] != 0x5D:  # ]
        end = _value_end(data, scan)
        out.append((scan, end))
        scan = _skip_space(data, end)
        if data[scan] == 0x2C:  # ,
            scan = _skip_space(data, scan + 1)
    return out


def _messages(data: bytes, start: int) -> list[tuple[int, int]] | None:
    """The element ranges of the root object's (last) ``messages`` array, if it has one."""
    found: list[tuple[int, int]] | None = None
    scan = _skip_space(data, start + 1)
    while data[scan] != 0x7D:  # }
        key_end = _string_end(data, scan)
        key = _DECODE.decode(data[scan:key_end])
        value = _skip_space(data, _skip_space(data, key_end) + 1)  # past the colon
        end = _value_end(data, value)
        if key == MESSAGES:
            found = _elements(data, value) if data[value] == 0x5B else None
        scan = _skip_space(data, end)
        if data[scan] == 0x2C:
            scan = _skip_space(data, scan + 1)
    return found


def file_of(locator: str) -> str:
    """The last two parts of a source's locator (its folder's name and its file name)."""
    return "/".join(locator.replace("\\", "/").rstrip("/").split("/")[-2:])


def frame_document(
    data: bytes,
    max_record_bytes: int,
    algorithm: str = FINGERPRINT_ALGORITHM,
    file: str | None = None,
) -> list[DocumentRecord]:
    """The Records of a document's bytes (none for a file holding only white space); `file`
    is where it is (`file_of` its locator), given to the root Record of an array document."""
    hashed = FINGERPRINTS[algorithm]
    start = _skip_space(data, 0)
    end = len(data)
    while end > start and data[end - 1] in _SPACE:
        end -= 1
    if start == end:
        return []
    whole = data[start:end]
    if len(whole) > max_record_bytes:
        line = FramedLine(0, start, end, hashed(whole), None)
        return [DocumentRecord(line, "$", None, "oversized")]
    root = FramedLine(0, start, end, hashed(whole), whole)
    try:
        value = _DECODE.decode(whole)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return [DocumentRecord(root, "$", None, "malformed")]
    if isinstance(value, list):
        out = [DocumentRecord(root, "$", {FILE: file}, "ok")]
        for index, (first, last) in enumerate(_elements(data, start)):
            element = data[first:last]
            line = FramedLine(index + 1, first, last, hashed(element), element)
            out.append(DocumentRecord(line, f"$[{index}]", _DECODE.decode(element), "ok"))
        return out
    if not isinstance(value, dict):
        return [DocumentRecord(root, "$", value, "ok")]
    ranges = _messages(data, start) if isinstance(value.get(MESSAGES), list) else None
    head = {key: member for key, member in value.items() if key != MESSAGES or ranges is None}
    out = [DocumentRecord(root, "$", head, "ok")]
    for index, (first, last) in enumerate(ranges or []):
        element = data[first:last]
        line = FramedLine(index + 1, first, last, hashed(element), element)
        path = f"$.{MESSAGES}[{index}]"
        out.append(DocumentRecord(line, path, _DECODE.decode(element), "ok"))
    return out
