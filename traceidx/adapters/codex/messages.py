"""Codex messages: human and injected inputs, assistant text and reasoning, on both tracks."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.codex.state import CodexState, PendingMessage, TurnState
from traceidx.adapters.codex.wire import content_text, parsed
from traceidx.adapters.values import reasoning_value, str_or_none
from traceidx.domain.drafts import DraftLoop

#: leading markers of runtime-injected user-role text -> (role, category)
_USER_MARKERS: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("<environment_context>", "runtime.context", "environment"),
    ("# AGENTS.md instructions", "runtime.instructions", "project"),
    ("<INSTRUCTIONS>", "runtime.instructions", "project"),
    ("<user_instructions>", "runtime.instructions", "user"),
    ("<skills_instructions>", "runtime.instructions", "skill"),
    ("<skill>", "runtime.instructions", "skill"),
    ("<permissions instructions>", "runtime.instructions", "permission"),
    ("<collaboration_mode>", "runtime.instructions", "collaboration"),
    ("<plugins_instructions>", "runtime.instructions", "plugin"),
    ("<turn_aborted>", "runtime.notice", None),
    ("<model_switch>", "runtime.notice", None),
    ("<subagent_notification>", "subagent.report", None),
    ("<user_shell_command>", "runtime.context", "internal"),
    ("<user_action>", "runtime.context", "internal"),
    ("<codex_internal_context>", "runtime.context", "internal"),
    ("<goal_context>", "runtime.context", "internal"),
    ("<image", "runtime.context", None),
    ("</image>", "runtime.context", None),
)
#: leading tags of developer-role text -> instruction category
_DEVELOPER_TAGS: Final[tuple[tuple[str, str | None], ...]] = (
    ("<permissions instructions>", "permission"),
    ("<skills_instructions>", "skill"),
    ("<collaboration_mode>", "collaboration"),
    ("<multi_agent_mode>", "collaboration"),
    ("<plugins_instructions>", "plugin"),
    ("<recommended_plugins>", "plugin"),
    ("<apps_instructions>", None),
    ("<personality_spec>", None),
    ("<tools>", "tool_catalog"),
    ("<user_instructions>", "user"),
    ("# AGENTS.md instructions", "project"),
)


def _texts_match(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short.encode()) >= 8 and short in long


def _phase_role(phase: str | None) -> tuple[str, str]:
    if phase == "final_answer":
        return "agent.final_answer", "structural"
    if phase is not None:
        return "agent.commentary", "structural"
    return "agent.commentary", "heuristic"


def _user_marker(text: str) -> tuple[str, str | None] | None:
    stripped = text.lstrip()
    for prefix, role, category in _USER_MARKERS:
        if stripped.startswith(prefix):
            return role, category
    return None


class CodexMessages(CodexState):
    """Drafts the messages of a rollout, pairing the UI and model-input copies."""

    def _ui_user(self, text: str, images: bool) -> None:
        """A human submission (UI track): claims its model-input copy or stands alone.

        With lifecycle records the running Loop receives it; without them (no task_started
        ever written) an input after agent output starts a new Loop, heuristically.
        """
        current = self._current()
        fresh = current is None or (not self.lifecycle and current.agent_output)
        twin = self._claim_user(text, current.draft if current is not None else None)
        strength = "structural" if self.lifecycle and not fresh else "heuristic"
        if fresh:
            start = min(twin.position, self.position) if twin is not None else self.position
            current = self._start_loop(None, start)
        assert current is not None
        if twin is not None:
            item = twin.item
            item.records.append(self.position)
            item.loop = current.draft
        else:
            value = {"text": text or None, "has_images": images}
            item = self._emit("human.request", strength, value, current)
            self.ui_humans.append(PendingMessage(item, self.position, text, None, "ui"))
            del self.ui_humans[:-8]
        self._make_human(item, current, strength)

    def _claim_user(self, text: str, loop: DraftLoop | None) -> PendingMessage | None:
        """The model-input copy of a UI human input: same Loop (or session level), equal
        text, else the adjacent line."""
        pool = [
            m
            for m in self.pending_users
            if (m.item.loop is loop or m.item.loop is None) and self._recent(m)
        ]
        chosen = next((m for m in reversed(pool) if _texts_match(m.text, text)), None)
        if chosen is None:
            chosen = next((m for m in pool if abs(m.position - self.position) == 1), None)
        if chosen is not None:
            self.pending_users.remove(chosen)
        return chosen

    def _user_input(self, payload: dict[str, Any]) -> None:
        text, images = content_text(payload.get("content"))
        if not text and not images:
            return
        marker = _user_marker(text)
        if marker is not None:
            self._injection(marker, text, images)
            return
        if self.legacy:
            state = self._start_loop(None)
            value = {"text": text or None, "has_images": images}
            item = self._emit("human.request", "heuristic", value, state)
            self._make_human(item, state, "heuristic")
            return
        current = self._current()
        loop = current.draft if current is not None else None
        pool = [m for m in self.ui_humans if m.item.loop is loop and self._recent(m)]
        twin = next((m for m in reversed(pool) if _texts_match(m.text, text)), None)
        if twin is None:
            twin = next((m for m in pool if abs(m.position - self.position) == 1), None)
        if twin is not None:  # the model-input copy of a UI input already seen
            self.ui_humans.remove(twin)
            twin.item.records.append(self.position)
            return
        value = {"text": text or None, "has_images": images}
        item = self._emit("runtime.unknown", "structural", value, current)
        self.pending_users.append(PendingMessage(item, self.position, text, None, "model"))

    def _injection(self, marker: tuple[str, str | None], text: str, images: bool) -> None:
        role, category = marker
        loop = self._current()
        value: dict[str, Any] = {"text": text}
        if role == "subagent.report":
            self._notification(text, loop)
            return
        if role == "runtime.context":
            value["has_images"] = images
        if category is not None:
            value["category"] = category
        self._emit(role, "heuristic", value, loop)

    def _notification(self, text: str, loop: TurnState | None) -> None:
        body = text.strip().removeprefix("<subagent_notification>")
        body = body.removesuffix("</subagent_notification>").strip()
        data = parsed(body)
        ref = None
        if isinstance(data, dict):
            path = str_or_none(data.get("agent_path")) or str_or_none(data.get("agent_id"))
            ref = path if path in self.children else None
        value = {"text": text, "has_images": False}
        self._emit("subagent.report", "heuristic", value, loop, session_ref=ref)

    def _agent_message(
        self, text: str, images: bool, phase: str | None, native: str | None, track: str
    ) -> None:
        if not text and not images:
            return
        state = self._working()
        twin = self._claim_agent(text, native, track, state)
        if twin is not None:
            item = twin.item
            item.records.append(self.position)
            if item.occurred_at is None:
                item.occurred_at = self.time
            if phase is not None and item.strength == "heuristic":  # the twin states the phase
                item.role, item.strength = _phase_role(phase)
                owner = self._state_of(item.loop)
                if owner is not None:
                    owner.unphased = [u for u in owner.unphased if u is not item]
                    owner.final = owner.final or item.role == "agent.final_answer"
            return
        if state is None:
            state = self._start_loop(None)
        role, strength = _phase_role(phase)
        item = self._emit(role, strength, {"text": text or None, "has_images": images}, state)
        if role == "agent.final_answer":
            state.final = True
        if phase is None:
            state.unphased.append(item)
        self.pending_agent.append(PendingMessage(item, self.position, text, native, track))
        del self.pending_agent[:-8]

    def _claim_agent(
        self, text: str, native: str | None, track: str, state: TurnState | None
    ) -> PendingMessage | None:
        """The other track's copy: same item id when both have one, else equal text, else the
        adjacent line."""
        loop = state.draft if state is not None else None
        pool = [
            m
            for m in self.pending_agent
            if m.track != track and m.item.loop is loop and self._recent(m)
        ]
        chosen = None
        if native is not None:
            chosen = next((m for m in pool if m.native_id == native), None)
        open_pool = [m for m in pool if m.native_id is None or native is None]
        if chosen is None:
            chosen = next((m for m in reversed(open_pool) if m.text == text), None)
        if chosen is None:
            chosen = next((m for m in open_pool if abs(m.position - self.position) == 1), None)
        if chosen is not None:
            self.pending_agent.remove(chosen)
        return chosen

    def _reasoning(self, payload: dict[str, Any]) -> None:
        parts = payload.get("summary")
        texts = (
            [
                p["text"]
                for p in parts
                if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
            ]
            if isinstance(parts, list)
            else []
        )
        value = reasoning_value("\n".join(texts), "summary")
        state = self._working() or self._start_loop(None)
        item = self._emit("agent.reasoning", "structural", value, state)
        item.records.extend(self.ui_reasoning)
        self.ui_reasoning = []

    def _developer(self, payload: dict[str, Any]) -> None:
        text, _ = content_text(payload.get("content"))
        if not text:
            return
        stripped = text.lstrip()
        value: dict[str, Any] = {"text": text}
        strength = "structural"
        for tag, category in _DEVELOPER_TAGS:
            if stripped.startswith(tag):
                strength = "heuristic"
                if category is not None:
                    value["category"] = category
                break
        self._emit("runtime.instructions", strength, value, self._current())
