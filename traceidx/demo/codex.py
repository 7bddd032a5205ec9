"""Generate a deterministic demo corpus of Codex rollouts (no network, invented projects).

The files imitate what codex-cli 0.171 writes (the newest rollouts of the corpus):

* layout ``<root>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread uuid>.jsonl``;
* every line is ``{timestamp, ordinal, type, payload}``; a session opens with ``session_meta``
  and each turn with ``event_msg/task_started``, the developer permissions message, the
  ``<environment_context>`` user message, ``world_state``, ``turn_context`` and
  ``thread_settings_applied``;
* human input twice: the model-input ``response_item`` message and ``item_completed`` of a
  ``UserMessage``; assistant text as ``item_completed/AgentMessage`` plus the ``response_item``
  message with the same id and ``phase`` (``commentary`` / ``final_answer``); reasoning as
  ``item_completed/Reasoning`` plus ``response_item/reasoning`` (summary + encrypted content);
* every model call writes ``token_usage_record`` and, after its tool outputs,
  ``event_msg/token_count`` (cumulative ``total_token_usage`` + ``last_token_usage``);
* ``exec_command`` calls with ``item_completed/CommandExecution`` (exit code, duration) and a
  ``function_call_output`` with the ``Chunk ID`` / ``Wall time`` / exit header; a command that
  yields continues through ``write_stdin``; ``apply_patch`` is a ``custom_tool_call`` with a
  ``FileChange`` item.

Scenarios (seeded; the first sessions each showcase one so small corpora have them all):
failing commands, an interrupted turn (``turn_aborted`` + ``<turn_aborted>`` notice + a
killed command), a failed turn (``task_complete`` with ``error``), a subagent spawned with
``spawn_agent`` whose child rollout replays the parent's history below
``subagent_history_start_ordinal``, compaction (``compacted`` + ``context_compacted``), a
polled long command, apply_patch, resumed multi-turn sessions and non-ASCII prompts.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

Obj = dict[str, Any]
_ENCODE = msgspec.json.Encoder()
_START = datetime(2026, 9, 28, 8, 0, tzinfo=UTC)

PROJECTS = ("orchard", "tidepool", "quarry-api", "lumen", "basalt", "kite-cli", "marigold")
MODELS = (("gpt-5.5", "medium"), ("gpt-5.5", "high"), ("gpt-5.5-mini", "low"))
PROMPTS = (
    "Check the repo state and tell me what looks off.",
    "Run the tests and summarise the failures.",
    "Find where the config file is parsed.",
    "请检查一下构建脚本，并简单汇报。",
    "Revisa los scripts de despliegue y resume lo que encuentres.",
    "ビルドが遅い理由を調べてください。",
    "Count the TODO markers and list the files.",
    "Is the changelog up to date with the last tag?",
)
FOLLOW_UPS = (
    "Thanks. Anything else worth fixing?",
    "Now run the linter too.",
    "Bitte fasse die Änderungen kurz zusammen.",
)
#: (command, exit code, output)
COMMANDS = (
    ("git status --short", 0, " M src/app.py\n?? notes.md\n"),
    ("ls src | wc -l", 0, "7\n"),
    ("grep -rn TODO src | head -n 3", 0, "src/app.py:12:# TODO: retry\n"),
    ("python3 -m pytest -q tests 2>&1 | tail -n 2", 0, "3 passed in 0.41s\n"),
    ("cat missing.txt", 1, "cat: missing.txt: No such file or directory\n"),
    ("test -d build/output", 1, ""),
    ("ls nope", 2, "ls: cannot access 'nope': No such file or directory\n"),
    ("./run-tests.sh", 127, "bash: ./run-tests.sh: No such file or directory\n"),
    ('echo "naïve café — 日本語 ✅"', 0, "naïve café — 日本語 ✅\n"),
    ('for f in *.md; do head -n 1 "$f"; done', 0, "# Demo\n# Notes\n"),
    ("sed -n '1,20p' pyproject.toml | grep -c =", 0, "9\n"),
)
BASE_INSTRUCTIONS = "You are Codex, a coding agent. Keep the user informed and work carefully."
PERMISSIONS = (
    "<permissions instructions>\nFilesystem sandboxing defines which files can be read or "
    "written. `sandbox_mode` is `workspace-write`.\n</permissions instructions>"
)


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _usage(inp: int, cached: int, out: int, reasoning: int) -> Obj:
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": 0,
        "output_tokens": out,
        "reasoning_output_tokens": reasoning,
        "total_tokens": inp + out,
    }


@dataclass
class _Rollout:
    """One rollout file being written."""

    rng: random.Random
    thread: str
    cwd: str
    clock: datetime
    lines: list[bytes] = field(default_factory=list)
    total: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    context: int = 3000

    def tick(self, low: int = 5, high: int = 400) -> None:
        self.clock += timedelta(milliseconds=self.rng.randint(low, high))

    def add(self, kind: str, payload: Obj) -> int:
        ordinal = len(self.lines)
        record = {"timestamp": _ts(self.clock), "ordinal": ordinal, "type": kind}
        record["payload"] = payload
        self.lines.append(_ENCODE.encode(record))
        return ordinal

    def event(self, payload: Obj) -> int:
        return self.add("event_msg", payload)

    def item(self, turn: str, item: Obj) -> None:
        ms = int(self.clock.timestamp() * 1000)
        self.event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": turn,
                "item": item,
                "started_at_ms": ms - 20,
                "completed_at_ms": ms,
            }
        )

    def call_usage(self, turn: str) -> Obj:
        """A model call's usage (record now, token_count later)."""
        rng = self.rng
        self.context += rng.randint(150, 900)
        cached = (self.context // 128) * 128 - rng.choice((0, 128, 256))
        cached = max(0, min(cached, self.context - 64)) if self.total[0] else 0
        out = rng.randint(18, 420)
        usage = _usage(self.context, cached, out, rng.choice((0, 0, out // 3, out // 2)))
        self.add(
            "token_usage_record",
            {
                "thread_id": self.thread,
                "turn_id": turn,
                "session_id": self.thread,
                "response_id": f"resp_{rng.getrandbits(96):024x}",
                "usage": usage,
            },
        )
        return usage

    def token_count(self, usage: Obj, *, repeat: bool = False) -> None:
        if not repeat:
            for n, key in enumerate(
                ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
            ):
                self.total[n] += usage[key]
        total = _usage(self.total[0], self.total[1], self.total[2], self.total[3])
        info: Obj = {"total_token_usage": total, "last_token_usage": usage}
        info["model_context_window"] = 258400
        self.event({"type": "token_count", "info": info, "rate_limits": {"limit_id": "codex"}})


def _uuid7(rng: random.Random, moment: datetime) -> str:
    ms = int(moment.timestamp() * 1000)
    raw = (ms << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62)
    raw |= rng.getrandbits(62)
    return str(uuid.UUID(int=raw))


class _Session:
    """Writes one session (and its subagent child, if any)."""

    def __init__(self, rng: random.Random, index: int, scenario: str, root: Path) -> None:
        self.rng = rng
        self.scenario = scenario
        self.root = root
        start = _START + timedelta(days=index // 4, hours=index % 4 * 2, minutes=rng.randint(0, 59))
        project = PROJECTS[index % len(PROJECTS)]
        self.cwd = f"/home/dev/projects/{project}"
        thread = _uuid7(rng, start)
        self.out = _Rollout(rng, thread, self.cwd, start)
        self.model, self.effort = rng.choice(MODELS)
        self.files: list[Path] = []

    # -- structure ------------------------------------------------------------------------------

    def meta(self, out: _Rollout, extra: Obj | None = None) -> None:
        payload: Obj = {
            "session_id": out.thread,
            "id": out.thread,
            "timestamp": _ts(out.clock),
            "cwd": self.cwd,
            "originator": "codex_exec",
            "cli_version": "0.171.0",
            "source": "exec",
            "thread_source": "user",
            "model_provider": "openai",
            "base_instructions": {"text": BASE_INSTRUCTIONS},
        }
        payload.update(extra or {})
        out.add("session_meta", payload)

    def turn_start(self, out: _Rollout, first: bool) -> str:
        out.tick(300, 2000)
        turn = _uuid7(self.rng, out.clock)
        attribution = {"turn_id": turn, "turn_trigger": "exec", "root_turn_id": turn}
        out.event(
            {
                "type": "task_started",
                "turn_attribution": attribution,
                "turn_id": turn,
                "started_at": int(out.clock.timestamp()),
                "model_context_window": 258400,
                "collaboration_mode_kind": "default",
            }
        )
        if first:
            out.add("response_item", _message("developer", PERMISSIONS, "input_text"))
            env = (
                f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
                f"  <current_date>{out.clock.date()}</current_date>\n</environment_context>"
            )
            out.add("response_item", _message("user", env, "input_text"))
            out.add("world_state", {"full": True, "state": {"cwd": self.cwd}})
        settings = {"model": self.model, "reasoning_effort": self.effort}
        out.add(
            "turn_context",
            {
                "turn_id": turn,
                "cwd": self.cwd,
                "approval_policy": "never",
                "model": self.model,
                "effort": self.effort,
                "collaboration_mode": {"mode": "default", "settings": settings},
                "summary": "auto",
                "sandbox_policy": {"type": "workspace-write"},
            },
        )
        out.event({"type": "thread_settings_applied", "thread_id": out.thread})
        return turn

    def prompt(self, out: _Rollout, turn: str, text: str) -> None:
        out.tick()
        out.add("response_item", _message("user", text, "input_text"))
        content = [{"type": "text", "text": text, "text_elements": []}]
        out.item(
            turn, {"type": "UserMessage", "id": _uuid7(self.rng, out.clock), "content": content}
        )

    def say(self, out: _Rollout, turn: str, text: str, phase: str) -> None:
        out.tick(20, 900)
        mid = f"msg_{self.rng.getrandbits(96):024x}"
        item = {"type": "AgentMessage", "id": mid, "content": [{"type": "Text", "text": text}]}
        out.item(turn, {**item, "phase": phase})
        message = _message("assistant", text, "output_text")
        out.add("response_item", {**message, "id": mid, "phase": phase})

    def think(self, out: _Rollout, turn: str) -> None:
        out.tick(20, 600)
        rid = f"rs_{self.rng.getrandbits(96):024x}"
        summary = self.rng.choice(("**Inspecting the workspace**", "**Planning the checks**"))
        out.item(turn, {"type": "Reasoning", "id": rid, "summary_text": [summary]})
        out.add(
            "response_item",
            {
                "type": "reasoning",
                "id": rid,
                "summary": [{"type": "summary_text", "text": summary}],
                "content": None,
                "encrypted_content": f"gAAAAA{self.rng.getrandbits(128):032x}",
            },
        )

    def shell(self, out: _Rollout, turn: str, command: str, code: int, text: str) -> None:
        call = self._call(out, "exec_command", {"cmd": command, "workdir": self.cwd})
        usage = out.call_usage(turn)
        out.tick(10, 1500)
        secs = self.rng.random() * 0.3
        out.item(turn, _execution(call, command, self.cwd, code, text, secs))
        out.add("response_item", _output(call, _exec_text(self.rng, secs, code, text)))
        out.token_count(usage)

    def polled(self, out: _Rollout, turn: str) -> None:
        command = "sleep 3 && echo bundle-ready"
        args = {"cmd": command, "workdir": self.cwd, "yield_time_ms": 500}
        call = self._call(out, "exec_command", args)
        usage = out.call_usage(turn)
        out.tick(500, 520)
        session = self.rng.randint(1000, 99999)
        running = _exec_text(self.rng, 0.5, None, "", session=session)
        out.add("response_item", _output(call, running))
        out.token_count(usage)
        self.say(out, turn, "Still running; polling for completion.", "commentary")
        poll = self._call(out, "write_stdin", {"session_id": session, "chars": ""})
        usage = out.call_usage(turn)
        out.tick(2000, 2600)
        out.item(turn, _execution(call, command, self.cwd, 0, "bundle-ready\n", 2.9))
        out.add("response_item", _output(poll, _exec_text(self.rng, 2.3, 0, "bundle-ready\n")))
        out.token_count(usage)

    def patch(self, out: _Rollout, turn: str) -> None:
        out.tick()
        call = f"call_{self.rng.getrandbits(96):024x}"
        body = "*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+Ünïcödé ok\n*** End Patch\n"
        payload = {"type": "custom_tool_call", "status": "completed", "call_id": call}
        out.add("response_item", {**payload, "name": "apply_patch", "input": body})
        usage = out.call_usage(turn)
        out.tick()
        change: Obj = {"type": "FileChange", "id": call, "status": "completed"}
        change["changes"] = {f"{self.cwd}/notes.md": {"type": "add", "content": "# Notes\n"}}
        out.item(turn, change)
        text = (
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
        )
        out.add(
            "response_item",
            {**_output(call, text + "A notes.md\n"), "type": "custom_tool_call_output"},
        )
        out.token_count(usage)

    def _call(self, out: _Rollout, name: str, args: Obj) -> str:
        out.tick(20, 700)
        call = f"call_{self.rng.getrandbits(96):024x}"
        payload = {"type": "function_call", "status": "completed", "name": name}
        out.add("response_item", {**payload, "arguments": _json(args), "call_id": call})
        return call

    def complete(
        self, out: _Rollout, turn: str, answer: str | None, error: str | None = None
    ) -> None:
        out.tick()
        payload: Obj = {"type": "task_complete", "turn_id": turn, "last_agent_message": answer}
        if error is not None:
            payload["error"] = {"message": error, "codex_error_info": "other"}
        payload["duration_ms"] = self.rng.randint(300, 9000)
        out.event(payload)

    # -- scenarios ------------------------------------------------------------------------------

    def work_turn(self, out: _Rollout, first: bool, prompt: str, calls: int) -> str:
        turn = self.turn_start(out, first)
        self.prompt(out, turn, prompt)
        picks = self.rng.sample(COMMANDS, k=calls)
        for n, (command, code, text) in enumerate(picks):
            if self.rng.random() < 0.5:
                self.think(out, turn)
            if n and self.rng.random() < 0.6:
                self.say(out, turn, "Checking the next thing.", "commentary")
            self.shell(out, turn, command, code, text)
        answer = "Summary:\n" + "\n".join(f"- `{c}` → exit {code}" for c, code, _ in picks)
        self.say(out, turn, answer, "final_answer")
        usage = out.call_usage(turn)
        out.token_count(usage)
        if self.rng.random() < 0.4:
            out.token_count(usage, repeat=True)  # a rate-limit-only update
        self.complete(out, turn, answer)
        return turn

    def write(self) -> list[Path]:
        rng, out = self.rng, self.out
        self.meta(out)
        prompt = rng.choice(PROMPTS)
        kind = self.scenario
        if kind == "subagent":
            self.subagent_turn(prompt)
        else:
            self.work_turn(out, True, prompt, rng.randint(1, 4))
        if kind == "interrupt":
            self.interrupted_turn(out)
        elif kind == "failed":
            turn = self.turn_start(out, False)
            self.prompt(out, turn, rng.choice(FOLLOW_UPS))
            self.think(out, turn)
            self.shell(out, turn, *rng.choice(COMMANDS))
            self.complete(out, turn, None, "stream disconnected before completion")
        elif kind == "compaction":
            out.tick(1000, 3000)
            summary = "Summary of the work so far: the repo was inspected and tests ran."
            out.add("compacted", {"message": summary, "replacement_history": []})
            out.event({"type": "context_compacted"})
            self.work_turn(out, False, rng.choice(FOLLOW_UPS), 1)
        elif kind == "polled":
            turn = self.turn_start(out, False)
            self.prompt(out, turn, "Run the slow build step and report when it finishes.")
            self.polled(out, turn)
            self.say(out, turn, "The step finished and printed `bundle-ready`.", "final_answer")
            out.token_count(out.call_usage(turn))
            self.complete(out, turn, "The step finished and printed `bundle-ready`.")
        elif kind == "patch":
            turn = self.turn_start(out, False)
            self.prompt(out, turn, "Add a notes file.")
            self.patch(out, turn)
            self.say(out, turn, "Added `notes.md`.", "final_answer")
            out.token_count(out.call_usage(turn))
            self.complete(out, turn, "Added `notes.md`.")
        elif rng.random() < 0.5:
            self.work_turn(out, False, rng.choice(FOLLOW_UPS), rng.randint(0, 3))
        self.files.append(self.save(out))
        return self.files

    def interrupted_turn(self, out: _Rollout) -> None:
        turn = self.turn_start(out, False)
        self.prompt(out, turn, "Start the data import job.")
        command = "for i in $(seq 1 30); do sleep 1; done; echo finished"
        call = self._call(out, "exec_command", {"cmd": command, "yield_time_ms": 30000})
        usage = out.call_usage(turn)
        out.tick(1500, 2500)
        out.add("response_item", _output(call, "Wall time: 1.9 seconds\naborted by user"))
        out.token_count(usage)
        notice = (
            "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"
        )
        out.add("response_item", _message("user", notice, "input_text"))
        out.event({"type": "turn_aborted", "turn_id": turn, "reason": "interrupted"})
        out.item(turn, _execution(call, command, self.cwd, -1, "", 1.8, status="failed"))

    def subagent_turn(self, prompt: str) -> None:
        out, rng = self.out, self.rng
        turn = self.turn_start(out, True)
        self.prompt(out, turn, prompt)
        task = "Count the TODO markers under src/ and report the number."
        spawn_args = {"agent_type": "worker", "fork_context": True, "message": task}
        call = self._call(out, "spawn_agent", spawn_args)
        replayed = len(out.lines)  # the child copies the parent's history up to here
        usage = out.call_usage(turn)
        out.tick()
        child = _Rollout(rng, _uuid7(rng, out.clock), self.cwd, out.clock)
        child.total = list(out.total)
        child.context = out.context
        out.add(
            "response_item", _output(call, _json({"agent_id": child.thread, "nickname": "Noether"}))
        )
        out.token_count(usage)
        self.child(child, replayed, task)
        out.clock = max(out.clock, child.clock)
        report = _json({"agent_path": child.thread, "status": {"completed": "3 TODO markers."}})
        note = f"<subagent_notification>\n{report}\n</subagent_notification>"
        out.add("response_item", _message("user", note, "input_text"))
        answer = "The helper found 3 TODO markers."
        self.say(out, turn, answer, "final_answer")
        out.token_count(out.call_usage(turn))
        self.complete(out, turn, answer)

    def child(self, child: _Rollout, replayed: int, task: str) -> None:
        parent = self.out
        spawn = {"parent_thread_id": parent.thread, "depth": 1, "agent_nickname": "Noether"}
        self.meta(
            child,
            {
                "thread_source": "subagent",
                "parent_thread_id": parent.thread,
                "forked_from_id": parent.thread,
                "source": {"subagent": {"thread_spawn": {**spawn, "agent_role": "worker"}}},
                "agent_nickname": "Noether",
                "agent_role": "worker",
                "subagent_history_start_ordinal": replayed + 1,
            },
        )
        child.lines.extend(_renumber(parent.lines[:replayed], 1))
        turn = self.turn_start(child, False)
        self.prompt(child, turn, task)
        self.shell(child, turn, "grep -rn TODO src | wc -l", 0, "3\n")
        self.say(child, turn, "3 TODO markers.", "final_answer")
        child.token_count(child.call_usage(turn))
        self.complete(child, turn, "3 TODO markers.")
        self.files.append(self.save(child))

    def save(self, out: _Rollout) -> Path:
        first = datetime.fromisoformat(
            msgspec.json.decode(out.lines[0])["timestamp"].replace("Z", "+00:00")
        )
        folder = self.root / "sessions" / first.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-{first.strftime('%Y-%m-%dT%H-%M-%S')}-{out.thread}.jsonl"
        path.write_bytes(b"\n".join(out.lines) + b"\n")
        return path


def _json(value: Any) -> str:
    return _ENCODE.encode(value).decode()


def _message(role: str, text: str, kind: str) -> Obj:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _output(call: str, text: str) -> Obj:
    return {"type": "function_call_output", "call_id": call, "output": text}


def _exec_text(
    rng: random.Random, secs: float, code: int | None, text: str, session: int | None = None
) -> str:
    status = (
        f"Process running with session ID {session}"
        if session is not None
        else f"Process exited with code {code}"
    )
    tokens = (len(text) + 3) // 4
    return (
        f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: {secs:.4f} seconds\n{status}\n"
        f"Original token count: {tokens}\nOutput:\n{text}"
    )


def _execution(
    call: str, command: str, cwd: str, code: int, text: str, secs: float, status: str = ""
) -> Obj:
    whole = int(secs)
    return {
        "type": "CommandExecution",
        "id": call,
        "command": ["/bin/bash", "-lc", command],
        "cwd": f"file://{cwd}",
        "source": "unified_exec_startup",
        "status": status or ("completed" if code == 0 else "failed"),
        "aggregated_output": text,
        "exit_code": code,
        "duration": {"secs": whole, "nanos": int((secs - whole) * 1e9)},
    }


def _renumber(lines: list[bytes], first: int) -> list[bytes]:
    """Parent lines copied into a child rollout, with the child's ordinals."""
    out = []
    for n, raw in enumerate(lines):
        record = msgspec.json.decode(raw)
        record["ordinal"] = first + n
        out.append(_ENCODE.encode(record))
    return out


SCENARIOS = ("failing", "interrupt", "failed", "subagent", "compaction", "polled", "patch")


def generate(root: Path, *, sessions: int = 12, seed: int = 0) -> list[Path]:
    """Write `sessions` Codex sessions (plus subagent children) under `root`; sorted paths."""
    rng = random.Random(seed)
    paths: list[Path] = []
    for index in range(sessions):
        if index < len(SCENARIOS):
            scenario = SCENARIOS[index]
        else:
            scenario = rng.choice(SCENARIOS + ("plain",) * 5)
        session_rng = random.Random(rng.getrandbits(64))
        paths.extend(_Session(session_rng, index, scenario, Path(root)).write())
    return sorted(paths)
