"""The OpenCode adapter: dispatches each row of a session (session, message, part)."""

from __future__ import annotations

from typing import Any, ClassVar

from traceidx.adapters.opencode.state import Message
from traceidx.adapters.opencode.tools import OpenCodeTools
from traceidx.adapters.opencode.wire import (
    MESSAGE,
    PART,
    RECORD,
    RECORD_ONLY,
    SESSION,
    decoded,
    native_type,
)
from traceidx.adapters.values import (
    dict_or_empty,
    int_or_none,
    nonempty_str,
    reasoning_value,
    str_or_none,
)
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.rules import type_tag


class OpenCodeAdapter(OpenCodeTools):
    """Projects one session of an OpenCode database (the format: ``docs/runtimes/opencode.md``)."""

    runtime = "opencode"

    record_type = RECORD

    #: the mark the framing writes into the records of the runtime's database (its registry
    #: entry's `Database.mark`; OpenCode's has none): the seam an OpenCode fork with the same
    #: tables (Kilo Code) is told apart by
    database_mark: ClassVar[str | None] = None

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        """A session row of OpenCode's ``session`` table, framed from the runtime's own
        database (`database_mark`), opens every source it frames."""
        first = head[0] if head else None
        if not isinstance(first, dict) or first.get("table") != SESSION:
            return False
        if first.get("database") != cls.database_mark:
            return False
        row = first.get("row")
        return (
            isinstance(row, dict)
            and isinstance(row.get("id"), str)
            and isinstance(row.get("slug"), str)
            and isinstance(row.get("version"), str)
            and "project_id" in row
        )

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        table = obj.get("table") if isinstance(obj, dict) else None
        row = obj.get("row") if isinstance(obj, dict) else None
        if not isinstance(table, str) or not isinstance(row, dict):
            self.count_unknown("<not a row>")
            return RecordFacts(None, None)
        self.time = int_or_none(row.get("time_created"))
        if table == SESSION:
            self._session(row)
            return RecordFacts(self.time, table)
        if table not in (MESSAGE, PART):
            self.count_unknown(f"table/{table}")
            return RecordFacts(self.time, table)
        data = decoded(table, row.get("data"))
        if not data:
            self.count_unknown(f"{table} (data is not a JSON object)")
        elif table == MESSAGE:
            self._message(row, data)
        else:
            self._part(row, data)
        return RecordFacts(self.time, native_type(table, data))

    def _message(self, row: dict[str, Any], data: dict[str, Any]) -> None:
        role = type_tag(data.get("role"))
        message = Message(nonempty_str(row.get("id")), role, self.position)
        self.message = message
        if role == "assistant":
            self._assistant(message, data)
        elif role != "user":
            self.count_unknown(f"message/{role}")

    def _part(self, row: dict[str, Any], data: dict[str, Any]) -> None:
        message = self.message
        kind = type_tag(data.get("type"))
        if message is None or message.native_id != row.get("message_id"):
            self.count_unknown("part (its message is not the session's)")
        elif message.role == "user":
            self._user_part(message, kind, data)
        elif message.role == "assistant":
            self._assistant_part(message, kind, data)

    # -- user messages ---------------------------------------------------------------------------

    def _user_part(self, message: Message, kind: str | None, data: dict[str, Any]) -> None:
        if kind == "text":
            text = str_or_none(data.get("text"))
            if data.get("synthetic") is True or data.get("ignored") is True:
                self._runtime_text(message, text, data)
            elif text is not None:
                self._prompt(message, text)
        elif kind == "compaction":  # the runtime compacts the session here
            self._decide(message, "joins" if data.get("auto") is True else "outside")
        elif kind == "file":
            mime = str_or_none(data.get("mime"))
            if mime is not None and mime.startswith("image/"):
                message.images = True
                if message.request is not None:
                    message.request.value["has_images"] = True
        elif kind not in RECORD_ONLY:
            self.count_unknown(f"part/{kind}")

    def _prompt(self, message: Message, text: str) -> None:
        """A user message's text: the prompt that starts a turn. A subagent's prompt is the
        task its parent's agent wrote: it starts the child's turn and stays a Record."""
        loop = self._decide(message, "opens")
        if self.child:
            if self.session is not None and self.session.task is None:
                self.session.task = text
            return
        request = message.request
        if request is not None:  # a second text part of the same prompt
            request.value["text"] = f"{request.value['text']}\n{text}"
            request.records.append(self.position)
            return
        value = {"text": text, "has_images": message.images}
        # OpenCode's prompts come from its terminal UI, `opencode run` or its server's API:
        # nothing in the row tells a person's typing from a program's
        request = self.emit("human.request", "heuristic", value, loop)
        request.records.insert(0, message.position)
        message.request = request
        message.items.append(request)

    def _runtime_text(self, message: Message, text: str | None, data: dict[str, Any]) -> None:
        """A text part the runtime wrote into a user message (``synthetic``): after a
        compaction, the instruction to go on; otherwise material for the agent."""
        loop = self._decide(message, "joins")
        if not text:
            return
        if dict_or_empty(data.get("metadata")).get("compaction_continue") is True:
            item = self.emit("runtime.instructions", "structural", {"text": text}, loop)
        else:
            value = {"text": text, "has_images": False}
            item = self.emit("runtime.context", "structural", value, loop)
        message.items.append(item)

    # -- assistant messages ----------------------------------------------------------------------

    def _assistant_part(self, message: Message, kind: str | None, data: dict[str, Any]) -> None:
        if kind == "text":
            text = nonempty_str(data.get("text"))
            if text is not None and data.get("synthetic") is not True:
                self._agent_text(message, text)
        elif kind == "reasoning":
            value = reasoning_value(nonempty_str(data.get("text")))
            self.emit("agent.reasoning", "structural", value, message.loop)
        elif kind == "tool":
            self._tool(message, data)
        elif kind == "retry":  # a failed request the runtime retried
            error = dict_or_empty(data.get("error"))
            text = nonempty_str(dict_or_empty(error.get("data")).get("message"))
            text = text or nonempty_str(error.get("name"))
            self.emit(
                "runtime.notice", "structural", {"text": text, "has_images": False}, message.loop
            )
        elif kind not in RECORD_ONLY:
            self.count_unknown(f"part/{kind}")
