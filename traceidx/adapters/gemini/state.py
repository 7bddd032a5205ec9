"""Gemini CLI adapter state: the messages as the file upserts them, and the timeline.

A chat file is a log of writes, not of events: a message is written again (same ``id``, full
content) whenever it changes, and the last write wins. So nothing is projected while reading:
each line updates the message it writes (`Message`: the latest object, and the last line that
wrote it), or adds a bookkeeping event to the timeline (`Entry`: a new process, a rewind, a
history re-sync that rolls a prompt back, a checkpoint's history written out again);
`GeminiAdapter.finish` projects the timeline once every line was read.
"""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.adapters.gemini.wire import (
    SESSION_CONTEXT,
    STATE_SNAPSHOT,
    function_responses,
    parts_of,
    parts_text,
    workspace_directory,
)
from traceidx.adapters.values import nonempty_str
from traceidx.domain.drafts import DraftItem, DraftLoop, DraftSession
from traceidx.domain.rules import UsageSample
from traceidx.domain.timestamps import rfc3339_ms

# Timeline entry kinds.
MESSAGE: Final = "message"  # a message (its latest write)
PROCESS: Final = "process"  # another metadata line: a new CLI process took the file over
REWIND: Final = "rewind"  # ``$rewindTo``: the conversation was rewound
ROLLBACK: Final = "rollback"  # a re-sync without the latest prompt: its request was undone
RESTATE: Final = "restate"  # a checkpoint's history written again as new messages (`_restated`)


class Message:
    """One message id's latest write: `obj` (the message), `last` the last line that wrote it;
    `synced` while only a ``$set.messages`` re-sync has stated it; `restated` when it is a turn
    of a loaded checkpoint, written again (`GeminiState._restated`)."""

    __slots__ = ("key", "last", "obj", "restated", "synced")

    def __init__(self, key: str, obj: dict[str, Any], position: int, synced: bool) -> None:
        self.key = key
        self.obj = obj
        self.last = position
        self.synced = synced
        self.restated = False


class Entry:
    """A point of the timeline: a message (where it was first written) or an event."""

    __slots__ = ("count", "kind", "message", "position", "target")

    def __init__(
        self,
        kind: str,
        position: int,
        message: Message | None = None,
        target: str | None = None,
        count: int = 0,
    ) -> None:
        self.kind = kind
        self.position = position
        self.message = message
        self.target = target  # a rewind's message id
        self.count = count  # how many messages a checkpoint restated


def user_prompt(obj: dict[str, Any]) -> bool:
    """Whether a message is a prompt: a ``user`` message with text and no tool results, that
    is not the injected session context."""
    if obj.get("type") != "user":
        return False
    parts = parts_of(obj.get("content"))
    if function_responses(parts):
        return False
    text = parts_text(parts)
    return bool(text) and not text.lstrip().startswith(SESSION_CONTEXT)


class GeminiState(Adapter):
    """What a chat file's adapter keeps between lines: the session, messages and timeline."""

    def __init__(self) -> None:
        super().__init__()
        self.subagent = False
        self.loops: list[DraftLoop] = []
        self.timeline: list[Entry] = []
        self.live: dict[str, Message] = {}  # the conversation's messages by id (rewinds drop)
        self.order: list[str] = []  # their ids, in the order first written
        self.prompt: Message | None = None  # the latest prompt, until a re-sync drops it
        self.from_context: str | None = None  # the folder the session context lists
        # projection (`finish`): the current Loop, whether it still runs, the prompt that
        # opened it, the text that is its final answer if the run ends next, the outputs
        # drafted by call id, the model calls outside any Loop
        self.loop: DraftLoop | None = None
        self.open = False
        self.opened_by: Message | None = None
        self.candidate: DraftItem | None = None
        self.outputs: dict[str, DraftItem] = {}
        self.calls: list[UsageSample] = []
        self.projected = False

    # -- lines -------------------------------------------------------------------------------

    def _metadata(self, obj: dict[str, Any]) -> None:
        if self.session is None:
            session = DraftSession(obj["sessionId"], self.position)
            session.created_at = self.time
            self.subagent = obj.get("kind") == "subagent"
            self.session = session
        else:
            self.timeline.append(Entry(PROCESS, self.position))
            if obj["sessionId"] != self.session.native_id:
                self.count_unknown("metadata (another session id)")
        self._directories(obj.get("directories"))
        self._summary(obj.get("summary"))
        conversation = obj.get("messages")
        if isinstance(conversation, list):  # a whole record written on one line
            for message in conversation:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._write(message, synced=False)

    def _directories(self, value: object) -> None:
        if isinstance(value, list) and value and self.session is not None:
            first = nonempty_str(value[0])
            if first is not None:
                self.session.working_directory = first

    def _summary(self, value: object) -> None:
        summary = nonempty_str(value)
        if summary is not None and self.session is not None:
            self.session.name = summary.strip() or None

    def _write(self, message: dict[str, Any], synced: bool) -> None:
        """Upsert a message by id: a known id is replaced in place (its first position in the
        timeline stays), an unknown one is appended."""
        key: str = message["id"]
        known = self.live.get(key)
        if known is not None:
            if synced:  # a re-sync restates what the file already holds (lossily): ignored
                return
            known.obj, known.last, known.synced = message, self.position, False
        else:
            known = Message(key, message, self.position, synced)
            self.live[key] = known
            self.order.append(key)
            self.timeline.append(Entry(MESSAGE, self.position, known))
        if not synced and user_prompt(message):
            self.prompt = known
        if synced and message.get("type") == "user":
            text = parts_text(parts_of(message.get("content")))
            if text.lstrip().startswith(SESSION_CONTEXT) and self.from_context is None:
                self.from_context = workspace_directory(text)

    def _update(self, update: dict[str, Any]) -> None:
        """A ``$set``: metadata, or a re-sync of the message list (its messages of ids the
        file never wrote are kept: the injected session context, a compression summary)."""
        self._directories(update.get("directories"))
        self._summary(update.get("summary"))
        native = update.get("sessionId")
        if (
            isinstance(native, str)
            and self.session is not None
            and native != self.session.native_id
        ):
            self.count_unknown("$set (another session id)")
        conversation = update.get("messages")
        if not isinstance(conversation, list):
            return
        if self._restated(conversation):
            return
        listed: set[str] = set()
        unknown = False
        for message in conversation:
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                continue
            listed.add(message["id"])
            if message["id"] not in self.live:
                unknown = True
                if _kept_from_sync(message):
                    self._write(message, synced=True)
        prompt = self.prompt
        if prompt is not None and prompt.key not in listed and not unknown:
            # the CLI rolls its history back to before a prompt whose request failed or was
            # cancelled, and re-syncs: the prompt is gone from what it will send next
            self.timeline.append(Entry(ROLLBACK, self.position, prompt))
            self.prompt = None

    def _restated(self, conversation: list[Any]) -> bool:
        """Whether a re-sync lists exactly the latest message lines, the first of them the
        session context: a loaded checkpoint (``/chat resume <tag>``, ``/restore``) holds turns
        without ids, so the CLI writes each as a new message and then lists just them. Those
        messages restate history (each prompt was typed earlier): they are marked, and open no
        Loop. The session context is never a message line otherwise."""
        keys = [
            m["id"] for m in conversation if isinstance(m, dict) and isinstance(m.get("id"), str)
        ]
        count = len(keys)
        if count == 0 or len(keys) != len(conversation) or self.order[-count:] != keys:
            return False
        messages = [self.live[key] for key in keys]
        first = messages[0].obj
        head = parts_text(parts_of(first.get("content"))).lstrip()
        if first.get("type") != "user" or not head.startswith(SESSION_CONTEXT):
            return False
        if any(message.synced or message.restated for message in messages):
            return False
        for message in messages:
            message.restated = True
        if self.prompt is not None and self.prompt.restated:
            self.prompt = None
        self.timeline.append(Entry(RESTATE, self.position, count=count))
        return True

    def _rewind(self, target: object) -> None:
        """``$rewindTo``: that message and every later one leave the conversation (their facts
        stay: they happened); an id the conversation does not hold clears it, as the CLI does."""
        key = target if isinstance(target, str) else None
        cut = self.order.index(key) if key is not None and key in self.live else 0
        for gone in self.order[cut:]:
            del self.live[gone]
        del self.order[cut:]
        if self.prompt is not None and self.prompt.key not in self.live:
            self.prompt = None
        self.timeline.append(Entry(REWIND, self.position, None, key))


def _kept_from_sync(message: dict[str, Any]) -> bool:
    """Whether a message only a re-sync states is kept: the injected session context or a
    compression summary (other history turns a re-sync adds are the CLI's own restatements)."""
    if message.get("type") != "user":
        return False
    text = parts_text(parts_of(message.get("content"))).lstrip()
    return text.startswith(SESSION_CONTEXT) or STATE_SNAPSHOT in text


def time_of(obj: dict[str, Any]) -> int | None:
    """A message's own time."""
    return rfc3339_ms(obj.get("timestamp"))
