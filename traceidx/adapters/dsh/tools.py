"""dsh tools: calls, the results of their three shapes, and code-mode dispatches."""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.dsh.state import Call, DshState
from traceidx.adapters.dsh.wire import content_text
from traceidx.adapters.values import declared_command, dict_or_empty, dicts_in, nonempty_str
from traceidx.domain.drafts import DraftItem
from traceidx.domain.rules import exit_code_from_header

_EXIT_CODE: Final = re.compile(r"\[exit code: (-?\d+)\]\Z")
_SHELL_TOOLS: Final = frozenset({"bash"})
_EXIT_CODE_TOOLS: Final = frozenset({"bash", "pwsh"})
#: a background delegation's result, the whole text: it names the child Session it started
_STARTED: Final = re.compile(r"started subagent (\S+)")
_DELEGATION_TOOLS: Final = frozenset(
    {"subagent", "subagent_fork", "subagent_codex", "subagent_claude_code"}
)


def _arguments(raw: Any) -> tuple[str | None, dict[str, Any]]:
    """(JSON text, parsed object) of a call's arguments; text only when it is valid JSON."""
    if isinstance(raw, dict):
        return msgspec.json.encode(raw).decode(), raw
    if isinstance(raw, str):
        try:
            parsed = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None, {}
        return raw, parsed if isinstance(parsed, dict) else {}
    return None, {}


def _result_shape(data: dict[str, Any]) -> tuple[str, list[dict[str, Any]], bool | None] | None:
    """(call id, result blocks, isError) of a tool result in any of its three shapes.

    None when the shape is refused: a V3 wrapper must hold exactly one ``tool-result`` block
    naming the message's call, with an array content that holds no further ``tool-result``.
    """
    message = data.get("message")
    if not isinstance(message, dict):  # flat pre-release shape
        call_id = nonempty_str(data.get("callId"))
        content = data.get("content")
        if call_id is None or not isinstance(content, list):
            return None
        flag = data.get("isError")
        return call_id, dicts_in(content), flag if isinstance(flag, bool) else None
    source_call = nonempty_str(dict_or_empty(message.get("source")).get("callId"))
    content = message.get("content")
    if not isinstance(content, list):
        return None
    if message.get("role") == "tool":  # V4 native
        call_id = nonempty_str(message.get("toolCallId")) or source_call
        blocks = dicts_in(content)
        if call_id is None or any(b.get("type") == "tool-result" for b in blocks):
            return None
        flag = message.get("isError")
        return call_id, blocks, flag if isinstance(flag, bool) else None
    if len(content) != 1 or not isinstance(content[0], dict):
        return None
    wrapper = content[0]
    inner = wrapper.get("content")
    call_id = nonempty_str(wrapper.get("toolCallId"))
    if (
        wrapper.get("type") != "tool-result"
        or call_id is None
        or (source_call is not None and source_call != call_id)
        or not isinstance(inner, list)
        or any(isinstance(b, dict) and b.get("type") == "tool-result" for b in inner)
    ):
        return None
    flag = wrapper.get("isError")
    return call_id, dicts_in(inner), flag if isinstance(flag, bool) else None


class DshTools(DshState):
    """Drafts tool calls and outputs, paired on the call id."""

    def _call(self, call_id: str | None, name: str | None, raw: Any) -> DraftItem:
        text, args = _arguments(raw)
        loop = self._loop()
        value = {"tool_name": name, "arguments": text}
        shell = declared_command(name, args, _SHELL_TOOLS)
        item = self.emit(
            "agent.tool_call", "structural", value, loop, call_id=call_id, shell_command=shell
        )
        index = self.item_base + len(self.items) - 1
        delegation = None
        if name in _DELEGATION_TOOLS:  # the same record also hands work to a child agent
            # dsh's calls name no agent type: the delegating tool names the kind of child
            task = {
                "text": nonempty_str(args.get("prompt")),
                "has_images": False,
                "agent_type": name,
            }
            delegation = self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None:
            call = Call(name, item, args.get("run_in_background"), index)
            call.delegation = delegation
            call.label = nonempty_str(args.get("description"))
            self.calls[call_id] = call
            self.fresh.append(call)
        return item

    def _tool_call(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        call_id = nonempty_str(data.get("callId"))
        call = self.calls.get(call_id) if call_id is not None else None
        if call is not None and not call.dispatched:
            call.dispatched = True
            for item in (call.item, call.delegation):
                if item is not None:  # else settled: the Record stays
                    item.records.append(self.position)
            return
        self._call(call_id, nonempty_str(data.get("name")), data.get("arguments"))
        if call_id is not None:
            self.calls[call_id].dispatched = True

    # -- tool results ------------------------------------------------------------------------

    def _tool_result(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        shape = _result_shape(data)
        if shape is None:
            return  # refused (nested or malformed wrapper): the Record stays
        call_id, blocks, is_error = shape
        call = self.calls.get(call_id)
        if call is not None and call.answered:
            for item in (call.output, call.report):
                if item is not None:  # else settled: the Record stays
                    item.records.append(self.position)  # a replacement of the same result
            return
        text, _ = content_text(blocks)
        loop = self._loop()
        failed: bool | None = is_error
        if failed is None and isinstance(data.get("error"), dict):
            failed = True
        output: dict[str, Any] = {"text": text if blocks else None}
        if call is not None and call.name in _EXIT_CODE_TOOLS and text:
            last_line = text.rstrip("\n").rsplit("\n", 1)[-1]
            code = exit_code_from_header(last_line, _EXIT_CODE)
            if code is not None:
                output["exit_code"] = code
                failed = True if code != 0 else failed
        output["failed"] = failed
        truncated = dict_or_empty(data.get("meta")).get("truncated")
        if isinstance(truncated, bool):
            output["runtime_truncated"] = truncated
        item = self.emit("tool.output", "structural", output, loop, output_of=call_id)
        if call is None:
            self.forward.append((self.item_base + len(self.items) - 1, call_id))
            return
        call.output, call.answered = item, True
        self.fresh.append(call)
        if call.name in _DELEGATION_TOOLS:  # the same record hands the child's work back
            started = _STARTED.fullmatch(text)
            if started is not None and call.child is None and not failed:
                self._link_child(call, started.group(1))
            background = call.background
            role = "subagent.activity" if background is True else "subagent.report"
            strength = "structural" if isinstance(background, bool) else "heuristic"
            value = {"text": text or None, "has_images": False}
            call.report = self.emit(role, strength, value, loop, session_ref=call.child)

    def _link_child(self, call: Call, child: str) -> None:
        """The parent's log names the child Session a delegating call created."""
        call.child = child
        if call.delegation is not None:  # else settled: the link stays in the Record
            call.delegation.session_ref = child
            call.delegation.records.append(self.position)

    def _catalog(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        """``subagent/catalog``: the parent records a child it created, while the creating call
        runs (before its result). It names no call: it links the one delegating call waiting
        for its result whose ``description`` is not another label than the child's (among
        several, the one whose description is that label); otherwise nothing."""
        child = nonempty_str(data.get("childId"))
        if child is None:
            return
        label = nonempty_str(data.get("label"))
        unsettled = {id(call): call for call in self.fresh}.values()
        waiting = [
            call
            for call in unsettled
            if call.name in _DELEGATION_TOOLS
            and not call.answered
            and call.child is None
            and call.delegation is not None
            and (label is None or call.label is None or call.label == label)
        ]
        if len(waiting) > 1 and label is not None:
            waiting = [call for call in waiting if call.label == label]
        if len(waiting) == 1:
            self._link_child(waiting[0], child)

    def _dispatch_start(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._call(
            nonempty_str(data.get("subCallId")),
            nonempty_str(data.get("name")),
            data.get("arguments"),
        )

    def _dispatch_end(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        call_id = nonempty_str(data.get("subCallId"))
        if call_id is not None and call_id not in self.calls:
            self._dispatch_start(obj, data)
        text, _ = content_text(dicts_in(data.get("content")))
        failed = data.get("isError") if isinstance(data.get("isError"), bool) else None
        value = {"text": text or None, "failed": failed}
        self.emit("tool.output", "structural", value, self._loop(), output_of=call_id)
