"""Claude Code tools: calls, results, delegations to subagents and task notifications."""

from __future__ import annotations

import re
from typing import Any, Final

from traceidx.adapters.claude_code.messages import notification_tags
from traceidx.adapters.claude_code.state import ClaudeCodeState
from traceidx.adapters.claude_code.wire import result_text
from traceidx.adapters.values import str_or_none
from traceidx.domain.drafts import DraftLoop
from traceidx.domain.rules import exit_code_from_header

_EXIT_CODE: Final = re.compile(r"Exit code (-?\d+)(?:\n|$)")
_DELEGATION_TOOLS: Final = frozenset({"Agent", "Task"})
_SHELL_TOOLS: Final = frozenset({"Bash"})


class ClaudeCodeTools(ClaudeCodeState):
    """Drafts tool calls and their results, and the subagent work they start."""

    def _notification(self, text: str, strength: str, loop: DraftLoop) -> None:
        tags = notification_tags(text)
        task, call_id, status = tags.get("task-id"), tags.get("tool-use-id"), tags.get("status")
        body = tags.get("result") or tags.get("summary") or text
        if task is not None and self.agent_tasks.get(task) == "agent":
            report = {"text": body, "has_images": False}
            self.emit("subagent.report", strength, report, loop, session_ref=task)
        elif call_id is not None and call_id in self.calls:
            failed = {"completed": False, "failed": True}.get(status or "")
            output = {"text": body, "failed": failed}
            self.emit("tool.output", strength, output, loop, output_of=call_id)
        else:
            self.emit("runtime.notice", strength, {"text": text}, loop)

    def _tool_result(self, obj: dict[str, Any], block: dict[str, Any], loop: Any) -> None:
        call_id = block.get("tool_use_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        text, images = result_text(block)
        extra = obj.get("toolUseResult")
        facts = extra if isinstance(extra, dict) else {}
        # The Messages API defines an omitted ``is_error`` as false: that is a reported fact.
        is_error = block.get("is_error", False)
        # a delegation's result is also the subagent's report (its text goes there), unless
        # the call failed without naming a subagent: then it is the runtime's error
        delegated = call in _DELEGATION_TOOLS and not (
            is_error is True and not isinstance(facts.get("agentId"), str)
        )
        value: dict[str, Any] = {"text": None if delegated else text}
        if isinstance(is_error, bool):
            value["failed"] = is_error
            if is_error and text and not delegated:
                value["exit_code"] = exit_code_from_header(text, _EXIT_CODE)
        duration = facts.get("durationMs", facts.get("totalDurationMs"))
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
            value["duration_ms"] = int(duration)
        if isinstance(facts.get("truncated"), bool):
            value["runtime_truncated"] = facts["truncated"]
        task = facts.get("backgroundTaskId") or facts.get("taskId")
        if isinstance(task, str) and isinstance(call_id, str) and call not in _DELEGATION_TOOLS:
            self.agent_tasks[task] = call_id
        ref = call_id if isinstance(call_id, str) else None
        output = self.emit("tool.output", "structural", value, loop, output_of=ref)
        if ref is not None and call is None:  # its call may still come: keep them in order
            self._hold(output, until_next_loop=True)
        if delegated:
            self._delegation_result(block, facts, text, images, loop)
        elif call in _DELEGATION_TOOLS:  # no subagent ran: its delegation names none
            pending = self.delegations.pop(str(call_id), None)
            if pending is not None:
                self._release(pending)

    def _delegation_result(
        self,
        block: dict[str, Any],
        facts: dict[str, Any],
        text: str | None,
        images: bool,
        loop: Any,
    ) -> None:
        agent = facts.get("agentId")
        call_id = block.get("tool_use_id")
        call = self.delegations.pop(str(call_id), None)  # a call has one result
        if isinstance(agent, str):
            self.agent_tasks[agent] = "agent"
            if call is not None:
                call.session_ref = agent
        if call is not None:
            self._release(call)
        value = {"text": text, "has_images": images}
        ref = agent if isinstance(agent, str) else None
        running = facts.get("status") in ("async_launched", "running") or facts.get("isAsync")
        role = "subagent.activity" if running else "subagent.report"
        self.emit(role, "structural", value, loop, session_ref=ref)

    # -- assistant records ------------------------------------------------------------------
    def _tool_use(self, block: dict[str, Any], loop: DraftLoop, cwd: str | None) -> None:
        name, call_id = str_or_none(block.get("name")), str_or_none(block.get("id"))
        args = block.get("input")
        self.tool_call(name, call_id, args, loop, _SHELL_TOOLS, working_directory=cwd)
        delegation = None
        if name in _DELEGATION_TOOLS and isinstance(args, dict):  # the call also delegates
            task = {
                "text": str_or_none(args.get("prompt")),
                "has_images": False,
                "agent_type": str_or_none(args.get("subagent_type")),
            }
            delegation = self.emit("agent.delegation", "structural", task, loop)
        if call_id is not None and name is not None:
            self.calls[call_id] = name
            replaced = self.delegations.pop(call_id, None)
            if replaced is not None:
                self._release(replaced)
            if delegation is not None:  # its result names the subagent
                self.delegations[call_id] = delegation
                self._hold(delegation, until_next_loop=True)
