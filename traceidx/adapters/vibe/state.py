"""Mistral Vibe adapter state: what a session folder's members state, and the turns they make.

Records arrive member by member (`traceidx.sources.folder`): ``CURRENT`` names the current
generation, whose manifest names the chunks of the projection history; the other
generation's files are older copies and only Records. Nothing is drafted until `finish`:
the history (the current generation's chunks, then the journal's entries after its snapshot)
gives the turns, and the journal gives the usage of the completions of every turn it holds
from its start (a turn whose start was pruned with an earlier segment has no per-call usage:
the session's ``tokenUsage`` total covers it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from traceidx.adapters.base import Adapter
from traceidx.adapters.values import dict_or_empty, dicts_in, int_or_none, nonempty_str
from traceidx.adapters.vibe.usage import completion_usage, session_total
from traceidx.adapters.vibe.wire import CHUNK, GENERATION, TOOL_RESULT
from traceidx.domain.drafts import Draft, DraftLoop, DraftSession
from traceidx.domain.rules import UsageSample
from traceidx.domain.timestamps import rfc3339_ms


@dataclass(slots=True)
class Entry:
    """A projection history entry and the record that states it (its latest version)."""

    position: int
    value: dict[str, Any]


@dataclass(slots=True)
class Turn:
    """A turn of the history: its Loop, and the completions the journal holds of it."""

    loop: DraftLoop
    turn_id: str | None
    entries: list[Entry] = field(default_factory=list)
    calls: list[UsageSample] | None = None  # None: the journal does not hold it whole


class VibeState(Adapter):
    """What the folder's members state, kept until `finish` drafts the session."""

    def __init__(self) -> None:
        super().__init__()
        self.generation: str | None = None
        self.snapshot = 0  # the journal sequence the current generation folds
        self.current: tuple[int, dict[str, Any]] | None = None
        self.meta: tuple[int, dict[str, Any]] | None = None
        self.history_chunks: list[str] = []
        self.chunks: dict[str, list[Entry]] = {}
        self.projection: tuple[int, dict[str, Any]] | None = None
        self.runtime_state: tuple[int, dict[str, Any]] | None = None
        self.checkpoint: tuple[int, dict[str, Any]] | None = None
        self.tool_results: dict[str, tuple[int, dict[str, Any]]] = {}
        self.journal: list[tuple[int, dict[str, Any]]] = []
        self.loops: list[DraftLoop] = []
        self.outside: list[UsageSample] = []

    # -- members ---------------------------------------------------------------------------

    def member(self, name: str, index: int | None, value: Any) -> str:
        """Keep what one member's record states; its native type."""
        if name == "CURRENT":
            self.current = (self.position, dict_or_empty(value))
            self.generation = nonempty_str(self.current[1].get("generation"))
            self.snapshot = int_or_none(self.current[1].get("snapshot_sequence")) or 0
            return "CURRENT"
        if name == "meta.json":
            self.meta = (self.position, dict_or_empty(value))
            return "meta"
        if (found := GENERATION.fullmatch(name)) is not None:
            if found.group(1) == self.generation:
                self._generation(found.group(2), dict_or_empty(value))
            return f"generation/{found.group(2)}"
        if (found := CHUNK.fullmatch(name)) is not None:
            if found.group(1) in self.history_chunks and isinstance(value, dict):
                self.chunks.setdefault(found.group(1), []).append(Entry(self.position, value))
            return "chunk"
        if (found := TOOL_RESULT.fullmatch(name)) is not None:
            self.tool_results[found.group(1)] = (self.position, dict_or_empty(value))
            return "tool-result"
        if name.startswith("journal/") and isinstance(value, dict):
            self.journal.append((self.position, value))
            kind = nonempty_str(value.get("type"))
            return f"journal/{kind}" if kind else "journal"
        self.count_unknown(name)
        return name

    def _generation(self, kind: str, value: dict[str, Any]) -> None:
        if kind == "manifest":
            chunks = dict_or_empty(value.get("projection_state")).get("chunks")
            self.history_chunks = [c for c in chunks or [] if isinstance(c, str)]
        elif kind == "projection-state":
            self.projection = (self.position, value)
        elif kind == "runtime-state":
            self.runtime_state = (self.position, value)
        elif kind == "checkpoint":
            self.checkpoint = (self.position, value)

    # -- the history -----------------------------------------------------------------------

    def history(self) -> list[Entry]:
        """The current generation's history, then the journal's entries after its snapshot
        (a later version of an entry replaces it where it stands)."""
        entries: list[Entry] = []
        at: dict[str, int] = {}
        for chunk in self.history_chunks:
            for entry in self.chunks.get(chunk, []):
                self._upsert(entries, at, entry)
        for position, record in self.journal:
            sequence = int_or_none(record.get("sequence")) or 0
            if record.get("type") != "projection_delta" or sequence <= self.snapshot:
                continue
            for op in dicts_in(dict_or_empty(record.get("payload")).get("delta")):
                value = op.get("entry")
                if isinstance(value, dict):
                    self._upsert(entries, at, Entry(position, value))
        return entries

    @staticmethod
    def _upsert(entries: list[Entry], at: dict[str, int], entry: Entry) -> None:
        native = nonempty_str(entry.value.get("id"))
        if native is not None and native in at:
            entries[at[native]] = entry
            return
        if native is not None:
            at[native] = len(entries)
        entries.append(entry)

    def journal_calls(self) -> dict[str, list[UsageSample]]:
        """The completions of each turn the journal holds from its start, by turn id: one
        per ``action_result`` of a succeeded completion (its echo in the next ``core_input``
        is not counted)."""
        calls: dict[str, list[UsageSample]] = {}
        turn: str | None = None
        for position, record in self.journal:
            payload = dict_or_empty(record.get("payload"))
            kind = record.get("type")
            if kind == "command_reserved" and payload.get("method") == "turn/start":
                turn = nonempty_str(payload.get("client_command_id"))
                if turn is not None:
                    calls[turn] = []
            elif kind == "action_result" and turn is not None:
                outer = dict_or_empty(payload.get("result"))
                if outer.get("type") != "completion_succeeded":
                    continue
                sample = completion_usage(outer.get("result"))
                if sample is not None:
                    time = self.journal_time(record)
                    calls[turn].append(sample.located((position,), time, self.model()))
        return calls

    @staticmethod
    def journal_time(record: dict[str, Any]) -> int | None:
        payload = dict_or_empty(record.get("payload"))
        determinism = dict_or_empty(dict_or_empty(payload.get("input")).get("determinism"))
        return int_or_none(determinism.get("time_unix_ms"))

    @staticmethod
    def snapshot_time(value: dict[str, Any]) -> int | None:
        """A projection snapshot's time: when its session was last updated."""
        session = dict_or_empty(dict_or_empty(value.get("snapshot")).get("session"))
        return int_or_none(session.get("updatedAt"))

    @staticmethod
    def outcomes_time(value: dict[str, Any]) -> int | None:
        """A runtime state's time: the latest completion of a subagent's last outcome."""
        children = dict_or_empty(dict_or_empty(value.get("subagents")).get("children"))
        times: list[int] = []
        for child in children.values():
            state = dict_or_empty(dict_or_empty(child).get("state"))
            done = int_or_none(dict_or_empty(state.get("last_outcome")).get("completed_at_unix_ms"))
            if done is not None:
                times.append(done)
        return max(times, default=None)

    # -- the session -----------------------------------------------------------------------

    def model(self) -> str | None:
        """The session's model: ``meta.json`` names it (a subagent's folder has none)."""
        meta = self.meta[1] if self.meta else {}
        return nonempty_str(dict_or_empty(meta.get("config")).get("model_name"))

    def draft_session(self) -> DraftSession | None:
        meta = self.meta[1] if self.meta else {}
        current = self.current[1] if self.current else {}
        native = nonempty_str(current.get("session_id")) or nonempty_str(meta.get("session_id"))
        if native is None:
            return None
        where = self.current[0] if self.current else self.meta[0] if self.meta else 0
        snapshot = dict_or_empty(
            dict_or_empty(self.projection[1] if self.projection else {}).get("snapshot")
        )
        state = dict_or_empty(snapshot.get("session"))
        runtime = self.runtime_state[1] if self.runtime_state else {}
        metadata = dict_or_empty(runtime.get("session_metadata"))
        created = rfc3339_ms(meta.get("start_time"))
        session = DraftSession(
            native, where, created_at=created or int_or_none(state.get("createdAt"))
        )
        session.name = nonempty_str(meta.get("title")) or nonempty_str(state.get("title"))
        working = dict_or_empty(meta.get("environment")).get("working_directory")
        session.working_directory = nonempty_str(working) or nonempty_str(metadata.get("cwd"))
        parent = nonempty_str(meta.get("parent_session_id")) or nonempty_str(
            dict_or_empty(runtime.get("identity")).get("parent_session_id")
        )
        if parent is not None and parent != native:
            witness = self.runtime_state[0] if self.runtime_state else where
            session.delegated_from = (parent, witness)
        total = session_total(state.get("tokenUsage"))
        for position, record in self.journal:  # a later total than the snapshot's (a live run)
            if record.get("type") != "projection_delta":
                continue
            if (int_or_none(record.get("sequence")) or 0) <= self.snapshot:
                continue
            for op in dicts_in(dict_or_empty(record.get("payload")).get("delta")):
                later = dict_or_empty(dict_or_empty(op.get("state")).get("session"))
                sample = session_total(later.get("tokenUsage"))
                if sample is not None:
                    total, where = sample, position
        if total is not None:
            witness = self.projection[0] if self.projection else where
            session.usage = total.located((witness,), None, self.model())
        return session

    def finish(self) -> Draft:
        self.session = self.draft_session()
        if self.session is not None:
            self.turns()
        return Draft(self.session, self.loops, self.items, self.unknown, self.outside)

    def turns(self) -> None:
        raise NotImplementedError
