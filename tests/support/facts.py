"""Helpers the corpus tests share: query rows as dicts, an item's text, a file's decoded lines
(a document's records, a database session's decoded rows, a session folder's decoded
records), an adapter drained while it reads a file, a runtime's longest trace at hand, the
sessions of the databases under a folder, the session folders under a folder."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import msgspec
import pyarrow.parquet as pq

from tests.support.files import CORPUS, FIXTURES, WITH_CORPUS
from traceidx.adapters.base import Adapter
from traceidx.demo import copy_ids
from traceidx.domain.drafts import DraftItem, DraftLoop
from traceidx.projection.ingest import split_joined
from traceidx.sources import folder as session_folder
from traceidx.sources import rowsource
from traceidx.sources.discover import framing_of, named_like_trace
from traceidx.sources.document import frame_document
from traceidx.sources.frame import frame_bytes
from traceidx.sources.sourceio import StreamStats, logical_chunks
from traceidx.store.dataset import read_manifest

_DECODER = msgspec.json.Decoder()

#: value shapes whose `text` member is the item's text, in the order they are looked up
TEXT_SHAPES = (
    "text",
    "delegation",
    "subagent_report",
    "subagent_activity",
    "tool_output",
    "context",
    "instruction",
    "reasoning",
)


def dict_rows(con: Any, sql: str) -> list[dict[str, Any]]:
    """The rows of a query as dicts keyed by column name."""
    rel = con.sql(sql)
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def text_of(semantic: dict[str, Any], shapes: tuple[str, ...] = TEXT_SHAPES) -> str | None:
    """The text value of the first of `shapes` an item's semantic carries."""
    for shape in shapes:
        value = semantic.get(shape)
        if value and value.get("text"):
            return str(value["text"]["value"])
    return None


def decoded_records(path: Path) -> list[tuple[int, list[Any]]]:
    """(position, decoded values) of every parsable line of a trace file, as ingest feeds an
    adapter (a joined line gives its values; a malformed one none; oversized lines none); of
    every row of a database session (`path` is its locator: traceidx.sources.rowsource); of
    every record of a session folder (`path` is the folder: traceidx.sources.folder)."""
    where = rowsource.parse(str(path))
    if where is not None and where.session is not None:
        return [(n, [_DECODER.decode(line)]) for n, line in enumerate(rowsource.lines(str(path)))]
    if path.is_dir():  # a session folder: its members' records (traceidx.sources.folder)
        framed = session_folder.records(session_folder.locator_of(str(path)), 1 << 30)
        return [(r.line.position, [r.value]) for r in framed if r.status == "ok"]
    with open(path, "rb") as handle:
        data = b"".join(logical_chunks(handle, StreamStats()))
    if framing_of(str(path)) == "document":  # a JSON document: a record per element
        parts = frame_document(data, len(data) + 1)
        return [(p.line.position, [p.value]) for p in parts if p.status == "ok"]
    out: list[tuple[int, list[Any]]] = []
    for line in frame_bytes(data):
        if line.data is None:
            continue
        try:
            out.append((line.position, [_DECODER.decode(line.data)]))
        except (msgspec.DecodeError, UnicodeDecodeError):
            out.append((line.position, split_joined(line.data) or []))
    return out


def item_snapshot(item: DraftItem) -> Any:
    """A draft item as builtins, its loop by start position (a copy taken the moment it is
    drained, to compare with what the adapter holds later)."""
    copied = {f.name: getattr(item, f.name) for f in fields(DraftItem) if f.name != "loop"}
    copied["loop"] = None if item.loop is None else item.loop.start
    return msgspec.to_builtins(copied)


def loop_snapshot(loop: DraftLoop) -> Any:
    """A draft loop as builtins."""
    return msgspec.to_builtins(loop)


@dataclass
class Drained:
    """What `drain_while_reading` saw: the drafts drained and the most items the adapter held
    at once."""

    loops: list[DraftLoop]
    items: list[DraftItem]
    most_held: int


def drain_while_reading(adapter: Adapter, path: Path) -> Drained:
    """Feed every record of a trace file to `adapter`, draining after each (a drained item must
    have left the adapter at once); `finish` is the caller's."""
    loops: list[DraftLoop] = []
    items: list[DraftItem] = []
    most_held = 0
    for position, values in decoded_records(path):
        for value in values:
            adapter.feed(position, value)
        got_loops, got_items = adapter.drain()
        held = {id(item) for item in adapter.items}
        assert not any(id(item) in held for item in got_items)
        loops += got_loops
        items += got_items
        most_held = max(most_held, len(adapter.items))
    return Drained(loops, items, most_held)


def largest(folder: Path) -> Path:
    """The largest trace file directly in `folder`."""
    return max((p for p in folder.glob("*.jsonl*") if p.is_file()), key=lambda p: p.stat().st_size)


def logical_bytes(path: Path) -> bytes:
    """A trace file's logical bytes (a zstd file decoded), as ingest reads them."""
    with open(path, "rb") as handle:
        return b"".join(logical_chunks(handle, StreamStats()))


def trace_files(folder: Path, logs: bool = False) -> list[Path]:
    """The files under `folder` a walk takes as trace files (JSON lines, or a file a runtime's
    registry entry declares), not a database; a generator's logs (``_gen/``) only if `logs`."""
    return [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and named_like_trace(str(p.parent), p.name)
        and rowsource.layout_of(p.name) is None
        and (logs or "_gen" not in p.parts)
    ]


def committed_traces(runtime: str) -> list[Path]:
    """The committed copies of the generated traces of a runtime (``tests/fixtures/generated``;
    `runtime` is its folder name there), largest first, without ground truth or logs."""
    files = trace_files(FIXTURES / "generated" / runtime)
    assert files, f"no committed {runtime} traces"
    return sorted(files, key=lambda p: (-p.stat().st_size, str(p)))


def long_trace(runtime: str, folder: Path, copies: int = 1) -> Path:
    """A long trace of `runtime` (its folder name in the corpus: claude, codex, pi, dsh).

    With the shared corpus, its largest public trace of the runtime, as it is. Without it, a
    plain file written in `folder`: the largest committed trace of the runtime (decoded if
    zstd) followed by `copies` - 1 copies of it, each with every id made unique
    (`traceidx.demo.copy_ids`), so the file holds `copies` times its sessions, loops and
    items, one after another.
    """
    if WITH_CORPUS:
        return largest(CORPUS / "public" / runtime)
    source = committed_traces(runtime)[0]
    data = logical_bytes(source)
    path = folder / source.name.removesuffix(".zstd")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data + b"".join(copy_ids(data, k) for k in range(1, copies)))
    return path


def database_sessions(root: Path) -> list[Path]:
    """The sessions of every runtime database under `root`, as locators (sources.rowsource)."""
    found: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if rowsource.layout_of(p.name) is not None):
        try:
            sessions = rowsource.listing(str(path))
        except (OSError, rowsource.Unreadable, rowsource.Foreign, rowsource.Changed):
            continue
        found += [Path(rowsource.locator_of(str(path), s)) for s in sorted(sessions)]
    return found


def session_folders(root: Path) -> list[Path]:
    """The session folders under `root` (a runtime's declared layout: traceidx.sources.folder),
    as discovery finds them: a session folder is not looked into."""
    found: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if p.is_dir()):
        if any(f in path.parents for f in found):
            continue
        if session_folder.layout_at(str(path)) is not None:
            found.append(path)
    return found


def in_session_folder(path: Path, folders: list[Path]) -> bool:
    """Whether a file is a member of one of the session `folders` (not a trace of its own)."""
    return any(f in path.parents for f in folders)


def database_streams(folder: Path) -> list[Path]:
    """Each database session at hand (the committed fixtures', and the shared corpus's generated
    ones when it is present) written to `folder` as its logical stream: its rows framed one JSON
    line each (traceidx.sources.rowsource), a file a test can read, mutate and feed like a trace."""
    roots = [FIXTURES / "generated", CORPUS / "generated"] if WITH_CORPUS else [FIXTURES]
    out: list[Path] = []
    for root in roots:
        for locator in database_sessions(root):
            path = folder / root.parent.name / f"{locator.name.rsplit('#', 1)[1]}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"".join(line + b"\n" for line in rowsource.lines(str(locator))))
            out.append(path)
    return out


def published_facts(dataset: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every published row, in a canonical order (layout-independent)."""
    manifest = read_manifest(dataset)
    assert manifest is not None
    out = {}
    for table, files in manifest.tables().items():
        rows = [row for f in files for row in pq.read_table(dataset / f).to_pylist()]
        out[table] = sorted(repr(sorted(r.items())) for r in rows)
    return out  # type: ignore[return-value]


def main_transcripts(root: Path) -> list[Path]:
    """Main session transcripts (not subagent files, not the generator's own logs)."""
    return sorted(
        p for p in root.rglob("*.jsonl") if "subagents" not in p.parts and "_gen" not in p.parts
    )


def assert_database_fixture_is_the_corpus_s(database: Path, folder: str, sessions: int) -> None:
    """A committed database fixture (a copy of one of ``generated/<folder>/``'s databases with
    the other sessions' rows, and rows traceidx does not read, deleted) frames each of its
    `sessions` sessions to the lines the corpus's database frames it to, and its ground truth
    (`expect.json`, `manifest.json`) is the corpus's filtered to them."""
    import json

    committed = FIXTURES / "generated" / folder
    corpus = CORPUS / "generated" / folder
    original = corpus / database.relative_to(committed)
    mine = rowsource.listing(str(database))
    assert len(mine) == sessions
    for session in mine:
        ours = list(rowsource.lines(f"{database}#{session}"))
        theirs = list(rowsource.lines(f"{original}#{session}"))
        assert ours == theirs, session
    for name, key in (("expect.json", "native_session_id"), ("manifest.json", "session_id")):
        whole = json.loads((corpus / name).read_text("utf-8"))
        part = json.loads((committed / name).read_text("utf-8"))
        assert part["sessions"] == [s for s in whole["sessions"] if s[key] in mine]
        assert {k: v for k, v in part.items() if k != "sessions"} == {
            k: v for k, v in whole.items() if k != "sessions"
        }
