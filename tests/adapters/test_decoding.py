"""Adapters decode only the members they read (`Adapter.record_type`), and that changes nothing.

A record is decoded to a dict of the members its adapter reads; the rest of the line (file
contents Claude Code repeats in ``toolUseResult``, Codex's rate limits, Pi's diffs…) is skipped
without being built. Three things hold it honest:

* every key an adapter's code looks up (``obj.get("k")``, ``obj["k"]``, ``"k" in obj``) on a
  record, or on a member decoded narrowly, is declared there, checked on its source;
* ingesting a real trace, or a copy with values of other JSON types swapped in, publishes the
  same rows, statuses and warnings as decoding every member;
* a line whose text is not UTF-8 only in members the adapter skips is still ``malformed``
  (decoders do not check the text of what they skip: such lines are decoded whole).
"""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import traceidx
from tests.support.facts import database_streams
from tests.support.files import fixture_path
from tests.support.mutation import recognised_files, write_variants
from traceidx.adapters import adapters, detect
from traceidx.adapters.base import Adapter
from traceidx.adapters.claude_code import ClaudeCodeAdapter
from traceidx.projection import ingest as ingest_module
from traceidx.projection.ingest import Settings, ingest, record_decoder
from traceidx.sources.sourceio import CHUNK_BYTES, valid_utf8

NARROW = sorted(name for name, cls in adapters().items() if cls.record_type is not None)


#: per adapter that decodes narrowly, the names its code gives what it decodes: the record, and
#: each member decoded to a narrower type (by the path of members that leads to it)
RECEIVERS: dict[str, dict[str, tuple[str, ...]]] = {
    "claude_code": {"obj": (), "facts": ("toolUseResult",)},
    "gemini": {"obj": ()},
    "opencode": {"obj": (), "row": ("row",)},
    "kilo": {},  # OpenCode's code reads its records (above); Kilo's own looks up nothing on them
    "qwen": {
        "obj": (),
        "facts": ("toolCallResult",),
        "display": ("toolCallResult", "resultDisplay"),
        "payload": ("systemPayload",),
    },
    "copilot": {"obj": (), "data": ("data",)},
}


def _looked_up(source: str, receivers: set[str]) -> dict[str, set[str]]:
    """The string keys a module's code looks up on each of the given names."""
    keys: dict[str, set[str]] = {name: set() for name in receivers}

    def text(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return None

    def name(node: ast.AST) -> str | None:
        return node.id if isinstance(node, ast.Name) and node.id in receivers else None

    for node in ast.walk(ast.parse(source)):
        found: tuple[str | None, str | None] = (None, None)
        if isinstance(node, ast.Subscript):
            found = (name(node.value), text(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "pop"):
                found = (name(node.func.value), text(node.args[0]))
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            found = (name(node.comparators[0]), text(node.left))
        receiver, key = found
        if receiver is not None and key is not None:
            keys[receiver].add(key)
    return keys


def _declared(kind: Any, path: tuple[str, ...]) -> set[str]:
    """The members a record type decodes at the end of a path of members."""
    for step in path:
        union = get_args(kind.__annotations__[step])
        kind = next(k for k in union if hasattr(k, "__annotations__"))
    return set(kind.__annotations__)


def test_every_decoding_adapter_has_its_names_listed() -> None:
    assert set(RECEIVERS) == set(NARROW)


@pytest.mark.parametrize("runtime", NARROW)
def test_every_key_an_adapter_looks_up_is_decoded(runtime: str) -> None:
    cls = adapters()[runtime]
    folder = Path(traceidx.__file__).parent / "adapters"
    files = [folder / f"{runtime}.py"] if (folder / f"{runtime}.py").exists() else []
    source = "\n".join(f.read_text() for f in files or sorted((folder / runtime).glob("*.py")))
    receivers = RECEIVERS[runtime]
    for receiver, keys in _looked_up(source, set(receivers)).items():
        assert keys, f"{runtime}: nothing is looked up on {receiver!r}"
        missing = keys - _declared(cls.record_type, receivers[receiver])
        assert not missing, f"{runtime}: looked up on {receiver} but not decoded: {sorted(missing)}"


def test_the_key_scan_finds_lookups() -> None:
    code = """
obj.get("a"); obj["b"]; "c" in obj; obj.pop("d", None); "e" not in obj
other.get("f"); facts.get("g"); y = {"not_a_lookup": 1}
"""
    assert _looked_up(code, {"obj", "facts"}) == {"obj": set("abcde"), "facts": {"g"}}


def _fed(cls: type[Adapter], records: list[tuple[int, Any]]) -> list[Any]:
    """What an adapter says of records fed in order: each record's facts, then its draft
    (or the exception that stopped it)."""
    adapter = cls()
    out: list[Any] = []
    try:
        for position, record in records:
            out.append(adapter.feed(position, record))
        out.append(adapter.finish())
    except Exception as exc:  # the same bug must show either way
        out.append(f"{type(exc).__name__}: {exc}")
    return out


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Recognised corpus traces (a database session as its rows' lines) and copies of them
    with values of other JSON types swapped in."""
    root = tmp_path_factory.mktemp("decoding")
    files = recognised_files(400_000) + database_streams(tmp_path_factory.mktemp("rows"))
    write_variants(files, root, 2)
    return [*files, *sorted(p for p in root.rglob("*.jsonl") if p.is_file())]


def test_decoding_only_what_is_read_gives_the_same_facts(traces: list[Path]) -> None:
    """Every line of every trace decoded both ways (not only those after the leading lines
    that choose the adapter, which are always decoded whole) tells the adapter the same."""
    generic = msgspec.json.Decoder()
    runtimes: set[str] = set()
    for path in traces:
        lines = path.read_bytes().splitlines()
        full: list[tuple[int, Any]] = []
        narrow: list[tuple[int, Any]] = []
        for position, line in enumerate(lines):
            with contextlib.suppress(msgspec.DecodeError):
                full.append((position, generic.decode(line)))
        cls = detect([record for _, record in full[:32]])
        if cls is None or cls.record_type is None:
            continue
        decoder = record_decoder(cls)
        for position, line in enumerate(lines):
            try:
                narrow.append((position, decoder.decode(line)))
            except msgspec.ValidationError:  # not an object: decoded whole, as ingest does
                narrow.append((position, generic.decode(line)))
            except msgspec.DecodeError:
                continue
        assert [p for p, _ in narrow] == [p for p, _ in full], path
        assert _fed(cls, narrow) == _fed(cls, full), path
        runtimes.add(cls.runtime)
    assert runtimes == set(NARROW)


def test_text_that_is_not_utf8_in_an_unread_member_is_malformed(tmp_path: Path) -> None:
    line = (
        b'{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:%02dZ",'
        b'"message":{"role":"user","content":"hello"},"uuid":"%s"}'
    )
    lines = [line % (n, b"u%d" % n) for n in range(40)]  # past the leading lines
    lines.insert(35, line % (35, b"\xff\xfe"))
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = ingest(str(path), Settings())
    assert result.runtime == "claude_code" and result.state == "indexed"
    assert result.malformed == 1
    assert result.warnings == [f"{path}:36: line is not valid JSON; kept as a malformed record"]


@given(
    st.binary(max_size=64) | st.text(max_size=32).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
def test_valid_utf8_agrees_with_python(data: bytes) -> None:
    try:
        data.decode("utf-8")
        expected = True
    except UnicodeDecodeError:
        expected = False
    assert valid_utf8(data) is expected


def test_the_lines_after_the_deciding_ones_are_decoded_narrowly_in_the_same_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file smaller than a chunk: its leading lines are decoded whole (to choose the
    adapter), every later line by the adapter's decoder (it was decoded whole until the next
    chunk, that is, in most files not at all)."""
    folder = fixture_path("generated", "claude", "s1-garnet")
    path = next(p for p in sorted(folder.rglob("*.jsonl")) if len(p.read_bytes()) > 20_000)
    lines = path.read_bytes().count(b"\n")
    assert lines > 32 and len(path.read_bytes()) < CHUNK_BYTES
    narrow = record_decoder(ClaudeCodeAdapter)
    decoded: list[bytes] = []

    class Spy:
        def decode(self, data: bytes) -> Any:
            decoded.append(data)
            return narrow.decode(data)

    monkeypatch.setitem(ingest_module._DECODERS, ClaudeCodeAdapter, Spy())
    result = ingest(str(path), Settings())
    assert result.state == "indexed" and result.record_count == lines
    assert len(decoded) == lines - 32
