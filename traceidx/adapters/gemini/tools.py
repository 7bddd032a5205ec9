"""Gemini CLI tools: calls and their results (``toolCalls``), subagent runs they start.

A ``gemini`` message is written again once its tool calls completed, with ``toolCalls[]`` =
``{id, name, args, result, status, agentId?, timestamp, ...}``: ``result`` is the list of parts
sent back to the model (``functionResponse``), ``status`` the scheduler's final state
(``success``, ``error``, ``cancelled``). A call still running is never written. The same
results are then written again as a ``user`` message of ``functionResponse`` parts; that
message is a second witness of each result it holds.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.gemini.state import GeminiState
from traceidx.adapters.gemini.wire import DELEGATION_TOOLS, SHELL_TOOLS, parts_of
from traceidx.adapters.values import dict_or_empty, nonempty_str, str_or_none
from traceidx.domain.drafts import DraftItem, DraftLoop
from traceidx.domain.rules import exit_code_from_header
from traceidx.domain.timestamps import rfc3339_ms

#: the shell tool's result: ``Output: …`` then, each on a line of its own and in this order,
#: ``Error: …``, ``Exit Code: N`` (only when N is not 0), ``Signal: …``, ``Background PIDs: …``
#: and ``Process Group PGID: N``, wrapped in ``<untrusted_context>``; releases of 2025
#: (session documents) wrote ``Command: …`` and ``Directory: …`` first and every line of the
#: trailer, ``(none)`` where a member had no value (``Exit Code: 0`` is stated there). The exit
#: code is read from that trailer only, never from the command's own output above it.
_EXIT_LINE: Final = re.compile(r"Exit Code: (-?\d+)\Z")
_TRAILER_AFTER_EXIT: Final = (
    re.compile(r"Process Group PGID: [^\n]*\Z"),
    re.compile(r"Background PIDs: [^\n]*\Z"),
    re.compile(r"Signal: [^\n]*\Z"),
)
_UNTRUSTED_OPEN: Final = "<untrusted_context>\n"
_UNTRUSTED_CLOSE: Final = "\n</untrusted_context>"
#: the line the CLI writes first when it cut a tool's output (the rest went to a file)
_TRUNCATED: Final = "Output too large. Showing first "
#: how a shell result begins (after the wrapper, if any)
_SHELL_RESULT: Final = ("Output: ", "Command: ", _TRUNCATED)
#: tool statuses that say the call did not succeed
_FAILED_STATUSES: Final = frozenset({"error", "cancelled"})


def result_text(result: Any) -> str | None:
    """The text a tool returned: each ``functionResponse``'s ``output`` (else its ``error``,
    else its whole response as JSON) and each text part, joined by newlines."""
    texts: list[str] = []
    for part in parts_of(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict):
                text = str_or_none(body.get("output"))
                if text is None:
                    text = str_or_none(body.get("error"))
                if text is None and body:
                    text = msgspec.json.encode(body).decode()
            else:
                text = str_or_none(body)
            if text:
                texts.append(text)
        elif isinstance(part.get("text"), str) and part["text"]:
            texts.append(part["text"])
    return "\n".join(texts) if texts else None


def shell_exit_code(text: str) -> int | None:
    """The exit code the shell tool states in its result's trailer (only a non-zero one is
    ever stated)."""
    body = text.removesuffix(_UNTRUSTED_CLOSE)
    if not body.removeprefix(_UNTRUSTED_OPEN).startswith(_SHELL_RESULT):
        return None
    for line in _TRAILER_AFTER_EXIT:
        head, sep, last = body.rpartition("\n")
        if sep and line.match(last):
            body = head
    _, sep, last = body.rpartition("\n")
    return exit_code_from_header(last, _EXIT_LINE) if sep else None


def delegation_task(name: str | None, args: Any) -> str | None:
    """The task a subagent call hands over: ``prompt``, or the only argument of an agent
    offered as a tool of its own when it is text."""
    if not isinstance(args, dict):
        return None
    prompt = str_or_none(args.get("prompt"))
    if prompt is not None or name in DELEGATION_TOOLS:
        return prompt
    values = list(args.values())
    return values[0] if len(values) == 1 and isinstance(values[0], str) else None


class GeminiTools(GeminiState):
    """Drafts tool calls, their outputs and the subagent runs they start."""

    def _tool_calls(self, calls: list[dict[str, Any]], loop: DraftLoop) -> None:
        """A message's completed calls, then their results (the CLI records a batch of calls
        once all of them completed)."""
        made: list[tuple[dict[str, Any], bool, str | None]] = []
        for call in calls:
            delegated, agent = self._tool_call(call, loop)
            made.append((call, delegated, agent))
        for call, delegated, agent in made:
            self._tool_output(call, delegated, agent, loop)

    def _tool_call(self, call: dict[str, Any], loop: DraftLoop) -> tuple[bool, str | None]:
        """A call's items; whether it delegated, and the subagent it ran (its native session
        id) when the record names one."""
        name, call_id = str_or_none(call.get("name")), str_or_none(call.get("id"))
        args = call.get("args")
        self.tool_call(name, call_id, args, loop, SHELL_TOOLS)
        agent = nonempty_str(call.get("agentId"))
        if agent is None and name not in DELEGATION_TOOLS:
            return False, None
        task = {
            "text": delegation_task(name, args),
            "has_images": False,
            "agent_type": self._agent_type(name, args),
        }
        self.emit("agent.delegation", "structural", task, loop, session_ref=agent)
        return True, agent

    def _agent_type(self, name: str | None, args: Any) -> str | None:
        if name in DELEGATION_TOOLS:
            return nonempty_str(dict_or_empty(args).get("agent_name"))
        return name

    def _tool_output(
        self, call: dict[str, Any], delegated: bool, agent: str | None, loop: DraftLoop
    ) -> None:
        call_id = str_or_none(call.get("id"))
        status = call.get("status")
        text = result_text(call.get("result"))
        value: dict[str, Any] = {"text": text}
        if isinstance(status, str):
            value["failed"] = status in _FAILED_STATUSES
        if text is not None:
            if str_or_none(call.get("name")) in SHELL_TOOLS:
                code = shell_exit_code(text)
                if code is not None:
                    value["exit_code"] = code
                    value["failed"] = bool(value.get("failed")) or code != 0
            if text.startswith(_TRUNCATED):
                value["runtime_truncated"] = True
        done = rfc3339_ms(call.get("timestamp"))
        ran = delegated and agent is not None
        if ran:  # the subagent's result is its report; the output stays the call's answer
            value["text"] = None
        output = self._emit_at(done, "tool.output", value, loop, output_of=call_id)
        if call_id is not None:
            self.outputs[call_id] = output
        if ran:
            report = {"text": text, "has_images": False}
            self._emit_at(done, "subagent.report", report, loop, session_ref=agent)

    def _emit_at(
        self,
        time: int | None,
        role: str,
        value: dict[str, Any],
        loop: DraftLoop | None,
        output_of: str | None = None,
        session_ref: str | None = None,
    ) -> DraftItem:
        """An item at another time than the current message's (a call's completion)."""
        saved = self.time
        if time is not None:
            self.time = time
        item = self.emit(
            role, "structural", value, loop, output_of=output_of, session_ref=session_ref
        )
        self.time = saved
        return item

    def _function_responses(self, responses: list[dict[str, Any]], loop: DraftLoop | None) -> None:
        """A ``user`` message of tool results: a second witness of each result already drafted
        from its call's record; a result of a call never recorded is an output of its own."""
        for response in responses:
            call_id = str_or_none(response.get("id"))
            output = self.outputs.get(call_id) if call_id is not None else None
            if output is not None:
                if self.position not in output.records:
                    output.records.append(self.position)
                continue
            text = result_text([{"functionResponse": response}])
            self.emit("tool.output", "structural", {"text": text}, loop, output_of=call_id)
