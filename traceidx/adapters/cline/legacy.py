"""The task files of Cline's VS Code extension (and of Roo Code and the old Kilo Code
extension, which write the same shape): ``tasks/<task id>/ui_messages.json``, read as the
``cline`` runtime.

The file is a JSON array of the messages the extension shows, each ``{ts, type: "say" |
"ask", say | ask, text, ...}``; document framing hands the adapter a root record naming the
file (``{"$file": "<task id>/ui_messages.json"}``) and then one record per message. The
model's own view of the task (``api_conversation_history.json`` beside it) repeats the same
turns without usage and is not read. See "The VS Code extension's task files" in
``docs/runtimes/cline.md``.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from traceidx.adapters.cline.tools import ClineTools
from traceidx.adapters.cline.usage import task_usage_of
from traceidx.adapters.values import dict_or_empty, nonempty_str, reasoning_value, str_or_none
from traceidx.domain.drafts import DraftLoop, DraftSession

#: the file of a task folder read, and the member framing gives its root record
TASK_FILE: Final = "ui_messages.json"
FILE: Final = "$file"
_DECODE: Final = msgspec.json.Decoder()
#: what the extension appends to a command that waits for the person's approval
REQUIRES_APPROVAL: Final = "REQ_APP"
#: the working directory the environment details of a request state
_CWD: Final = re.compile(r"# Current (?:Working|Workspace) Directory \((.+?)\) Files")
#: the model Roo Code and Kilo Code name in a request's environment details
_MODEL_TAG: Final = re.compile(r"<model>([^<\n]+)</model>")
#: ``say`` types kept as Records only (bookkeeping the adapter reads nothing from)
_RECORD_ONLY: Final = frozenset(
    {
        "api_req_finished",
        "api_req_retried",
        "api_req_retry_delayed",
        "checkpoint_created",
        "checkpoint_saved",
        "shell_integration_warning",
        "deleted_api_reqs",
        "info",
        "load_mcp_documentation",
        "mcp_server_request_started",
        "task_progress",
        "subtask_result",
        "codebase_search_result",
        "user_feedback_diff",
    }
)


def is_task_file(head: list[Any]) -> bool:
    """Whether decoded leading records are a task's ``ui_messages.json``: its root record (a
    file so named) and a first message with a numeric ``ts`` and a ``type`` of say or ask."""
    if len(head) < 2 or not isinstance(head[0], dict):
        return False
    file = head[0].get(FILE)
    first = head[1]
    return (
        isinstance(file, str)
        and file.endswith("/" + TASK_FILE)
        and isinstance(first, dict)
        and first.get("type") in ("say", "ask")
        and isinstance(first.get("ts"), int | float)
    )


def task_type(obj: dict[str, Any]) -> str | None:
    """A message's native type: ``say/<say>`` or ``ask/<ask>``."""
    kind = obj.get("type")
    if kind not in ("say", "ask"):
        return None
    sub = obj.get(kind)
    return f"{kind}/{sub}" if isinstance(sub, str) else str(kind)


def _json_object(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return {}
    try:
        value = _DECODE.decode(text)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class ClineTaskMessages(ClineTools):
    """Projects a task's ``ui_messages.json``, message by message."""

    def _task_head(self, head: dict[str, Any]) -> None:
        """The root record: the task id is the folder's name."""
        file = str_or_none(head.get(FILE)) or ""
        folder, _, _ = file.rpartition("/")
        if folder and self.session is None:
            self.session = DraftSession(folder, self.position)
            self.legacy = True

    def _task_message(self, obj: dict[str, Any]) -> None:
        kind, text = obj.get("type"), obj.get("text")
        sub = obj.get(kind) if isinstance(kind, str) else None
        value = text if isinstance(text, str) else None
        images = bool(obj.get("images"))
        if obj.get("partial") is True:  # a message still streaming when the file was written
            self.count_unknown(f"{kind}/{sub} (partial)")
            return
        if kind == "say" and (sub == "task" or (sub == "text" and self.loop is None)):
            # the task the person gave (Roo Code writes it as the file's first ``text``)
            self._task_prompt(value, images, "human.request")
        elif kind == "say" and sub == "user_feedback":
            answered = self.final is not None and self.final.loop is self.loop
            self._task_prompt(value, images, "human.request" if answered else "human.steering")
        elif kind == "say" and sub == "api_req_started":
            self._task_request(obj, _json_object(text))
        elif kind == "say" and sub == "text":
            self._task_text(value, "agent.commentary", "structural")
        elif kind == "say" and sub == "completion_result":  # attempt_completion's result
            self._task_text(value, "agent.final_answer", "structural")
        elif kind == "say" and sub == "reasoning":
            self.emit("agent.reasoning", "structural", reasoning_value(value), self._current())
        elif kind in ("ask", "say") and sub == "command":
            self._task_command(value.removesuffix(REQUIRES_APPROVAL) if value else None)
        elif kind == "say" and sub == "command_output":
            self._task_command_output(value)
        elif kind in ("ask", "say") and sub == "tool":
            self._task_tool(value)
        elif kind == "ask" and sub == "followup":
            question = _json_object(text).get("question", value)
            self._task_text(str_or_none(question), "agent.commentary", "structural")
        elif kind == "say" and sub in ("error", "diff_error", "clineignore_error"):
            self._task_notice(value)
        elif kind == "ask" and sub in ("api_req_failed", "mistake_limit_reached"):
            self._task_notice(value)
            self._end("failed")
        elif kind == "say" and sub == "condense_context":
            summary = dict_or_empty(obj.get("contextCondense")).get("summary")
            value_ = {"summary": str_or_none(summary)}
            self.emit("runtime.compaction_summary", "structural", value_, self.loop)
        elif kind == "ask" and sub in ("completion_result", "resume_task", "resume_completed_task"):
            pass  # the extension waits for the person: nothing of the task's own
        elif kind == "say" and isinstance(sub, str) and sub in _RECORD_ONLY:
            pass
        else:
            self.count_unknown(f"{kind}/{sub}")

    def _task_prompt(self, text: str | None, images: bool, role: str) -> None:
        if not text and not images:
            return
        loop = self.loop if role == "human.steering" and self.loop is not None else None
        if loop is None:
            loop = self._open_loop()
            role = "human.request"
        self.emit(role, "structural", {"text": text or None, "has_images": images}, loop)

    def _task_request(self, obj: dict[str, Any], info: dict[str, Any]) -> None:
        """``api_req_started``: one model request; its usage once the extension wrote it."""
        loop = self._response_loop()
        model = nonempty_str(dict_or_empty(obj.get("modelInfo")).get("modelId"))
        provider = nonempty_str(dict_or_empty(obj.get("modelInfo")).get("providerId"))
        request = str_or_none(info.get("request")) or ""
        if model is None:
            found = _MODEL_TAG.search(request)
            model = found.group(1).strip() if found else None
        session = self.session
        if session is not None and session.working_directory is None:
            cwd = _CWD.search(request)
            session.working_directory = cwd.group(1) if cwd else None
        if loop.model_id is None and model is not None:
            loop.model_id = model
        sample = task_usage_of(info)
        if sample is not None:
            protocol = nonempty_str(info.get("apiProtocol"))
            loop.usage.append(
                sample.located((self.position,), self.time, model, provider or protocol)
            )
        reason = info.get("cancelReason")
        if reason == "user_cancelled":
            self._end("interrupted")
        elif reason in ("streaming_failed", "retries_exhausted"):
            self._end("failed")

    def _task_text(self, text: str | None, role: str, strength: str) -> None:
        if not text:
            return
        loop = self._current()
        final = self.final
        if final is not None and final.loop is loop and role == "agent.final_answer":
            final.role, final.strength = "agent.commentary", "structural"
        item = self.emit(role, strength, {"text": text, "has_images": False}, loop)
        if role == "agent.final_answer":
            self.final = item

    def _task_notice(self, text: str | None) -> None:
        value = {"text": text or None, "has_images": False}
        self.emit("runtime.notice", "structural", value, self._current())

    def _task_command(self, command: str | None) -> None:
        """``ask: command``: the command the agent runs (``execute_command``); its output
        follows as ``command_output``."""
        loop = self._current()
        key = f"command@{self.position}"
        args = {"command": command}
        call = self.tool_call("execute_command", key, args, loop, frozenset({"execute_command"}))
        self.pending_command = (key, call)
        self.command_output = None

    def _task_command_output(self, text: str | None) -> None:
        pending = self.pending_command
        output = self.command_output
        if output is not None and output.loop is self.loop:  # the output goes on
            if text:
                earlier = output.value.get("text")
                output.value["text"] = f"{earlier}\n{text}" if earlier else text
            output.records.append(self.position)
            return
        key = pending[0] if pending is not None else None
        loop: DraftLoop | None = pending[1].loop if pending is not None else self.loop
        value = {"text": text or None}
        self.command_output = self.emit("tool.output", "structural", value, loop, output_of=key)
        self.pending_command = None

    def _task_tool(self, text: str | None) -> None:
        """``tool``: a file or search tool the agent used (its result is not in this file)."""
        info = _json_object(text)
        name = nonempty_str(info.get("tool"))
        self.tool_call(name, None, info or None, self._current(), frozenset())
