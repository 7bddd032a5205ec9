"""Mistral Vibe turns and tools: the history's messages and tool effects as Loops and items.

A turn opens at its user message (``source: turn_start``); assistant messages are the
agent's text (the turn's last entry, when it is one and the turn did not fail or stop, is
its final answer); an ``effect`` entry is a tool call with its outcome: ``state.output``
(``structured_content.returncode`` for the shell tool; a result too large for the history
is in ``tool-results/<tool>-<call id>.json``, which the excerpt names). A ``subagent``
effect (``agents.spawn``) delegates its ``task`` to the child session it names; the child's
answer is in the parent's runtime-state (``subagents.children.<name>.state.last_outcome``).
A ``reasoning`` entry is the model's reasoning (its ``text``, else its ``summary`` parts). A
``checkpoint`` entry of kind ``compaction`` is a compaction.
"""

from __future__ import annotations

import json
from typing import Any

from traceidx.adapters.values import dict_or_empty, int_or_none, nonempty_str, reasoning_value
from traceidx.adapters.vibe.state import Entry, Turn, VibeState
from traceidx.adapters.vibe.wire import (
    ASSISTANT_PREFIX,
    SAVED_RESULT,
    SHELL_TOOLS,
    SUBAGENT,
    text_of,
)
from traceidx.domain.drafts import DraftLoop


class VibeTools(VibeState):
    """Drafts the history's turns: messages, tool calls and outputs, subagents."""

    def turns(self) -> None:
        journal = self.journal_calls()
        turns: list[Turn] = []
        for entry in self.history():
            value = entry.value
            if value.get("type") == "message" and value.get("source") == "turn_start":
                turn_id = nonempty_str(value.get("turnId"))
                loop = DraftLoop(start=entry.position, native_id=turn_id, model_id=self.model())
                if turns and turns[-1].loop.end is None:
                    turns[-1].loop.end = entry.position
                turns.append(Turn(loop, turn_id, [entry], journal.get(turn_id or "")))
                self.loops.append(loop)
            elif turns:
                turns[-1].entries.append(entry)
        latest = dict_or_empty(dict_or_empty(self.projection_snapshot()).get("latestTurn"))
        for turn in turns:
            self.turn(turn, latest if latest.get("id") == turn.turn_id else None)

    def projection_snapshot(self) -> dict[str, Any]:
        return dict_or_empty((self.projection[1] if self.projection else {}).get("snapshot"))

    def turn(self, turn: Turn, latest: dict[str, Any] | None) -> None:
        loop = turn.loop
        status = nonempty_str((latest or {}).get("status"))
        stopped = status in ("failed", "interrupted", "cancelled")
        last = turn.entries[-1]
        for entry in turn.entries:
            self.position, value = entry.position, entry.value
            self.time = int_or_none(value.get("createdAt"))
            kind = value.get("type")
            if kind == "message":
                self.message(loop, value, final=entry is last and not stopped)
            elif kind == "effect":
                self.effect(loop, value)
            elif kind == "reasoning":
                self.reasoning(loop, value)
            elif kind == "checkpoint" and value.get("kind") == "compaction":
                text = nonempty_str(value.get("summary"))
                self.emit("runtime.compaction_summary", "structural", {"summary": text}, loop)
            else:
                self.count_unknown(f"entry/{kind}")
        if turn.calls is not None:
            loop.usage.extend(turn.calls)
        if latest is not None and status is not None:
            self.end_turn(loop, last, latest, status)

    def end_turn(self, loop: DraftLoop, last: Entry, latest: dict[str, Any], status: str) -> None:
        outcome = {"completed": "completed", "failed": "failed", "interrupted": "interrupted"}
        if status not in outcome:
            return
        loop.end = (self.checkpoint or self.projection or (last.position, {}))[0]
        loop.outcome = outcome[status]
        error = dict_or_empty(latest.get("error"))
        text = nonempty_str(error.get("message")) or nonempty_str(latest.get("reason"))
        if text is not None and status != "completed":
            # stated by the projection snapshot's latest turn, at the snapshot's time
            where, snapshot = self.projection or (loop.end, {})
            self.position, self.time = where, self.snapshot_time(snapshot)
            self.emit("runtime.notice", "structural", {"text": text, "has_images": False}, loop)

    def message(self, loop: DraftLoop, value: dict[str, Any], *, final: bool) -> None:
        text = text_of(value.get("content"))
        role = value.get("role")
        if role == "user" and value.get("source") == "turn_start":
            if text is None:
                return
            if self.session is not None and self.session.delegated_from is not None:
                self.session.task = self.session.task or text  # the parent agent's task
                return
            self.emit("human.request", "structural", {"text": text, "has_images": False}, loop)
        elif role == "assistant" and text is not None:
            kind = "agent.final_answer" if final else "agent.commentary"
            self.emit(kind, "structural", {"text": text, "has_images": False}, loop)
        elif role == "user" and text is not None:
            self.emit("runtime.notice", "structural", {"text": text, "has_images": False}, loop)
        elif str(value.get("id", "")).startswith(ASSISTANT_PREFIX) and text is None:
            return  # an assistant message of tool calls only
        else:
            self.count_unknown(f"message/{role}")

    def reasoning(self, loop: DraftLoop, value: dict[str, Any]) -> None:
        """A ``reasoning`` entry: the model's reasoning text, else its summary parts."""
        text = nonempty_str(value.get("text"))
        if text is not None:
            self.emit("agent.reasoning", "structural", reasoning_value(text), loop)
            return
        summary = text_of(value.get("summary"))
        self.emit("agent.reasoning", "structural", reasoning_value(summary, "summary"), loop)

    def effect(self, loop: DraftLoop, value: dict[str, Any]) -> None:
        detail = dict_or_empty(value.get("detail"))
        name = nonempty_str(detail.get("toolName")) or nonempty_str(value.get("title"))
        call_id = nonempty_str(value.get("id"))
        args = detail.get("input")
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS)
        child = nonempty_str(detail.get("childSessionId"))
        if detail.get("kind") == SUBAGENT:
            task = nonempty_str(dict_or_empty(args).get("task"))
            delegation = {"text": task, "has_images": False, "agent_type": None}
            agent = nonempty_str(dict_or_empty(args).get("agent"))
            delegation["agent_type"] = agent
            self.emit("agent.delegation", "structural", delegation, loop, session_ref=child)
        state = dict_or_empty(value.get("state"))
        status = state.get("status")
        if status not in ("completed", "failed"):
            return  # pending, or cancelled (an interrupt): no result
        output = dict_or_empty(state.get("output"))
        text = text_of(output.get("content")) or nonempty_str(state.get("outputText"))
        structured = dict_or_empty(output.get("structured_content"))
        saved = SAVED_RESULT.search(text or "")
        where: int | None = None  # the saved result's record, beside the effect's
        if saved is not None and saved.group(1) in self.tool_results:
            where, whole = self.tool_results[saved.group(1)]
            structured = dict_or_empty(whole.get("structured_content")) or whole
        result: dict[str, Any] = {"failed": status == "failed" or output.get("type") == "failure"}
        code = int_or_none(structured.get("returncode")) if name in SHELL_TOOLS else None
        if code is not None:
            result["exit_code"] = code
            result["failed"] = result["failed"] or code != 0
        stdout, stderr = structured.get("stdout"), structured.get("stderr")
        if isinstance(stdout, str) or isinstance(stderr, str):
            text = "".join(t for t in (stdout, stderr) if isinstance(t, str))
        elif text is None and structured:
            text = json.dumps(structured, ensure_ascii=False)
        result["text"] = text or None
        output_item = self.emit("tool.output", "structural", result, loop, output_of=call_id)
        if where is not None:
            output_item.records.append(where)
        if detail.get("kind") == SUBAGENT and child is not None:
            self.report(loop, child)

    def report(self, loop: DraftLoop, child: str) -> None:
        """The child's answer as the parent's runtime-state keeps it, at the time it states the
        child's outcome was completed."""
        if self.runtime_state is None:
            return
        position, runtime = self.runtime_state
        children = dict_or_empty(dict_or_empty(runtime.get("subagents")).get("children"))
        for record in children.values():
            record = dict_or_empty(record)
            if record.get("child_session_id") != child:
                continue
            outcome = dict_or_empty(dict_or_empty(record.get("state")).get("last_outcome"))
            text = nonempty_str(outcome.get("final_answer")) or text_of(outcome.get("output"))
            self.position, self.time = position, int_or_none(outcome.get("completed_at_unix_ms"))
            value = {"text": text, "has_images": False}
            self.emit("subagent.report", "structural", value, loop, session_ref=child)
