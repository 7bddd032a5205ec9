"""The Kimi adapter: dispatches each wire record (Kimi Code, or legacy ``kimi-cli``) to its
handler. The format, the versions checked against and the evidence rules: ``docs/runtimes/kimi.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from traceidx.adapters.kimi.state import Request, error_text, input_text
from traceidx.adapters.kimi.tools import KimiTools, output_text
from traceidx.adapters.kimi.usage import legacy_usage_of, usage_of
from traceidx.adapters.kimi.wire import (
    LEGACY_RECORD_ONLY,
    LOOP_EVENTS_RECORD_ONLY,
    OUTCOMES,
    RECORD_ONLY,
    is_wire_log,
    legacy_type,
)
from traceidx.adapters.values import (
    dict_or_empty,
    nonempty_str,
    reasoning_value,
    refined,
    str_or_none,
)
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import type_tag
from traceidx.domain.timestamps import epoch_number_ms

#: the origin of a prompt the human gave (typed, or passed with ``-p``)
_HUMAN: Final = "user"
#: the origin of a subagent's task (its parent's ``Agent`` call hands it over)
_SUBAGENT: Final = ("system_trigger", "subagent")
#: the injected reminders that are the environment (the date); the rest are the runtime's own
_ENVIRONMENT: Final = frozenset({"date_change"})


class KimiAdapter(KimiTools):
    """Projects one Kimi wire file (the format: ``docs/runtimes/kimi.md``)."""

    runtime = "kimi"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_wire_log(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict):
            self.count_unknown("<not an object>")
            return RecordFacts(None, None)
        legacy = legacy_type(obj)
        if legacy is not None or ("message" in obj and "timestamp" in obj):
            self.legacy = True
            return self._legacy(obj, legacy)
        kind = type_tag(obj.get("type"))
        self.time = epoch_number_ms(obj.get("time"))
        created = epoch_number_ms(obj.get("created_at")) if kind == "metadata" else None
        self._session(created if created is not None else self.time)
        native = kind
        if kind == "context.append_loop_event":
            event = dict_or_empty(obj.get("event"))
            native = refined(kind, event.get("type"))
            self._loop_event(event)
        else:
            handler = _HANDLERS.get(kind) if kind is not None else None
            if handler is not None:
                handler(self, obj)
            elif kind is None or kind not in RECORD_ONLY:
                self.count_unknown(str(kind))
        return RecordFacts(self.time, native if native is not None and native[:1] != "<" else None)

    # -- Kimi Code ---------------------------------------------------------------------------

    def _profile(self, obj: dict[str, Any]) -> None:
        """``profile.bind``: the agent's model alias, working directory and system prompt."""
        self.model = nonempty_str(obj.get("modelAlias")) or self.model
        cwd = nonempty_str(dict_or_empty(obj.get("environmentDisclosure")).get("cwd"))
        if self.session is not None and cwd is not None and self.session.working_directory is None:
            self.session.working_directory = cwd
        prompt = nonempty_str(obj.get("systemPrompt"))
        if prompt is not None and prompt != self.instructions:
            self.instructions = prompt
            self.emit("runtime.instructions", "structural", {"text": prompt}, self._current())

    def _prompt(self, obj: dict[str, Any]) -> None:
        """``turn.prompt``: a turn starts; the human's prompt, or a subagent's task (which
        stays a Record: the delegation is the parent's item), or the runtime's own trigger."""
        text, images = input_text(obj.get("input"))
        origin = dict_or_empty(obj.get("origin"))
        kind, name = origin.get("kind"), origin.get("name")
        loop = self._open()
        loop.native_id = nonempty_str(obj.get("promptId"))
        value = {"text": text or None, "has_images": images}
        if kind == _HUMAN:
            if text or images:
                self.emit("human.request", "heuristic", value, loop)
        elif (kind, name) == _SUBAGENT:
            if self.session is not None and self.session.task is None:
                self.session.task = text
        elif text or images:
            self.emit("runtime.notice", "structural", value, loop)

    def _steer(self, obj: dict[str, Any]) -> None:
        """``turn.steer``: input the user gave while the turn ran (it joins the turn)."""
        text, images = input_text(obj.get("input"))
        if (text or images) and self.loop is not None:
            value = {"text": text or None, "has_images": images}
            self.emit("human.steering", "heuristic", value, self.loop)

    def _config(self, obj: dict[str, Any]) -> None:
        """``config.update``: the model alias (and working directory) from here on."""
        self.model = nonempty_str(obj.get("modelAlias")) or self.model
        cwd = nonempty_str(obj.get("cwd"))
        if self.session is not None and cwd is not None and self.session.working_directory is None:
            self.session.working_directory = cwd

    def _ended(self, obj: dict[str, Any]) -> None:
        """``turn.ended``: the turn's end and outcome (an error's message as a notice)."""
        self._notice(error_text(obj.get("error")))
        reason = obj.get("reason")
        self._close(OUTCOMES.get(reason) if isinstance(reason, str) else None)

    def _request(self, obj: dict[str, Any]) -> None:
        """``llm.request``: a model request (its usage record, if any, follows)."""
        self.request = Request(
            self.position, nonempty_str(obj.get("provider")), nonempty_str(obj.get("modelAlias"))
        )

    def _usage(self, obj: dict[str, Any]) -> None:
        """``usage.record``: one billed call (``usageScope`` ``turn``, or ``session`` for the
        runtime's compaction request, counted in the turn that triggered it)."""
        self._answered(usage_of(obj.get("usage")), nonempty_str(obj.get("model")))

    def _retrying(self, obj: dict[str, Any]) -> None:
        """``turn.step.retrying``: the request failed and the runtime tries again."""
        self._failed_request()
        message = nonempty_str(obj.get("errorMessage"))
        attempt, most = obj.get("failedAttempt"), obj.get("maxAttempts")
        if message is not None and isinstance(attempt, int) and isinstance(most, int):
            message = f"{message} (attempt {attempt} of {most}; retrying)"
        self._notice(message)

    def _interrupted(self, obj: dict[str, Any]) -> None:
        """``turn.step.interrupted``: a step stopped (a request that failed for good)."""
        if obj.get("reason") == "error":
            self._failed_request()

    def _context_message(self, obj: dict[str, Any]) -> None:
        """``context.append_message``: only what the runtime injects is published (reminders);
        the rest repeats the prompts, responses and results other records state."""
        message = dict_or_empty(obj.get("message"))
        origin = dict_or_empty(message.get("origin"))
        if origin.get("kind") != "injection":
            return
        text, images = input_text(message.get("content"))
        if not text and not images:
            return
        variant = origin.get("variant")
        category = "environment" if variant in _ENVIRONMENT else "internal"
        value = {"text": text or None, "category": category, "has_images": images}
        self.emit("runtime.context", "structural", value, self._current())

    def _compaction(self, obj: dict[str, Any]) -> None:
        """``context.apply_compaction``: the summary that replaces the compacted history."""
        summary = str_or_none(obj.get("summary"))
        if summary:
            self.emit("runtime.compaction_summary", "structural", {"summary": summary}, self.loop)

    def _loop_event(self, event: dict[str, Any]) -> None:
        kind = type_tag(event.get("type"))
        if kind == "content.part":
            self._part(dict_or_empty(event.get("part")))
        elif kind == "tool.call":
            call_id, name = nonempty_str(event.get("toolCallId")), nonempty_str(event.get("name"))
            self._tool_call(call_id, name, event.get("args"))
        elif kind == "tool.result":
            result = dict_or_empty(event.get("result"))
            self._tool_result(
                nonempty_str(event.get("toolCallId")),
                output_text(result.get("output")),
                result.get("isError"),
                result.get("durationMs"),
            )
        elif kind == "step.end":
            reason = event.get("finishReason")
            if reason == "error":
                self._failed_request()
            elif reason == "interrupted":
                self._failed_request("aborted")
        elif kind not in LOOP_EVENTS_RECORD_ONLY:
            self.count_unknown(f"context.append_loop_event/{kind}")

    def _part(self, part: dict[str, Any]) -> None:
        """A content part of a response: text, or reasoning (``think``)."""
        kind = part.get("type")
        if kind == "text":
            text = str_or_none(part.get("text"))
            if text:
                self._text(text, self._current())
        elif kind == "think":
            value = reasoning_value(str_or_none(part.get("think")))
            self.emit("agent.reasoning", "structural", value, self._current())
        else:
            self.count_unknown(f"content.part/{kind}")

    # -- legacy kimi-cli -------------------------------------------------------------------

    def _legacy(self, obj: dict[str, Any], kind: str | None) -> RecordFacts:
        """A legacy record ``{timestamp, message: {type, payload}}``."""
        self.time = epoch_number_ms(obj.get("timestamp"))
        self._session(self.time)
        if self.session is not None and self.session.created_at is None:
            self.session.created_at = self.time  # after a metadata line, which has no time
        payload = dict_or_empty(dict_or_empty(obj.get("message")).get("payload"))
        if kind is None:
            self.count_unknown("<legacy message without type or payload>")
            return RecordFacts(self.time, None)
        handler = _LEGACY.get(kind)
        if handler is not None:
            handler(self, payload)
        elif kind not in LEGACY_RECORD_ONLY:
            self.count_unknown(kind)
        return RecordFacts(self.time, kind)

    def _turn_begin(self, payload: dict[str, Any]) -> None:
        text, images = input_text(payload.get("user_input"))
        loop = self._open()
        if text or images:
            self.emit(
                "human.request", "heuristic", {"text": text or None, "has_images": images}, loop
            )

    def _legacy_steer(self, payload: dict[str, Any]) -> None:
        text, images = input_text(payload.get("user_input"))
        if (text or images) and self.loop is not None:
            value = {"text": text or None, "has_images": images}
            self.emit("human.steering", "heuristic", value, self.loop)

    def _turn_end(self, payload: dict[str, Any]) -> None:
        self._close("completed")  # an interrupted or failed turn writes none

    def _step_interrupted(self, payload: dict[str, Any]) -> None:
        self._close(None)  # interrupted by the user or by an error: the record says neither

    def _legacy_part(self, payload: dict[str, Any]) -> None:
        self._part(payload)

    def _status(self, payload: dict[str, Any]) -> None:
        """``StatusUpdate``: a step's usage (counted once per message id) and context fill."""
        self._legacy_usage(payload, inline=False)

    def _legacy_usage(self, payload: dict[str, Any], inline: bool) -> None:
        sample = legacy_usage_of(payload.get("token_usage"))
        if sample is None:
            return
        message = nonempty_str(payload.get("message_id"))
        if message is not None:
            if message in self.counted:
                return
            self.counted.add(message)
        located = sample.located((self.position,), self.time)
        if inline or self.loop is None:
            self.loose.append(located)  # a subagent's call: not the parent turn's
        else:
            self.loop.usage.append(located)

    def _legacy_result(self, payload: dict[str, Any]) -> None:
        value = dict_or_empty(payload.get("return_value"))
        self._tool_result(
            nonempty_str(payload.get("tool_call_id")),
            output_text(value.get("output")),
            value.get("is_error"),
            None,
            nonempty_str(value.get("message")),
        )

    def _subagent_event(self, payload: dict[str, Any]) -> None:
        """``SubagentEvent``: a subagent's own event, inline (it stays a Record); a usage
        update in it is a call the subagent billed, outside the parent's turns."""
        event = dict_or_empty(payload.get("event"))
        if event.get("type") == "StatusUpdate":
            self._legacy_usage(dict_or_empty(event.get("payload")), inline=True)


_HANDLERS: Final[dict[str, Callable[[KimiAdapter, dict[str, Any]], None]]] = {
    "profile.bind": KimiAdapter._profile,
    "turn.prompt": KimiAdapter._prompt,
    "turn.steer": KimiAdapter._steer,
    "config.update": KimiAdapter._config,
    "turn.ended": KimiAdapter._ended,
    "llm.request": KimiAdapter._request,
    "usage.record": KimiAdapter._usage,
    "turn.step.retrying": KimiAdapter._retrying,
    "turn.step.interrupted": KimiAdapter._interrupted,
    "context.append_message": KimiAdapter._context_message,
    "context.apply_compaction": KimiAdapter._compaction,
    "subagent.spawned": KimiAdapter._spawned,
    "subagent.completed": KimiAdapter._completed,
}

_LEGACY: Final[dict[str, Callable[[KimiAdapter, dict[str, Any]], None]]] = {
    "TurnBegin": KimiAdapter._turn_begin,
    "SteerInput": KimiAdapter._legacy_steer,
    "TurnEnd": KimiAdapter._turn_end,
    "StepInterrupted": KimiAdapter._step_interrupted,
    "ContentPart": KimiAdapter._legacy_part,
    "StatusUpdate": KimiAdapter._status,
    "ToolCall": KimiAdapter._legacy_call,
    "ToolResult": KimiAdapter._legacy_result,
    "SubagentEvent": KimiAdapter._subagent_event,
}
