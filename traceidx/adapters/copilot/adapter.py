"""The Copilot CLI adapter: dispatches each session-log record to the handler of its type."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.copilot.state import Queued, Turn
from traceidx.adapters.copilot.tools import CopilotTools
from traceidx.adapters.copilot.usage import call_facts, unanswered, usage_of
from traceidx.adapters.copilot.wire import RECORD, RECORD_ONLY, is_events_log
from traceidx.adapters.values import (
    dict_or_empty,
    dicts_in,
    nonempty_str,
    reasoning_value,
    str_or_none,
)
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import type_tag

#: ``reasoningBlocks.provider`` whose reasoning text is the model's summary, not its thinking
_SUMMARY_REASONING: Final = frozenset({"openai-responses"})


def _has_images(attachments: Any) -> bool:
    """Whether a user message's attachments include an image."""
    for attachment in dicts_in(attachments):
        mime = attachment.get("mimeType")
        if attachment.get("type") == "image" or (
            isinstance(mime, str) and mime.startswith("image/")
        ):
            return True
    return False


class CopilotAdapter(CopilotTools):
    """Projects one Copilot CLI session log (the format: ``docs/runtimes/copilot.md``)."""

    runtime = "copilot"

    record_type = RECORD

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        return is_events_log(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        if not self.enter(position, obj):
            return RecordFacts(None, None)
        agent = obj.get("agentId")
        self.lane = agent if isinstance(agent, str) and agent else ""
        kind = type_tag(obj.get("type"))
        payload = obj.get("data")
        handler = _HANDLERS.get(kind) if kind is not None else None
        if handler is not None:
            handler(self, payload if isinstance(payload, dict) else {})
        elif kind is None or kind not in RECORD_ONLY:
            self.count_unknown(str(kind))
        return RecordFacts(self.time, kind if kind is not None and kind[:1] != "<" else None)

    # -- session and process runs --------------------------------------------------------------

    def _resume(self, data: dict[str, Any]) -> None:
        self._context(data)

    def _shutdown(self, data: dict[str, Any]) -> None:
        """The process run ends: no running Loop continues (none has its outcome stated), and
        a prompt still queued never runs."""
        self._close_all(None)
        self.queued = []

    # -- inputs --------------------------------------------------------------------------------

    def _user_message(self, data: dict[str, Any]) -> None:
        text = str_or_none(data.get("content")) or ""
        images = _has_images(data.get("attachments"))
        source = nonempty_str(data.get("source"))
        interaction = nonempty_str(data.get("interactionId"))
        running = self._running()
        if self.lane:  # a subagent's input: its task, given by the parent's delegating call
            if running is None or (
                interaction is not None
                and running.interactions
                and interaction not in running.interactions
            ):
                running = self._open(interaction)
            self._join(running, interaction)
            message = nonempty_str(data.get("messageId"))
            if message is not None:
                running.messages.append(message)
            return  # it stays a Record: the delegation is the parent's item
        delivery = data.get("delivery")
        steering = running is not None and (
            delivery == "steering"
            or (interaction is not None and interaction in running.interactions)
        )
        value: dict[str, Any] = {"text": text or None, "has_images": images}
        queued = delivery == "queued" and source is None and interaction is not None
        if running is not None and not steering and queued and interaction is not None:
            # it runs after the current run (see `_open_queued`)
            message = nonempty_str(data.get("messageId"))
            self.queued.append(Queued(self.position, self.time, value, interaction, message))
            return
        if running is not None and steering:
            turn: Turn = running
            self._join(turn, interaction)
        else:
            turn = self._open(interaction)
        message = nonempty_str(data.get("messageId"))
        if message is not None:
            turn.messages.append(message)
        if not text and not images:
            return
        if source is None:  # typed at the prompt, or given by a program (-p, ACP, SDK)
            role = "human.steering" if steering else "human.request"
            self.emit(role, "heuristic", value, turn.loop)
        elif source.startswith("agent-"):
            return  # another agent's prompt: the delegation is that agent's item
        elif source.startswith("skill-"):
            instruction = {"text": text or None, "category": "skill"}
            self.emit("runtime.instructions", "structural", instruction, turn.loop)
        elif data.get("isAutopilotContinuation") is True:
            self.emit("runtime.notice", "structural", value, turn.loop)
        else:
            self.emit("runtime.unknown", "structural", value, turn.loop)

    def _system_message(self, data: dict[str, Any]) -> None:
        text = nonempty_str(data.get("content"))
        if text is not None:
            self.emit("runtime.instructions", "structural", {"text": text}, self._current())

    # -- model calls and responses -----------------------------------------------------------

    def _turn_start(self, data: dict[str, Any]) -> None:
        """One model call of the run begins (a Loop opens here if none is running)."""
        self._working(nonempty_str(data.get("interactionId")))

    def _usage_record(self, data: dict[str, Any]) -> None:
        usage = data.get("usage")
        loop = self._working().loop
        model, provider, effort, window = call_facts(usage)
        if loop.model_id is None:
            loop.model_id = model
        if loop.effort is None:
            loop.effort = effort
        if loop.context_window is None:
            loop.context_window = window
        sample = usage_of(usage) or unanswered(usage)
        if sample is not None:
            loop.usage.append(sample.located((self.position,), self.time, model, provider))

    def _assistant_message(self, data: dict[str, Any]) -> None:
        turn = self._working(nonempty_str(data.get("interactionId")))
        loop = turn.loop
        if loop.model_id is None:
            loop.model_id = nonempty_str(data.get("model"))
        if turn.candidate is not None:  # a later response: the earlier text was commentary
            self._release(turn.candidate)
            turn.candidate = None
        reasoning = nonempty_str(data.get("reasoningText"))
        blocks = dict_or_empty(data.get("reasoningBlocks"))
        if reasoning is not None and reasoning.strip():
            summary = str_or_none(blocks.get("provider")) in _SUMMARY_REASONING
            value = reasoning_value(reasoning, "summary" if summary else "full")
            self.emit("agent.reasoning", "structural", value, loop)
        elif nonempty_str(data.get("reasoningOpaque")) or nonempty_str(
            data.get("encryptedContent")
        ):
            self.emit("agent.reasoning", "structural", reasoning_value(None), loop)
        text = str_or_none(data.get("content")) or ""
        requests = dicts_in(data.get("toolRequests"))
        phase = nonempty_str(data.get("phase"))
        if text.strip():
            message = {"text": text, "has_images": False}
            if phase == "final_answer":
                self.emit("agent.final_answer", "structural", message, loop)
            elif phase is not None or requests:  # the run goes on after this text
                self.emit("agent.commentary", "structural", message, loop)
            else:  # the final answer if the run ends after it (see `_settle`)
                self._hold(turn, self.emit("agent.commentary", "heuristic", message, loop))
        for request in requests:
            self._tool_request(request, loop)

    # -- subagents -----------------------------------------------------------------------------

    def _subagent_started(self, data: dict[str, Any]) -> None:
        """A subagent's run starts: a Loop of its own lane (its records carry its agentId)."""
        if not self.lane:
            return
        self._open(None)
        call_id, mode = (
            nonempty_str(data.get("toolCallId")),
            nonempty_str(data.get("executionMode")),
        )
        if call_id is not None and mode is not None:
            self.modes[call_id] = mode

    def _subagent_completed(self, data: dict[str, Any]) -> None:
        turn = self._running() if self.lane else None
        if turn is not None:
            self._close(turn, "completed")

    def _subagent_failed(self, data: dict[str, Any]) -> None:
        turn = self._running() if self.lane else None
        if turn is None:
            return
        reason = nonempty_str(data.get("error"))
        if reason is not None:
            self.emit("runtime.notice", "structural", {"text": reason}, turn.loop)
        self._close(turn, "failed")

    # -- ends, errors and notices -----------------------------------------------------------

    def _abort(self, data: dict[str, Any]) -> None:
        """The user (or a remote command) aborted the run: every running Loop is interrupted."""
        self._close_all("interrupted")

    def _session_error(self, data: dict[str, Any]) -> None:
        """An error the runtime reports; a model query that failed for good fails the run of
        the message it names (an error the runtime recovers from by switching models does
        not)."""
        turn = self._running()
        message = nonempty_str(data.get("message"))
        if message is not None:
            value = {"text": message, "has_images": False}
            self.emit("runtime.notice", "structural", value, turn.loop if turn else None)
        if turn is None or data.get("eligibleForAutoSwitch") is True:
            return
        origin = nonempty_str(data.get("originatingMessageId"))
        if origin is None or not turn.messages or origin in turn.messages:
            self._close(turn, "failed")

    def _notice(self, data: dict[str, Any]) -> None:
        text = nonempty_str(data.get("message"))
        if text is not None:
            self.emit("runtime.notice", "structural", {"text": text}, self._current())

    def _notification(self, data: dict[str, Any]) -> None:
        text = nonempty_str(data.get("content"))
        if text is not None:
            self.emit("runtime.notice", "structural", {"text": text}, self._current())

    def _skill(self, data: dict[str, Any]) -> None:
        text = nonempty_str(data.get("content"))
        if text is not None:
            value = {"text": text, "category": "skill"}
            self.emit("runtime.instructions", "structural", value, self._current())

    def _mode(self, data: dict[str, Any]) -> None:
        mode = nonempty_str(data.get("newMode"))
        if mode is not None:
            self.emit("runtime.state", "structural", {"text": f"mode: {mode}"}, self._current())

    # -- compaction ----------------------------------------------------------------------------

    def _compaction_start(self, data: dict[str, Any]) -> None:
        """``/compact`` (trigger ``manual``) runs between runs: the main agent's run is over."""
        if data.get("trigger") == "manual" and not self.lane:
            self._close_all(None, lanes=False)

    def _compaction_complete(self, data: dict[str, Any]) -> None:
        """The summary, and the summariser's model call: counted in the running Loop (an
        automatic compaction inside a run), else a model call of the session."""
        loop = self._current()
        summary = nonempty_str(data.get("summaryContent"))
        if summary is not None:
            self.emit("runtime.compaction_summary", "structural", {"summary": summary}, loop)
        used = data.get("compactionTokensUsed")
        sample = usage_of(used)
        if sample is None:
            return
        model = nonempty_str(dict_or_empty(used).get("model"))
        call = sample.located((self.position,), self.time, model)
        if loop is not None:
            loop.usage.append(call)
        else:
            self.loose.append(call)


_HANDLERS: Final = {
    "session.start": CopilotAdapter._session_start,
    "session.resume": CopilotAdapter._resume,
    "session.shutdown": CopilotAdapter._shutdown,
    "user.message": CopilotAdapter._user_message,
    "system.message": CopilotAdapter._system_message,
    "assistant.turn_start": CopilotAdapter._turn_start,
    "session.usage_record": CopilotAdapter._usage_record,
    "assistant.message": CopilotAdapter._assistant_message,
    "tool.execution_start": CopilotAdapter._tool_start,
    "tool.execution_complete": CopilotAdapter._tool_complete,
    "subagent.started": CopilotAdapter._subagent_started,
    "subagent.completed": CopilotAdapter._subagent_completed,
    "subagent.failed": CopilotAdapter._subagent_failed,
    "abort": CopilotAdapter._abort,
    "session.error": CopilotAdapter._session_error,
    "session.warning": CopilotAdapter._notice,
    "session.info": CopilotAdapter._notice,
    "system.notification": CopilotAdapter._notification,
    "skill.invoked": CopilotAdapter._skill,
    "session.mode_changed": CopilotAdapter._mode,
    "session.compaction_start": CopilotAdapter._compaction_start,
    "session.compaction_complete": CopilotAdapter._compaction_complete,
}
