"""Codex tools: calls (declared shells, delegations), outputs and the facts of end events."""

from __future__ import annotations

import re
import shlex
from typing import Any, Final

from traceidx.adapters.codex.messages import CodexMessages
from traceidx.adapters.codex.state import JOIN_WINDOW, TurnState
from traceidx.adapters.codex.wire import content_text, json_text, parsed
from traceidx.adapters.values import int_or_none, str_or_none
from traceidx.domain.drafts import DraftItem
from traceidx.domain.rules import exit_code_from_header

_PROVIDER_TOOL_NAMES: Final = {
    "web_search_call": "web_search",
    "tool_search_call": "tool_search",
    "image_generation_call": "image_generation",
    "local_shell_call": "local_shell",
}
#: argv[0] names (basename) of shells whose ``-c`` argument is a script
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_SCRIPT_FLAGS: Final = frozenset({"-c", "-lc"})
_EXEC_EXIT: Final = re.compile(
    r"(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?Process exited with code (-?\d+)\n"
)
_LEADING_EXIT: Final = re.compile(r"Exit code: (-?\d+)\n")
_WALL_TIME: Final = re.compile(r"^Wall time: ([0-9]+(?:\.[0-9]+)?) seconds$", re.M)
_TOKEN_COUNT: Final = re.compile(r"^Original token count: (\d+)$", re.M)
#: the marker Codex writes where it cut a tool output before storing it
_TRUNCATED: Final = re.compile(r"…\d+ (?:tokens|chars) truncated…")
_RUNNING: Final = re.compile(r"^Process running with session ID (\d+)$", re.M)


def _duration_ms(value: object) -> int | None:
    if not isinstance(value, dict):
        return None
    secs, nanos = int_or_none(value.get("secs")), int_or_none(value.get("nanos"))
    if secs is None or secs < 0:
        return None
    return secs * 1000 + (nanos or 0) // 1_000_000


def _shell_script(argv: object) -> str | None:
    """The command of a legacy argv: the script of ``[shell, -c|-lc, script]``, else argv."""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in _SCRIPT_FLAGS:
        return str(argv[2])
    return shlex.join(argv)


def _output_facts(output: object) -> dict[str, Any]:
    """Text and runtime-reported facts of a tool output payload."""
    value: dict[str, Any] = {}
    if isinstance(output, dict):  # {content, success} shape
        text, _ = content_text(output.get("content"))
        value["text"] = text or None
        if isinstance(output.get("success"), bool):
            value["failed"] = not output["success"]
        return value
    if isinstance(output, list):
        text, _ = content_text(output)
        value["text"] = text or None
        return value
    if not isinstance(output, str):
        return value
    envelope = parsed(output) if output.startswith("{") else None
    if isinstance(envelope, dict) and isinstance(envelope.get("metadata"), dict):
        inner = envelope.get("output")
        value["text"] = inner if isinstance(inner, str) else output
        meta = envelope["metadata"]
        code = int_or_none(meta.get("exit_code"))
        if code is not None:
            value["exit_code"], value["failed"] = code, code != 0
        seconds = meta.get("duration_seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            value["duration_ms"] = round(seconds * 1000)
        return value
    value["text"] = output or None
    header = output.split("\nOutput:\n", 1)[0] if "\nOutput:\n" in output else output[:400]
    code = exit_code_from_header(output, _EXEC_EXIT)
    if code is None:
        code = exit_code_from_header(output, _LEADING_EXIT)
    if code is not None:
        value["exit_code"], value["failed"] = code, code != 0
    wall = _WALL_TIME.search(header)
    if wall is not None and (output.startswith(("Chunk ID:", "Wall time:", "Exit code:"))):
        value["duration_ms"] = round(float(wall.group(1)) * 1000)
    tokens = _TOKEN_COUNT.search(header)
    if tokens is not None and output.startswith("Chunk ID:"):
        value["runtime_output_tokens"] = int(tokens.group(1))
    return value


def _runtime_truncated(value: dict[str, Any]) -> dict[str, Any]:
    """`value` with ``runtime_truncated`` set when its text carries Codex's truncation marker."""
    text = value.get("text")
    if isinstance(text, str) and _TRUNCATED.search(text):
        value["runtime_truncated"] = True
    return value


def _end_facts(payload: dict[str, Any]) -> dict[str, Any]:
    """What `_apply_end` reads of an end event (it may wait for its output: keep it small)."""
    keys = ("exit_code", "status", "success", "duration")
    facts: dict[str, Any] = {k: payload[k] for k in keys if k in payload}
    result = payload.get("result")
    if isinstance(result, dict):
        ok = result.get("Ok")
        if "Err" in result:
            facts["result"] = {"Err": None}
        elif isinstance(ok, dict) and "isError" in ok:
            facts["result"] = {"Ok": {"isError": ok["isError"]}}
        else:
            facts["result"] = {}
    return facts


def _apply_end(item: DraftItem, position: int, payload: dict[str, Any]) -> None:
    """Merge a structured end event (exec / patch / MCP / completed item) into an output."""
    value = item.value
    code = int_or_none(payload.get("exit_code"))
    status = str_or_none(payload.get("status"))
    if code is not None and code >= 0:
        value["exit_code"], value["failed"] = code, code != 0
    elif status in ("failed", "declined", "cancelled"):
        value["failed"] = True
        value.pop("exit_code", None)
    elif status == "completed" and "exit_code" not in value and code is None:
        value["failed"] = False
    if isinstance(payload.get("success"), bool):
        value["failed"] = not payload["success"]
    result = payload.get("result")
    if isinstance(result, dict):
        ok = result.get("Ok")
        if "Err" in result:
            value["failed"] = True
        elif isinstance(ok, dict) and isinstance(ok.get("isError"), bool):
            value["failed"] = ok["isError"]
    duration = _duration_ms(payload.get("duration"))
    if duration is not None:
        value["duration_ms"] = duration
    if position not in item.records:
        item.records.append(position)


class CodexTools(CodexMessages):
    """Drafts tool calls and outputs, joining end events and spawned subagents to them."""

    def _tool_call(self, kind: str, payload: dict[str, Any]) -> None:
        name = str_or_none(payload.get("name")) or _PROVIDER_TOOL_NAMES.get(kind)
        call_id = str_or_none(payload.get("call_id")) or str_or_none(payload.get("id"))
        raw: object = None
        if kind == "function_call":
            raw = payload.get("arguments")
        elif kind == "custom_tool_call":
            raw = {"input": payload["input"]} if "input" in payload else None
        elif kind in ("web_search_call", "local_shell_call"):
            raw = payload.get("action")
        elif kind == "tool_search_call":
            raw = payload.get("arguments")
        elif kind == "image_generation_call":
            prompt = {k: payload[k] for k in ("prompt", "revised_prompt") if k in payload}
            raw = prompt or None
        arguments = json_text(raw)
        args = parsed(raw)
        state = self._working() or self._start_loop(None)
        if name == "spawn_agent" and kind == "function_call":  # a tool call that delegates
            call = {"tool_name": name, "arguments": arguments, "working_directory": None}
            self._emit(
                "agent.tool_call", "structural", call, state, call_id=self._linkable(call_id)
            )
            message = args.get("message") if isinstance(args, dict) else None
            text = message if isinstance(message, str) else arguments
            kind_of = args.get("agent_type") if isinstance(args, dict) else None
            value = {"text": text, "has_images": False, "agent_type": str_or_none(kind_of)}
            item = self._emit("agent.delegation", "structural", value, state)
            if call_id:
                self.spawns[call_id] = item
                self.spawn_order.append((call_id, item))
            return
        shell: str | None = None
        workdir: str | None = None
        if isinstance(args, dict):
            workdir = str_or_none(args.get("workdir")) or str_or_none(args.get("working_directory"))
            if name == "exec_command":
                shell = str_or_none(args.get("cmd"))
            elif name == "shell_command":
                shell = str_or_none(args.get("command"))
            elif name == "shell" or kind == "local_shell_call":
                shell = _shell_script(args.get("command"))
        if name == "write_stdin" and call_id and isinstance(args, dict):
            process = args.get("session_id")
            if isinstance(process, int | str) and not isinstance(process, bool):
                self.stdin_calls[call_id] = str(process)
        value = {"tool_name": name, "arguments": arguments, "working_directory": workdir}
        self._emit(
            "agent.tool_call",
            "structural",
            value,
            state,
            call_id=self._linkable(call_id),
            shell_command=shell or None,
        )

    def _linkable(self, call_id: str | None) -> str | None:
        """A call's id, unless an output naming it was settled before it (never linked then)."""
        if call_id is None:
            return None
        waiting = self.awaiting_call.pop(call_id, None)
        if waiting is not None and self.position - waiting.records[0] > JOIN_WINDOW:
            self.unlinked.add(call_id)
        if call_id in self.unlinked:
            return None
        self.loop_calls.add(call_id)
        return call_id

    def _tool_output(self, kind: str, payload: dict[str, Any]) -> None:
        call_id = str_or_none(payload.get("call_id"))
        state = self._working() or self._start_loop(None)
        if call_id is not None and call_id in self.spawns:
            self._spawn_output(call_id, payload, state)
            return
        value: dict[str, Any]
        if kind == "tool_search_output":
            tools = payload.get("tools")
            value = {"text": json_text(tools) if tools is not None else None}
        else:
            value = _runtime_truncated(_output_facts(payload.get("output")))
        item = self._emit("tool.output", "structural", value, state, output_of=call_id)
        if call_id is not None:
            self._exec_session(call_id, item)
        if call_id is not None:
            self.outputs[call_id] = item
            self.output_order.append(item)
            if call_id not in self.loop_calls:
                self.awaiting_call.setdefault(call_id, item)
            pending = self.ends.pop(call_id, None)
            if pending is not None and self.position - pending[0] <= JOIN_WINDOW:
                _apply_end(item, pending[0], pending[1])

    def _exec_session(self, call_id: str, item: DraftItem) -> None:
        """Unified exec: an exec call's output naming its running process, or a
        ``write_stdin`` continuation's output reporting that process's exit: that exit code is
        also the exec call's outcome (it joins the exec call's output while that is joinable)."""
        text = item.value.get("text")
        header = text[:400] if isinstance(text, str) else ""
        running = _RUNNING.search(header)
        process = self.stdin_calls.pop(call_id, None)
        if running is not None and process is None:
            self.processes[running.group(1)] = call_id
            return
        code = item.value.get("exit_code")
        if process is None or code is None or running is not None:
            return
        exec_call = self.processes.get(process)
        target = self.outputs.get(exec_call) if exec_call is not None else None
        if target is None or self.position - target.records[0] > JOIN_WINDOW:
            return
        del self.processes[process]
        target.value["exit_code"], target.value["failed"] = code, code != 0
        if self.position not in target.records:
            target.records.append(self.position)

    def _spawn_output(self, call_id: str, payload: dict[str, Any], state: TurnState) -> None:
        text, _ = content_text(payload.get("output"))
        data = parsed(text)
        child = str_or_none(data.get("agent_id")) if isinstance(data, dict) else None
        spawn = self.spawns[call_id]
        if child:
            self.children.add(child)
            if spawn is not None and self.position - spawn.records[0] <= JOIN_WINDOW:
                spawn.session_ref = child
        # the call's output (its text is the activity's), beside the child's activity
        self._emit("tool.output", "structural", {"text": None}, state, output_of=call_id)
        value = {"text": text or None, "has_images": False}
        self._emit("subagent.activity", "structural", value, state, session_ref=child)

    def _end_event(self, call_id: object, payload: dict[str, Any]) -> None:
        if not isinstance(call_id, str):
            return
        item = self.outputs.get(call_id)
        if item is not None and self.position - item.records[0] <= JOIN_WINDOW:
            _apply_end(item, self.position, payload)
        else:
            self.ends[call_id] = (self.position, _end_facts(payload))
            self.end_order.append((self.position, call_id))
