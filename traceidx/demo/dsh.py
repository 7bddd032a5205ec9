"""Generate a deterministic demo corpus of dsh (DeepSeek Harness) session logs (no network).

The files imitate what dsh 0.1.0-rc.8 writes (format v0, the newest runtime-written logs of the
corpus), modelled on the generated rc.8 logs:

* layout ``<root>/sessions/--<cwd with "/" as "-">--/<session id>/session.jsonl.zstd``: several
  independent, checksummed zstd frames end to end, the first holding only the header line and
  one more per durable write batch (events coalesced over ~200 ms, as the JSONL backend does);
* header ``{"type": "session", "version": 0, "id", "createdAt", "cwd", "delegationDepth",
  "agentPreset"}``; events ``{type, seq, time, data}`` with contiguous seqs; runs of deltas of
  one block are packed rows (``text-chunks``, ``reasoning-chunks``, ``tool-call-chunks``);
* per turn: ``agent/inbox/spliced`` claims, ``turn/start`` … ``turn/end {reason}``; per step:
  ``step/start``, the prompt and runtime-context ``user/message`` events, ``request/header`` /
  ``request/context``, streamed ``assistant/chunk`` events (``usage`` and ``finish``), the
  assembled ``assistant/message`` (with ``sourceEventSeqs`` and the same ``usage``),
  ``tool/call`` and the user-role ``tool-result`` wrapper of each ``tool/result``, ``step/end``;
* bash results as dsh renders them (``[stderr]`` sections, a trailing ``[exit code: N]`` line
  with ``isError`` false, ``(no output)``); aborted calls ``Error: tool call aborted`` with
  ``error: {name: "AbortError", code: "ABORTED"}``.

Scenarios (seeded rates; the first sessions each showcase one so a small corpus has them all):
failing shell commands, file edits that fail, mid-turn steering (web ``next-step`` inbox),
interrupts (``aborted``), provider errors retried (``llm/retry``) or fatal (``turn/end``
``error``), foreground and background subagents (child logs with ``parentSession``, the
``subagent-settled`` notice opening a parent turn), automatic compaction (``compaction/*`` with
the summariser's usage and a replacing checkpoint message), a resumed session (an untagged
``session/end-seed`` mid-file), a crash tail (no ``turn/end``), outputs over 70 KiB and
non-ASCII text. Projects, prompts and people are invented.
"""

from __future__ import annotations

import calendar
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import zstandard

from traceidx.demo.shape import long_indexes

Obj = dict[str, Any]

BASE_MS = calendar.timegm((2026, 9, 1, 8, 0, 0, 0, 0, 0)) * 1000
SPAN_DAYS = 75
DAY_MS = 86_400_000
BATCH_MS = 200
PROVIDER = "deepseek-official"
MODELS = ("deepseek-v4-flash", "deepseek-v4-flash", "deepseek-v4-pro")
EFFORTS = ("high", "high", "max")

RATES = {
    "steering": 0.08,
    "interrupt": 0.05,
    "retry": 0.06,
    "fatal": 0.03,
    "subagent": 0.08,
    "background": 0.05,
    "compaction": 0.06,  # per turn, at most once per session
    "resume": 0.15,  # per later turn
    "crash": 0.02,  # per session: the log ends inside the last turn
    "long_output": 0.01,  # per bash call
    "edit_failure": 0.2,  # per edit call
}
SHOWCASE = (
    "steering",
    "interrupt",
    "subagent",
    "compaction",
    "retry",
    "background",
    "fatal",
    "crash",
    "long_output",
)

_ENCODER = msgspec.json.Encoder()

PROJECTS = (
    "lantern-api",
    "quill",
    "orchard-etl",
    "moss-ui",
    "tidepool",
    "brambling",
    "kestrel-cli",
    "saffron",
)
PROMPTS = (
    "Run the test suite and tell me what fails.",
    "Take a look around this repository and summarise its layout.",
    "Why does the build print a deprecation warning?",
    "Add a --verbose flag to the command line entry point.",
    "Check whether the config loader handles missing files.",
    "请检查一下最近的提交记录，并总结改动。",
    "Prüfe bitte, ob alle Abhängigkeiten aktuell sind.",
    "Count the lines of Python code per package.",
    "テストが失敗している理由を調べてください。",
    "Make the README mention how to run the linter.",
)
FOLLOWUPS = (
    "Thanks. Can you also check the docs folder?",
    "Try the failing command again and explain the exit code.",
    "好的，请再确认一下 git 状态。",
    "Now write a short summary for the changelog.",
)
STEERING = (
    "Oh, and please also show the current git branch.",
    "Skip the slow tests for now.",
    "顺便看一下 README 的最后一行。",
)
REASONING = (
    "Start with something cheap: look at the repository state.",
    "The previous command failed; that is expected for a missing path. Continue.",
    "I have enough information now; summarise for the user.",
    "先看看仓库的结构，再决定下一步。",
)
COMMENTARY = ("Let me check that.", "Running the next check.", "Looking at the files first.")
FINALS = (
    "Ran {n} commands. Everything succeeded.",
    "Done: {n} checks ran; see the notes above. ✅",
    "好的，已经完成 {n} 个步骤。",
    "The repository looks healthy; {n} commands ran.",
)
ERRORS = (
    ("Internal server error", "SERVER", 500),
    ("Rate limited", "RATE_LIMIT", 429),
    ("Service Unavailable", "SERVER", 503),
)
RUNTIME_CONTEXT = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n"
    "Current DSH file policy: workspace-write. Any available operation enforced by the DSH "
    'file sandbox may modify files under the session workspace: "{cwd}".\n\n'
    "Approval policy: ask."
)
CHECKPOINT = (
    "This is an automatically generated checkpoint condensing an earlier span of the "
    "conversation to free up context. Continue the task directly from the messages that follow."
    "\n\n<compacted-summary>"
)


@dataclass(frozen=True)
class _Shell:
    command: str
    description: str
    stdout: str = ""
    stderr: str = ""
    code: int = 0

    def render(self) -> str:
        """The result text dsh's bash tool returns."""
        parts = [self.stdout] if self.stdout else []
        if self.stderr:
            parts.append("[stderr]\n" + self.stderr)
        text = "".join(parts) if parts else ("(no output)\n" if self.code else "")
        if self.code:
            return text + f"[exit code: {self.code}]"
        return text or "(no output)"


def _shells(project: str) -> tuple[_Shell, ...]:
    return (
        _Shell(
            "git status --short && git log --oneline | head -3",
            "Show git state",
            "a1b2c3d Initial commit\n",
        ),
        _Shell("ls -1 src", "List the sources", f"{project.replace('-', '_')}\ncli.py\n"),
        _Shell(
            "grep -rn 'TODO' src | head -5",
            "Find TODO notes",
            "src/cli.py:12: # TODO: handle --verbose\n",
        ),
        _Shell(
            "test -d docs || (echo 'no docs directory' >&2; exit 2)",
            "Require docs",
            stderr="no docs directory\n",
            code=2,
        ),
        _Shell(
            "no-such-tool --version",
            "Check a tool version",
            stderr="bash: line 1: no-such-tool: command not found\n",
            code=127,
        ),
        _Shell("grep -q 'no such text' README.md", "Look for a phrase", code=1),
        _Shell(
            "python -m pytest -q 2>&1 | tail -3", "Run the tests", "3 passed, 1 failed in 0.42s\n"
        ),
        _Shell(
            "wc -l src/*.py | sort -n | tail -2", "Count lines", "  88 src/cli.py\n 214 total\n"
        ),
        _Shell("cat <<EOF | wc -l\nalpha\nbeta\nEOF", "Count heredoc lines", "2\n"),
        _Shell(
            "printf '%s\\n' 'naïve café' '日本語' | sort",
            "Sort non-ASCII words",
            "naïve café\n日本語\n",
        ),
    )


@dataclass
class _Log:
    """One session log under construction: encoded lines, their times, and the seq counter."""

    header: Obj
    t: int
    lines: list[tuple[int, bytes]] = field(default_factory=list)
    seq: int = 0

    def add(self, kind: str, data: Any, dt: int = 1, **extra: Any) -> int:
        self.t += dt
        seq = self.seq
        self.lines.append(
            (
                self.t,
                _ENCODER.encode({"type": kind, "seq": seq, "time": self.t, "data": data, **extra}),
            )
        )
        self.seq += 1
        return seq

    def packed(self, kind: str, data: Obj, pieces: list[str], rng: random.Random) -> list[int]:
        """A packed row of N deltas (seq0..seq0+N-1), or single chunks for short runs."""
        if len(pieces) < 3:
            key = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}.get(kind)
            seqs = []
            for piece in pieces:
                chunk = (
                    {"type": key, "index": data["index"], "text": piece}
                    if key
                    else {
                        "type": "tool-call-delta",
                        "index": data["index"],
                        "id": data["id"],
                        "name": data["name"],
                        "argumentsDelta": piece,
                    }
                )
                seqs.append(
                    self.add(
                        "assistant/chunk",
                        {"turn": data["turn"], "step": data["step"], "chunk": chunk},
                    )
                )
            return seqs
        self.t += 2
        dts = [rng.randint(0, 12) for _ in pieces[1:]]
        member = "args" if kind == "tool-call-chunks" else "texts"
        row = {
            "type": kind,
            "seq0": self.seq,
            "time0": self.t,
            "data": {**data, "dt": dts, member: pieces},
        }
        self.lines.append((self.t, _ENCODER.encode(row)))
        self.t += sum(max(d, 0) for d in dts)
        seqs = list(range(self.seq, self.seq + len(pieces)))
        self.seq += len(pieces)
        return seqs

    def frames(self) -> bytes:
        """The file: a header frame, then one frame per write batch (~200 ms)."""
        compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
        out = [compressor.compress(_ENCODER.encode(self.header) + b"\n")]
        batch: list[bytes] = []
        start = None
        for t, line in self.lines:
            if batch and (start is None or t - start > BATCH_MS or len(batch) >= 256):
                out.append(compressor.compress(b"\n".join(batch) + b"\n"))
                batch = []
            if not batch:
                start = t
            batch.append(line)
        if batch:
            out.append(compressor.compress(b"\n".join(batch) + b"\n"))
        return b"".join(out)


def _pieces(text: str, rng: random.Random) -> list[str]:
    out, at = [], 0
    while at < len(text):
        n = rng.randint(2, 9)
        out.append(text[at : at + n])
        at += n
    return out or [""]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _call_id(rng: random.Random) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    return "call_00_" + "".join(rng.choices(alphabet, k=24))


def _text(value: str) -> list[Obj]:
    return [{"type": "text", "text": value}]


class _SessionGen:
    """One top-level session (and the subagent children it starts)."""

    def __init__(self, rng: random.Random, index: int, root: Path, long: bool = False) -> None:
        self.rng = rng
        self.long = long  # a long working session: many turns of many steps
        self.index = index
        self.root = root
        self.project = rng.choice(PROJECTS)
        self.cwd = f"/home/demo/projects/{self.project}"
        self.shells = _shells(self.project)
        self.model = rng.choice(MODELS)
        self.effort = rng.choice(EFFORTS)
        self.showcase = SHOWCASE[index] if index < len(SHOWCASE) else None
        self.cache = 0
        self.compacted = False
        self.used: set[str] = set()
        self.pending_settlement: tuple[str, str] | None = None
        self.files: list[tuple[str, _Log]] = []

    def wants(self, scenario: str) -> bool:
        """Whether a scenario happens here: once for the session's showcase, else by rate."""
        if self.showcase == scenario and scenario not in self.used:
            self.used.add(scenario)
            return True
        return self.rng.random() < RATES[scenario]

    # -- building blocks ---------------------------------------------------------------------

    def new_log(self, session_id: str, start: int, **extra: Any) -> _Log:
        header = {
            "type": "session",
            "version": 0,
            "id": session_id,
            "createdAt": start,
            "cwd": self.cwd,
            "delegationDepth": 0,
            **extra,
            "agentPreset": "standard",
        }
        return _Log(header, start)

    def usage(self, output: int, reasoning: bool) -> Obj:
        fresh = self.rng.randint(150, 2500) if self.cache else self.rng.randint(4000, 9000)
        usage: Obj = {"inputTokens": fresh, "outputTokens": output, "cacheReadTokens": self.cache}
        if reasoning:
            usage["reasoningTokens"] = self.rng.randint(5, max(6, output // 2))
        self.cache += fresh - fresh % 64
        return usage

    def step_message(
        self,
        log: _Log,
        turn: int,
        step: int,
        *,
        reasoning: str | None,
        text: str | None,
        calls: list[tuple[str, str, str]],
        finish: str,
        interrupted: bool = False,
    ) -> None:
        """Streamed chunks, then the assembled assistant/message (chunk seqs as provenance)."""
        rng, seqs, content = self.rng, [], []
        blocks: list[tuple[str, Obj]] = []
        if reasoning:
            blocks.append(("reasoning", {"type": "reasoning", "text": reasoning}))
        if text:
            blocks.append(("text", {"type": "text", "text": text}))
        for call_id, name, args in calls:
            blocks.append(
                ("tool-call", {"type": "tool-call", "id": call_id, "name": name, "arguments": args})
            )
        base = {"turn": turn, "step": step}
        for index, (kind, block) in enumerate(blocks):
            start = {"type": "block-start", "index": index, "blockType": kind}
            seqs.append(log.add("assistant/chunk", {**base, "chunk": start}, rng.randint(40, 300)))
            if kind == "tool-call":
                row = {**base, "index": index, "id": block["id"], "name": block["name"]}
                seqs += log.packed("tool-call-chunks", row, _pieces(block["arguments"], rng), rng)
            else:
                row = {**base, "index": index}
                seqs += log.packed(f"{kind}-chunks", row, _pieces(block["text"], rng), rng)
        for index, (_, block) in enumerate(blocks):
            end = {"type": "block-end", "index": index, "block": block}
            seqs.append(log.add("assistant/chunk", {**base, "chunk": end}))
            content.append(block)
        output = sum(len(str(b.get("text", b.get("arguments", "")))) for _, b in blocks) // 4 + 9
        usage = self.usage(output, reasoning is not None and rng.random() < 0.6)
        seqs.append(
            log.add("assistant/chunk", {**base, "chunk": {"type": "usage", "usage": usage}})
        )
        seqs.append(
            log.add(
                "assistant/chunk", {**base, "chunk": {"type": "finish", "reason": {"kind": finish}}}
            )
        )
        source = {"kind": "model", "provider": PROVIDER, "model": self.model}
        message = {"role": "assistant", "content": content, "source": source, "id": _uuid(rng)}
        data: Obj = {**base, "message": message, "usage": usage}
        if interrupted:
            data["interrupted"] = True
        log.add("assistant/message", data, sourceEventSeqs=seqs, surfaceOp="append")

    def result(
        self,
        log: _Log,
        turn: int,
        step: int,
        call_id: str,
        text: str,
        error: Obj | None = None,
        dt: int = 20,
    ) -> None:
        block = {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": _text(text),
            "isError": error is not None,
        }
        message = {
            "source": {"kind": "tool", "callId": call_id},
            "content": [block],
            "role": "user",
            "id": _uuid(self.rng),
        }
        data: Obj = {"turn": turn, "step": step, "message": message}
        if error is not None:
            data["error"] = error
        log.add("tool/result", data, dt, sourceEventSeqs=[log.seq - 1], surfaceOp="append")

    def prompt(self, log: _Log, text: str, source: Obj, target: str = "next-turn") -> Obj:
        message = {"content": _text(text), "source": source, "role": "user", "id": _uuid(self.rng)}
        log.add(
            "agent/inbox/spliced",
            {"target": target, "start": 0, "inserted": [message]},
            self.rng.randint(200, 4000),
        )
        return message

    def request(self, log: _Log, reason: str, first: bool) -> None:
        config = {
            "provider": PROVIDER,
            "model": self.model,
            "maxTokens": 256000,
            "reasoningEffort": self.effort,
        }
        log.add(
            "request/header",
            {
                "header": {
                    "config": config,
                    "system": "You are an AI agent powered by DeepSeek Harness.",
                },
                "reason": reason,
            },
        )
        if first:
            log.add(
                "request/context",
                {"provider": PROVIDER, "model": self.model, "contextWindow": 1000000},
            )

    # -- a turn ------------------------------------------------------------------------------

    def turn(
        self,
        log: _Log,
        number: int,
        message: Obj,
        *,
        first: bool,
        child: bool = False,
        last: bool = False,
    ) -> tuple[str | None, bool]:
        """One turn: (its final text, whether it ended); a crash leaves it open."""
        rng = self.rng
        log.add("turn/start", {"turn": number})
        log.add(
            "agent/inbox/spliced",
            {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []},
        )
        if child:
            steps = rng.randint(1, 2)
        else:
            steps = rng.randint(3, 10) if self.long else rng.randint(0, 3)
        top = not child
        if top and last and self.showcase == "crash":
            steps = max(steps, 1)
        interrupt = top and steps > 0 and self.wants("interrupt")
        crash = top and last and steps > 0 and not interrupt and self.wants("crash")
        fatal = top and not interrupt and not crash and self.wants("fatal")
        steer = top and steps > 0 and not interrupt and self.wants("steering")
        compaction = top and steps > 0 and not self.compacted and self.wants("compaction")
        delegate = top and not interrupt and not crash and not fatal and self.wants("subagent")
        background = top and not delegate and not interrupt and not crash and not fatal
        background = background and self.wants("background")
        commands, steering, delegated = 0, None, False
        step = 0
        while True:
            step += 1
            log.add("step/start", {"turn": number, "step": step}, rng.randint(5, 30))
            if step == 1:
                self.opening(log, message, first and top)
            if steering is not None:
                log.add(
                    "agent/inbox/spliced",
                    {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []},
                )
                log.add("user/message", steering, surfaceOp="append")
                steering = None
            self.request(log, "initial" if first and step == 1 else "change", first and step == 1)
            if self.wants("retry"):
                self.retry(log, number, step)
            if step <= steps:
                stop = interrupt or crash if step == steps else False
                commands += self.tool_step(log, number, step, interrupt and stop, crash and stop)
                if crash and stop:
                    return None, False  # the process died: no tool/result, no turn/end
                if interrupt and stop:
                    log.add("step/end", {"turn": number, "step": step})
                    log.add(
                        "turn/end",
                        {"turn": number, "reason": {"kind": "aborted", "reason": {"kind": "user"}}},
                    )
                    return None, True
                if steer and step == 1:
                    text = rng.choice(STEERING)
                    steering = self.prompt(
                        log, text, {"kind": "user", "rpcId": _uuid(rng)}, "next-step"
                    )
                if compaction and step == steps:
                    self.compact(log, number)
            elif (delegate or background) and not delegated:
                self.delegate(log, number, step, background)
                delegated = True
            elif fatal:
                failure = {"message": "Internal server error", "code": "SERVER", "status": 500}
                log.add(
                    "assistant/chunk",
                    {
                        "turn": number,
                        "step": step,
                        "chunk": {
                            "type": "finish",
                            "reason": {"kind": "error", "failure": failure},
                        },
                    },
                    300,
                )
                log.add("step/end", {"turn": number, "step": step})
                log.add("turn/end", {"turn": number, "reason": {"kind": "error", "error": failure}})
                return None, True
            else:
                if delegated:
                    text = (
                        "The survey runs in the background; I will report when it is done."
                        if background
                        else "The subagent reports back: all checks ran."
                    )
                else:
                    text = rng.choice(FINALS).format(n=commands)
                self.final(log, number, step, text)
                log.add("turn/end", {"turn": number, "reason": {"kind": "completed"}})
                return text, True
            log.add("step/end", {"turn": number, "step": step})

    def opening(self, log: _Log, message: Obj, titled: bool) -> None:
        """The claimed prompt and the runtime-context snapshot of a turn's first step."""
        log.add("user/message", message, surfaceOp="append")
        context = RUNTIME_CONTEXT.format(cwd=self.cwd)
        source = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot"}
        log.add(
            "user/message",
            {"content": _text(context), "source": source, "role": "user", "id": _uuid(self.rng)},
            surfaceOp="append",
        )
        if titled:
            title = " ".join(message["content"][0]["text"].split()[:4])
            log.add(
                "session/title",
                {"title": title, "messageSeqs": [log.seq - 2], "source": {"kind": "fallback"}},
            )

    def retry(self, log: _Log, number: int, step: int) -> None:
        """A provider failure before any output, retried once."""
        text, code, status = self.rng.choice(ERRORS)
        failure = {"message": text, "code": code, "status": status}
        log.add(
            "assistant/chunk",
            {
                "turn": number,
                "step": step,
                "chunk": {"type": "finish", "reason": {"kind": "error", "failure": failure}},
            },
            250,
        )
        retry_id = _uuid(self.rng)
        log.add(
            "llm/retry",
            {
                "retryId": retry_id,
                "turn": number,
                "step": step,
                "provider": PROVIDER,
                "mode": "normal",
                "retry": 1,
                "maxRetries": 5,
                "delayMs": 1000,
                "failure": failure,
            },
        )
        log.add(
            "llm/retry-started",
            {"retryId": retry_id, "turn": number, "step": step, "retry": 1},
            1000,
        )

    def final(self, log: _Log, number: int, step: int, text: str) -> None:
        reasoning = self.rng.choice(REASONING) if self.rng.random() < 0.6 else None
        self.step_message(
            log, number, step, reasoning=reasoning, text=text, calls=[], finish="stop"
        )
        log.add("step/end", {"turn": number, "step": step})

    def tool_step(
        self, log: _Log, number: int, step: int, interrupt: bool, crash: bool = False
    ) -> int:
        rng = self.rng
        if not interrupt and not crash and rng.random() < 0.25:
            return self.file_step(log, number, step)
        shells = rng.sample(self.shells, rng.randint(1, 2))
        if interrupt or crash:
            shells = [
                _Shell("for i in 1 2 3 4 5; do echo tick $i; sleep 3; done", "Run the slow ticks")
            ]
        long_output = not interrupt and self.wants("long_output")
        if long_output:
            shells = [
                _Shell(
                    "yes 'log: all systems nominal' | head -n 3200",
                    "Print the log",
                    "log: all systems nominal\n" * 3200,
                )
            ]
        calls = [
            (
                _call_id(rng),
                "bash",
                msgspec.json.encode({"command": s.command, "description": s.description}).decode(),
            )
            for s in shells
        ]
        commentary = rng.choice(COMMENTARY) if rng.random() < 0.5 else None
        reasoning = rng.choice(REASONING) if rng.random() < 0.5 else None
        self.step_message(
            log,
            number,
            step,
            reasoning=reasoning,
            text=commentary,
            calls=calls,
            finish="tool-calls",
        )
        for (call_id, name, args), shell in zip(calls, shells, strict=True):
            log.add(
                "tool/call",
                {"turn": number, "step": step, "callId": call_id, "name": name, "arguments": args},
            )
            if crash:
                continue
            if interrupt:
                error = {"name": "AbortError", "code": "ABORTED"}
                self.result(log, number, step, call_id, "Error: tool call aborted", error, 2500)
            else:
                self.result(log, number, step, call_id, shell.render(), dt=rng.randint(8, 900))
        return len(calls)

    def file_step(self, log: _Log, number: int, step: int) -> int:
        rng = self.rng
        path = f"{self.cwd}/README.md"
        if rng.random() < 0.5:
            name, args = "read", {"file_path": path}
            text, error = f"# {self.project}\n\nA demo project.\n", None
        else:
            name = "edit"
            args = {
                "file_path": path,
                "old_string": "A demo project.",
                "new_string": "A demo project. Run `make lint` before committing.",
            }
            if rng.random() < RATES["edit_failure"] or self.showcase == "interrupt":
                text = f"Error: old_string not found in {path}"
                error = {"name": "FsError", "code": "FS_EDIT_NOT_FOUND"}
            else:
                text, error = f"Edited {path} (1 replacement).", None
        call_id = _call_id(rng)
        encoded = msgspec.json.encode(args).decode()
        self.step_message(
            log,
            number,
            step,
            reasoning=None,
            text=None,
            calls=[(call_id, name, encoded)],
            finish="tool-calls",
        )
        log.add(
            "tool/call",
            {"turn": number, "step": step, "callId": call_id, "name": name, "arguments": encoded},
        )
        self.result(log, number, step, call_id, text, error)
        return 1

    def compact(self, log: _Log, number: int) -> None:
        compaction_id = _uuid(self.rng)
        summary = (
            "## Primary Request and Intent\n- Check the repository.\n\n## Current Work\n"
            "- Ran the first commands; 日本語 notes kept."
        )
        log.add("compaction/start", {"compactionId": compaction_id, "turn": number})
        usage = {
            "inputTokens": self.rng.randint(150, 400),
            "outputTokens": 40,
            "cacheReadTokens": self.cache,
        }
        log.add(
            "compaction/summary",
            {
                "compactionId": compaction_id,
                "summary": _text(summary),
                "rawOutput": _text(summary),
                "llmStreamCall": True,
                "shadowedRange": {"start": 7, "end": log.seq - 2},
                "shadowedSeqs": [7, 8],
                "shadowedTokenCount": self.cache // 2,
                "provider": PROVIDER,
                "model": self.model,
                "maxTokens": 8192,
                "usage": usage,
            },
            350,
        )
        source = {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id}
        content = [*_text(CHECKPOINT), *_text(summary), *_text("</compacted-summary>")]
        log.add(
            "user/message",
            {"content": content, "source": source, "role": "user", "id": _uuid(self.rng)},
            surfaceOp={"op": "replace", "start": 7, "end": 8},
            sourceEventSeqs=[7, 8],
        )
        log.add("compaction/end", {"compactionId": compaction_id, "turn": number})
        self.cache //= 3
        self.compacted = True

    def delegate(self, log: _Log, number: int, step: int, background: bool) -> None:
        rng = self.rng
        task = "Sub-task: survey the repository (files, git history) and report briefly."
        args = {"description": "Repository survey", "prompt": task, "run_in_background": background}
        call_id = _call_id(rng)
        encoded = msgspec.json.encode(args).decode()
        self.step_message(
            log,
            number,
            step,
            reasoning="Delegate the survey to a subagent.",
            text="I'll delegate this to a subagent.",
            calls=[(call_id, "subagent", encoded)],
            finish="tool-calls",
        )
        log.add(
            "tool/call",
            {
                "turn": number,
                "step": step,
                "callId": call_id,
                "name": "subagent",
                "arguments": encoded,
            },
        )
        child_id = _uuid(rng)
        answer = self.child(child_id, log.header["id"], log.t + 5, task, background)
        text = f"started subagent {child_id}" if background else answer
        self.result(log, number, step, call_id, text, dt=25 if background else 1500)
        if background:
            self.pending_settlement = (child_id, answer)

    def child(self, child_id: str, parent: str, start: int, task: str, background: bool) -> str:
        log = self.new_log(
            child_id, start, parentSession=parent, origin="subagent", delegationDepth=1
        )
        mode = "continuable" if background else "one-shot"
        log.add(
            "subagent/descriptor",
            {"version": 2, "mode": mode, "provider": "spawn", "label": "Repository survey"},
            0,
        )
        log.add("session/end-seed", {})
        log.add("sandbox/mode", {"mode": "workspace-write", "source": "delegation"})
        log.add("approval/policy", {"policy": "never", "source": "delegation"})
        saved = self.cache
        self.cache = 0
        message = self.prompt(log, task, {"kind": "user"})
        answer = self.turn(log, 1, message, first=True, child=True)[0] or ""
        self.cache = saved
        self.files.append((child_id, log))
        return answer

    # -- the session ---------------------------------------------------------------------------

    def run(self) -> None:
        rng = self.rng
        session_id = f"session-{_uuid(rng)}"
        start = BASE_MS + rng.randrange(SPAN_DAYS * DAY_MS)
        log = self.new_log(session_id, start)
        log.add("permission/preset", {"preset": "workspace-write"}, 150)
        log.add("sandbox/mode", {"mode": "workspace-write"})
        log.add("approval/policy", {"policy": "ask"})
        turns = rng.randint(8, 20) if self.long else rng.randint(1, 3)
        for number in range(1, turns + 1):
            if number > 1 and rng.random() < RATES["resume"]:
                log.add("session/end-seed", {}, rng.randint(60_000, 3_600_000))
            text = rng.choice(PROMPTS) if number == 1 else rng.choice(FOLLOWUPS)
            message = self.prompt(log, text, {"kind": "user", "rpcId": _uuid(rng)})
            _, ended = self.turn(log, number, message, first=number == 1, last=number == turns)
            if not ended:
                break  # a crash tail ends the log
            if self.pending_settlement is not None:
                child_id, answer = self.pending_settlement
                self.pending_settlement = None
                notice = f"Background subagent {child_id} finished."
                source = {
                    "kind": "subagent-settled",
                    "form": "notice",
                    "summary": notice,
                    "senderSessionId": child_id,
                }
                settled = {
                    "content": [*_text(notice), *_text("Its closing message:"), *_text(answer)],
                    "source": source,
                    "role": "user",
                    "id": _uuid(rng),
                }
                log.add(
                    "agent/inbox/spliced",
                    {"target": "next-turn", "start": 0, "inserted": [settled]},
                    900,
                )
                number_ = number + 1
                log.add("turn/start", {"turn": number_})
                log.add("step/start", {"turn": number_, "step": 1})
                log.add("user/message", settled, surfaceOp="append")
                self.request(log, "change", False)
                self.final(log, number_, 1, "The background survey finished: all fine.")
                log.add("turn/end", {"turn": number_, "reason": {"kind": "completed"}})
                break
        self.files.append((session_id, log))

    def write(self) -> list[Path]:
        project_dir = self.root / "sessions" / ("--" + self.cwd.replace("/", "-").strip("-") + "--")
        paths = []
        for session_id, log in self.files:
            path = project_dir / session_id / "session.jsonl.zstd"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(log.frames())
            paths.append(path)
        return paths


def generate(
    root: Path, *, sessions: int = 12, seed: int = 0, long_sessions: bool = True
) -> list[Path]:
    """Write `sessions` top-level dsh sessions (plus their subagent children) under `root`;
    return the session log paths (sorted)."""
    rng = random.Random(seed)
    long = long_indexes("dsh", seed, sessions, long_sessions)
    paths: list[Path] = []
    for index in range(sessions):
        gen = _SessionGen(rng, index, Path(root), index in long)
        gen.run()
        paths.extend(gen.write())
    return sorted(paths)
