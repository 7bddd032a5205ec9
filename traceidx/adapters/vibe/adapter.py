"""Mistral Vibe adapter: detection, and each member's records to what they state.

A 3.x session folder is claimed by its ``CURRENT`` member (``store_format``
``mistral.vibe.unified-session-store/…``); a 1.x/2.x folder by its ``meta.json`` beside
``messages.jsonl`` (`traceidx.sources.folder` hands each record with its member's name).
A 1.x/2.x session states its usage only as session totals (``meta.json`` ``stats``): they
are the session's usage, never spread over its calls.
"""

from __future__ import annotations

import json
from typing import Any

from traceidx.adapters.values import (
    dict_or_empty,
    dicts_in,
    int_or_none,
    nonempty_str,
    str_or_none,
)
from traceidx.adapters.vibe.tools import VibeTools
from traceidx.adapters.vibe.usage import legacy_total
from traceidx.adapters.vibe.wire import SHELL_TOOLS, STORE_FORMAT, text_of
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, RecordFacts
from traceidx.domain.timestamps import rfc3339_ms


def _member(obj: Any) -> tuple[str | None, Any]:
    if isinstance(obj, dict) and isinstance(obj.get("member"), str) and "value" in obj:
        return obj["member"], obj["value"]
    return None, None


class VibeAdapter(VibeTools):
    """The registered Mistral Vibe adapter."""

    runtime = "vibe"

    def __init__(self) -> None:
        super().__init__()
        self.legacy: list[tuple[int, dict[str, Any]]] = []  # 1.x/2.x messages.jsonl

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        members = dict(_member(obj) for obj in head[:2])
        current = dict_or_empty(members.get("CURRENT"))
        if str(current.get("store_format", "")).startswith(STORE_FORMAT):
            return True
        meta = dict_or_empty(members.get("meta.json"))
        names = {name for name, _ in map(_member, head)}
        return "messages.jsonl" in names and isinstance(meta.get("session_id"), str)

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position, self.time = position, None
        name, value = _member(obj)
        if name is None:
            self.count_unknown("<not a member>")
            return RecordFacts(None, None)
        if name == "messages.jsonl":
            if isinstance(value, dict):
                self.legacy.append((position, value))
            return RecordFacts(None, "message/" + str(dict_or_empty(value).get("role")))
        index = obj.get("index")
        kind = self.member(name, index if isinstance(index, int) else None, value)
        return RecordFacts(self.time_of(kind, value), kind)

    def time_of(self, kind: str, value: Any) -> int | None:
        """The runtime's time on a record (epoch milliseconds): a history entry's
        ``createdAt``, a journal input's ``determinism.time_unix_ms``, a projection snapshot's
        session ``updatedAt``, a runtime state's latest subagent outcome's completion; the
        other members state none."""
        value = dict_or_empty(value)
        if kind == "generation/projection-state":
            return self.snapshot_time(value)
        if kind == "generation/runtime-state":
            return self.outcomes_time(value)
        created = int_or_none(value.get("createdAt"))
        if created is not None:
            return created
        return self.journal_time(value)

    def finish(self) -> Draft:
        if self.current is None and self.meta is not None:
            self.legacy_session()
            return Draft(self.session, self.loops, self.items, self.unknown, self.outside)
        return super().finish()

    # -- 1.x/2.x ---------------------------------------------------------------------------

    def legacy_model(self, meta: dict[str, Any]) -> str | None:
        config = dict_or_empty(meta.get("agent_config")) or dict_or_empty(meta.get("config"))
        alias = nonempty_str(config.get("active_model"))
        for model in dicts_in(config.get("models")):
            if alias is not None and model.get("alias") == alias:
                return nonempty_str(model.get("name")) or alias
        return nonempty_str(config.get("model_name")) or alias

    def legacy_session(self) -> None:
        """A 1.x/2.x session: its messages in turns, its totals as the session's usage."""
        assert self.meta is not None
        where, meta = self.meta
        self.session = session = self.draft_session()
        if session is None:
            return
        session.created_at = rfc3339_ms(meta.get("start_time"))
        session.branch = nonempty_str(meta.get("git_branch"))
        model = self.legacy_model(meta)
        total = legacy_total(meta.get("stats"))
        session.usage = total.located((where,), None, model) if total else None
        loop: DraftLoop | None = None
        last: DraftItem | None = None
        for position, message in self.legacy:
            self.position = position
            role, text = message.get("role"), text_of(message.get("content"))
            if role == "user" and text is not None:
                if loop is not None:
                    loop.end = position
                loop = DraftLoop(start=position, model_id=model)
                self.loops.append(loop)
                last = None
                self.emit("human.request", "structural", {"text": text, "has_images": False}, loop)
            elif role == "assistant" and loop is not None:
                if last is not None:
                    last.role = "agent.commentary"
                    last = None
                if text is not None:
                    value = {"text": text, "has_images": False}
                    last = self.emit("agent.final_answer", "structural", value, loop)
                for call in dicts_in(message.get("tool_calls")):
                    if last is not None:
                        last.role, last = "agent.commentary", None
                    function = dict_or_empty(call.get("function"))
                    name = nonempty_str(function.get("name"))
                    raw = str_or_none(function.get("arguments"))
                    try:
                        args = json.loads(raw) if raw else None
                    except ValueError:
                        args = raw
                    self.tool_call(name, nonempty_str(call.get("id")), args, loop, SHELL_TOOLS)
            elif role == "tool" and loop is not None:
                value = {"text": text, "failed": False}
                self.emit(
                    "tool.output",
                    "structural",
                    value,
                    loop,
                    output_of=nonempty_str(message.get("tool_call_id")),
                )
            elif role != "system":
                self.count_unknown(f"message/{role}")
