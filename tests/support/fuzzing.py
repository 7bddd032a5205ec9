"""Hypothesis strategies that damage real trace lines the ways hostile inputs do.

Seeds are real traces of every runtime committed under ``tests/fixtures/data`` (see
``tests/fixtures/data/generated/README.md``). A mutated source is a seed with a few of its lines
damaged; every other line keeps its exact bytes, so the file stays real-shaped and its
adapter still claims it (mutations mostly land after the first few lines; sometimes on the
header too).

Mutations of the JSON structure, anywhere in a record (nested objects and arrays included),
written back as JSON text by our own writer (which can write what a JSON library refuses):

* a key dropped; a value retyped (string, integer, big integer, float, boolean, null, list,
  object: each replaced by one of another shape); a key duplicated (the object's text holds
  the key twice, with the same or another value, before or after the original);
* a string truncated (by characters, or by bytes: possibly inside a multi-byte character);
* bytes that are not UTF-8 inside a string; escapes that decode to no valid text (a lone
  UTF-16 surrogate) or to control characters.

Mutations of the bytes of the file: a line truncated; bytes that are not UTF-8 anywhere in a
line (outside strings too); two lines joined (the newline between them removed); a line split
(a newline inserted mid-line); a blank line inserted; a line written twice; the final newline
removed (an unterminated tail).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import strategies as st

from tests.support.files import DATA


def _seed_files() -> dict[str, list[Path]]:
    """Each registered runtime whose traces are JSON lines (not a database's rows, not session
    folders: `traceidx.sources.folder`) -> its seeds: the traces chosen for
    fuzzing under ``data/generated/<folder>`` (else the smallest two committed copies of its
    generated traces of eight lines or more), and the real traces under ``data/<runtime>``."""
    from tests.support.files import FIXTURES
    from traceidx.runtimes import RUNTIMES, names

    found: dict[str, list[Path]] = {}
    for name in names():
        runtime = RUNTIMES[name]
        if runtime.database is not None:
            continue  # rows of a database, not lines
        if runtime.folders:
            continue  # session folders: a journal segment alone is no source of its runtime
        files: list[Path] = []
        for folder in runtime.fixtures:
            chosen = sorted((DATA / "generated" / folder).glob("*.jsonl"))
            if not chosen:
                committed = (FIXTURES / "generated" / folder).rglob("*.jsonl")
                lines = [p for p in committed if p.is_file() and "_gen" not in p.parts]
                long_enough = [p for p in lines if p.read_bytes().count(b"\n") >= 8]
                chosen = sorted(long_enough, key=lambda p: (p.stat().st_size, str(p)))[:2]
            files += chosen
        files += sorted((DATA / name).glob("*.jsonl"))
        if files:
            found[name] = files
    return found


#: runtime (the adapter's name) -> its seed files
SEED_FILES = _seed_files()
RUNTIMES = sorted(SEED_FILES)

#: lines at the head of a source that mutations avoid unless they target the header
HEAD_LINES = 3
#: byte sequences that are not UTF-8: a lone continuation byte, bytes never valid, a lead
#: byte without its continuation, an overlong encoding, an encoded surrogate, a cut 4-byte one
BAD_BYTES = [b"\x80", b"\xff", b"\xfe\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf0\x9f\x98"]
#: JSON escapes that decode to no valid text, or to characters writers rarely emit
ODD_ESCAPES = [b"\\ud800", b"\\udfff", b"\\ud83d", b"\\u0000", b"\\u001b", b"\\ufeff"]


@dataclass(frozen=True)
class Seed:
    """A committed real trace: its runtime, file and lines (without their newlines)."""

    runtime: str
    path: Path
    lines: tuple[bytes, ...] = field(repr=False)

    @property
    def name(self) -> str:
        return self.path.name

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis prints this
        printer.text(f"Seed({self.runtime}, {self.name})")

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)

    def copy_to(self, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path, target)


def load_seeds() -> dict[str, list[Seed]]:
    """Every committed seed, by runtime."""
    seeds: dict[str, list[Seed]] = {}
    for runtime, paths in SEED_FILES.items():
        for path in paths:
            data = path.read_bytes()
            assert data.endswith(b"\n"), path
            lines = tuple(data[:-1].split(b"\n"))
            seeds.setdefault(runtime, []).append(Seed(runtime, path, lines))
    return seeds


SEEDS = load_seeds()
ALL_SEEDS = [seed for runtime in RUNTIMES for seed in SEEDS[runtime]]


# --- JSON text we write ourselves --------------------------------------------------------


class Obj:
    """A JSON object as its text has it: key/value pairs in order, duplicates allowed."""

    def __init__(self, pairs: list[list[Any]]) -> None:
        self.pairs = pairs


class Raw:
    """A value written verbatim (a string holding bytes a JSON encoder would not write)."""

    def __init__(self, text: bytes) -> None:
        self.text = text


def tree(value: Any) -> Any:
    """A decoded record as a tree we can damage (objects become `Obj`)."""
    if isinstance(value, dict):
        return Obj([[key, tree(child)] for key, child in value.items()])
    if isinstance(value, list):
        return [tree(child) for child in value]
    return value


def dump(node: Any) -> bytes:
    """The JSON text of a tree (compact, as most runtimes write it)."""
    if isinstance(node, Obj):
        return b"{" + b",".join(dump(k) + b":" + dump(v) for k, v in node.pairs) + b"}"
    if isinstance(node, list):
        return b"[" + b",".join(dump(child) for child in node) + b"]"
    if isinstance(node, Raw):
        return node.text
    return msgspec.json.encode(node)


def slots(node: Any) -> list[tuple[Any, Any]]:
    """Every place below `node` holding a value, as (container, key or index), depth first."""
    out: list[tuple[Any, Any]] = []
    if isinstance(node, Obj):
        for index, (_, child) in enumerate(node.pairs):
            out.append((node, index))
            out += slots(child)
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out.append((node, index))
            out += slots(child)
    return out


def get(slot: tuple[Any, Any]) -> Any:
    container, at = slot
    return container.pairs[at][1] if isinstance(container, Obj) else container[at]


def put(slot: tuple[Any, Any], value: Any) -> None:
    container, at = slot
    if isinstance(container, Obj):
        container.pairs[at][1] = value
    else:
        container[at] = value


def _string_body(text: str) -> bytes:
    """The JSON text of a string without its quotes."""
    return msgspec.json.encode(text)[1:-1]


# --- strategies ---------------------------------------------------------------------------

#: integers past int64 (every runtime's adapter passes them on, and encoding them fails: see
#: `test_an_integer_past_int64_fails_its_source_on_its_line` in tests/pipeline/test_fuzz.py)
BIG_INTS = [2**63, -(2**63) - 1, 2**64, 10**30]
#: JSON a lenient decoder (Python's) takes but msgspec refuses
LENIENT_ONLY = [b"NaN", b"Infinity", b"-Infinity", b'"\\ud800"', b'"x\\udfff"']

SHAPES = ["null", "bool", "number", "string", "array", "object"]


def _shape(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str | Raw):
        return "string"
    return "array" if isinstance(value, list) else "object"


def values_of(shape: str) -> st.SearchStrategy[Any]:
    """JSON values of one shape (small containers holding any shape)."""
    numbers = st.one_of(
        st.integers(min_value=-(2**31), max_value=2**31),
        st.sampled_from([-1, 0, 2**53 + 1, 2**63 - 1, -(2**63), *BIG_INTS]),
        st.floats(allow_nan=False, allow_infinity=False),
    )
    scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8))
    if shape == "null":
        return st.none()
    if shape == "bool":
        return st.booleans()
    if shape == "number":
        return numbers
    if shape == "string":
        return st.one_of(
            st.text(max_size=12),
            st.sampled_from(["", "2026-13-45T99:99:99Z", "9999-12-31T23:59:59Z", "user", "0"]),
        )
    if shape == "array":
        return st.lists(scalars, max_size=3)
    keys = st.sampled_from(["type", "id", "role", "text", "content", "x"])
    return st.dictionaries(keys, scalars, max_size=3)


@st.composite
def retyped(draw: st.DrawFn, old: Any) -> Any:
    """A value of another shape than `old`."""
    shape = draw(st.sampled_from([s for s in SHAPES if s != _shape(old)]))
    return tree(draw(values_of(shape)))


@st.composite
def damaged_string(draw: st.DrawFn, text: str) -> Any:
    """`text` truncated, or with bytes that are not UTF-8 or odd escapes inside."""
    how = draw(st.sampled_from(["truncate", "truncate-bytes", "bad-bytes", "odd-escape"]))
    if how == "truncate":
        return text[: draw(st.integers(0, max(len(text) - 1, 0)))]
    body = _string_body(text)
    if how == "truncate-bytes":
        encoded = text.encode("utf-8")
        cut = encoded[: draw(st.integers(0, max(len(encoded) - 1, 0)))]
        return Raw(b'"' + _escape_bytes(cut) + b'"')
    at = draw(st.integers(0, len(body)))
    while at and body[at - 1 : at] == b"\\":  # never between a backslash and what it escapes
        at -= 1
    insert = draw(st.sampled_from(BAD_BYTES if how == "bad-bytes" else ODD_ESCAPES))
    return Raw(b'"' + body[:at] + insert + body[at:] + b'"')


def _escape_bytes(data: bytes) -> bytes:
    """JSON string body of raw bytes: required escapes done, other bytes (even a cut
    multi-byte character) kept as they are."""
    out = bytearray()
    for byte in data:
        if byte == 0x22:
            out += b'\\"'
        elif byte == 0x5C:
            out += b"\\\\"
        elif byte < 0x20:
            out += b"\\u%04x" % byte
        else:
            out.append(byte)
    return bytes(out)


@st.composite
def damaged_record(draw: st.DrawFn, line: bytes) -> bytes:
    """One structural mutation of a record, at any depth (the line itself if it is not JSON
    or holds no member to damage)."""
    try:
        root = tree(msgspec.json.decode(line))
    except msgspec.DecodeError:
        return line
    places = slots(root)
    if not places:
        return line
    kind = draw(st.sampled_from(["drop", "retype", "duplicate", "string"]))
    objects = [p for p in places if isinstance(p[0], Obj)]
    if isinstance(root, Obj):
        objects.append((root, None))
    if kind in ("drop", "duplicate") and objects:
        container = draw(st.sampled_from(objects))[0]
        if not container.pairs:
            return dump(root)
        at = draw(st.integers(0, len(container.pairs) - 1))
        if kind == "drop":
            del container.pairs[at]
        else:
            key, value = container.pairs[at]
            twin = value if draw(st.booleans()) else draw(retyped(value))
            where = draw(st.sampled_from([at, at + 1, len(container.pairs)]))
            container.pairs.insert(where, [key, twin])
        return dump(root)
    if kind == "string":
        strings = [p for p in places if isinstance(get(p), str)]
        if strings:
            place = draw(st.sampled_from(strings))
            put(place, draw(damaged_string(get(place))))
            return dump(root)
    # half the time at depth 1 or 2, where adapters read most
    children = {id(get(p)) for p in places if p[0] is root}
    shallow = [p for p in places if p[0] is root or id(p[0]) in children]
    pool = shallow if draw(st.booleans()) else places
    place = pool[draw(st.integers(0, len(pool) - 1))]
    put(place, draw(retyped(get(place))))
    return dump(root)


@dataclass
class Mutated:
    """A mutated source: its bytes and what was done (for failure reports)."""

    seed: Seed
    data: bytes
    steps: list[str]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis prints this
        printer.text(f"Mutated({self.seed.name}, {self.steps}, {len(self.data)} bytes)")

    @property
    def header_intact(self) -> bool:
        """Its first line is the seed's first line, byte for byte, and complete."""
        return self.data.startswith(self.seed.lines[0] + b"\n")


LINE_OPS = [
    *("record", "record", "record", "truncate", "bad-bytes", "join", "split", "blank", "twice"),
    *("line-retype", "join-lenient"),
]


@st.composite
def mutated_sources(draw: st.DrawFn, seed: Seed, max_steps: int = 5) -> Mutated:
    """`seed` with 1 to `max_steps` damaged places (header lines one time in eight); retyped
    numbers may lie past int64."""
    lines = list(seed.lines)
    steps: list[str] = []
    for _ in range(draw(st.integers(1, max_steps))):
        op = draw(st.sampled_from(LINE_OPS))
        header = draw(st.integers(0, 7)) == 0 or len(lines) <= HEAD_LINES
        low, high = (0, min(HEAD_LINES, len(lines)) - 1) if header else (HEAD_LINES, len(lines) - 1)
        at = draw(st.integers(low, high))
        line = lines[at]
        if op == "record":
            lines[at] = draw(damaged_record(line))
        elif op == "line-retype":  # valid JSON, not an object
            shape = draw(st.sampled_from([s for s in SHAPES if s != "object"]))
            lines[at] = dump(tree(draw(values_of(shape))))
        elif op == "join-lenient" and at + 1 < len(lines):
            # a value only a lenient decoder takes, on a line joined to the next
            try:
                root = tree(msgspec.json.decode(line))
            except msgspec.DecodeError:
                root = None
            places = [p for p in slots(root) if not isinstance(get(p), Obj | list)]
            if isinstance(root, Obj) and places:
                put(draw(st.sampled_from(places)), Raw(draw(st.sampled_from(LENIENT_ONLY))))
                line = dump(root)
            lines[at : at + 2] = [line + lines[at + 1]]
        elif op == "truncate":
            lines[at] = line[: draw(st.integers(0, max(len(line) - 1, 0)))]
        elif op == "bad-bytes":
            cut = draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + draw(st.sampled_from(BAD_BYTES)) + line[cut:]
        elif op == "join" and at + 1 < len(lines):
            lines[at : at + 2] = [line + lines[at + 1]]
        elif op == "split":
            cut = draw(st.integers(0, len(line)))
            lines[at : at + 1] = [line[:cut], line[cut:]]
        elif op == "blank":
            lines.insert(at, draw(st.sampled_from([b"", b" ", b"\r", b"\t "])))
        elif op == "twice":
            lines.insert(at, line)
        steps.append(f"{op} line {at + 1}")
    data = b"".join(line + b"\n" for line in lines)
    if draw(st.integers(0, 9)) == 0:  # an unterminated tail: the last line loses its newline
        data = data[:-1]
        steps.append("unterminated tail")
    return Mutated(seed, data, steps)
