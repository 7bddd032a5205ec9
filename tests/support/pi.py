"""Small Pi traces written entry by entry (a `Chain` of v3 entries), for adapter tests."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.pi.adapter import PiAdapter
from traceidx.domain.drafts import Draft

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0c5d7e1a-2b3f-4a6c-8d9e-0f1a2b3c4d5e",
    "timestamp": "2026-04-01T08:00:00.000Z",
    "cwd": "/home/dev/projects/unit",
}


class Chain:
    """Writes v3 entries; each is the child of the previous one unless a parent is given."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = [HEADER]
        self.last: str | None = None

    def add(self, kind: str, parent: str | bool | None = True, **fields: Any) -> str:
        ident = f"e{len(self.entries):07d}"
        parent_id = self.last if parent is True else parent
        second = len(self.entries)
        entry = {"type": kind, "id": ident, "parentId": parent_id}
        entry["timestamp"] = f"2026-04-01T08:00:{second:02d}.000Z"
        entry.update(fields)
        self.entries.append(entry)
        self.last = ident
        return ident

    def user(self, text: str, parent: str | bool | None = True) -> str:
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
        return self.add("message", parent, message=message)

    def assistant(
        self, stop: str, text: str | None = None, calls: tuple[str, ...] = (), **usage: int
    ) -> str:
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        for call in calls:
            content.append(
                {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": "ls"}}
            )
        counts = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0} | usage
        message = {"role": "assistant", "content": content, "stopReason": stop}
        message.update(provider="mock", model="gpt-5.5", usage=counts)
        return self.add("message", message=message)

    def result(self, call: str, error: bool = False) -> str:
        message = {"role": "toolResult", "toolCallId": call, "toolName": "bash"}
        message.update(content=[{"type": "text", "text": "out"}], isError=error)
        return self.add("message", message=message)

    def draft(self) -> Draft:
        adapter = PiAdapter()
        for position, entry in enumerate(self.entries):
            adapter.feed(position, entry)
        return adapter.finish()
