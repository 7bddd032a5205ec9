"""Generate a deterministic demo corpus of Pi coding agent sessions (format v3, no network).

The files imitate what pi 0.73.1 writes (the newest real files of the corpus): layout
``<root>/sessions/--<cwd with "/" as "-">--/<ISO time with ":" and "." as "-">_<uuid>.jsonl``;
a ``session`` header (``version: 3``) then entries with 8-hex ``id``/``parentId`` chained in
write order; ``model_change`` and ``thinking_level_change`` at creation; ``message`` entries
with the roles ``user``, ``assistant`` (``api``, ``provider``, ``model``, per-message ``usage``
with ``cost``, ``stopReason``, ``responseId``), ``toolResult`` and ``bashExecution``. Usage follows
Pi's provider mapping: OpenAI APIs record ``input`` without the cached part (``cacheRead``),
Anthropic records cache writes as well; error and abort messages carry zero usage. Tool-call ids
and signatures follow each provider (Responses ``call_…|fc_…`` with ``phase`` text signatures
and reasoning-summary thinking signatures; Anthropic ``toolu_…``; Chat Completions
``call_…`` with ``reasoning_content``). Failing bash commands end ``Command exited with code N``
with ``isError: true``; long outputs keep the tail and set ``details.truncation``.

Scenarios (seeded rates; the first sessions each showcase one so small corpora have them all):
aborts during a tool and while streaming, model errors with and without an automatic retry,
mid-run steering, user ``!cmd`` (``bashExecution``), compaction, an in-file branch
(``branch_summary`` and an entry whose parent is an earlier one), an extension message that
triggers a turn, ``session_info`` names, a model switch, failing commands, tool output over
70 KiB and non-ASCII prompts. Projects are invented.
"""

from __future__ import annotations

import calendar
import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from traceidx.demo.codex import Repo
from traceidx.demo.shape import long_indexes

Obj = dict[str, Any]
#: a planned tool call: (tool name, arguments, result text, isError, details)
Planned = tuple[str, Obj, str, bool, Obj]

BASE_MS = calendar.timegm((2026, 2, 2, 8, 0, 0, 0, 0, 0)) * 1000
SPAN_DAYS = 75
DAY_MS = 86_400_000
_ENCODER = msgspec.json.Encoder()

RATES = {
    "abort_tool": 0.05,
    "abort_stream": 0.03,
    "error": 0.04,
    "retry": 0.05,
    "steering": 0.06,
    "user_bash": 0.08,
    "compaction": 0.06,
    "branch": 0.06,
    "extension": 0.04,
    "long_output": 0.02,
}
SHOWCASE = (
    "abort_tool",
    "retry",
    "steering",
    "branch",
    "user_bash",
    "error",
    "compaction",
    "extension",
    "abort_stream",
    "long_output",
)

#: (provider, api, model, thinking levels, price per 1M: input, output, cache read, cache write)
MODELS = (
    ("openai", "openai-responses", "gpt-5.1-codex", ("medium", "high"), (1.25, 10, 0.125, 0)),
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5", ("off", "low"), (3, 15, 0.3, 3.75)),
    ("anthropic", "anthropic-messages", "claude-opus-4-5", ("medium",), (5, 25, 0.5, 6.25)),
    ("openrouter", "openai-completions", "qwen/qwen3-coder", ("off",), (0.2, 0.8, 0.02, 0)),
)
PROJECTS = ("lumen-ledger", "tidewatch", "quill-api", "orbit-cli", "fernhouse", "saltmarsh")
FILES = ("src/app.py", "src/config.py", "src/report.py", "tests/test_app.py", "README.md")
PROMPTS = (
    "Run the test suite and fix whatever fails. Keep the fixes minimal and add a regression "
    "test for each bug you find.",
    "Why does `make build` fail on a clean checkout? It works on my machine after a full "
    "install, so I suspect a missing dependency.",
    "Add a --dry-run flag to the CLI and document it in the README. It should print what "
    "would be written without touching the output directory.",
    "Look around this repo and summarize the layout: entry points, where the config is read, "
    "and which modules have no tests.",
    "Refactor the config loader so it reads environment variables too. Environment should win "
    "over the file, and unknown keys should still be rejected.",
    "Check git status and tell me what is uncommitted, then suggest how to split it into commits.",
    "请检查一下测试为什么失败，并修复它。修复后请再跑一遍完整的测试，并告诉我改了哪些文件。",
    "Peux-tu vérifier pourquoi le build échoue ? Regarde aussi si les tests passent après ta "
    "correction.",
    "ship it 🚀 run lint + tests and commit if green ✅ (use a conventional commit message)",
    "このリポジトリの構成を簡単に説明してください。特に設定ファイルの読み込み部分を詳しく。",
)
FOLLOWUPS = (
    "Thanks. Now commit the change with a short message that says why, not what.",
    "Can you also add a test for that? Cover the empty input and a non-ASCII name.",
    "Show me the diff, and point out anything you are unsure about.",
    "Good. Anything else worth cleaning up? Only things you can verify with the tests.",
    "好的，再检查一遍，确认所有测试和 lint 都通过。",
    "Run the whole suite once more and then update the changelog entry for this fix.",
)
STEERING = (
    "Also keep the public API unchanged; other packages import these functions.",
    "Skip the slow integration tests, they need network access.",
    "Use the existing helper instead of a new one, there is already one in utils.",
)
COMMENTARY = (
    "Let me look at the repository first, starting with how `{fn}` is used and which tests "
    "cover it.",
    "Running the tests to see the failure before touching `{fn}`; I want the exact assertion "
    "that fails.",
    "Checking the git state so I don't overwrite local changes, then I'll read the module.",
    "Now I'll apply the fix in `{fn}` and re-run the affected tests. The change is a guard for "
    "empty input; callers stay as they are.",
    "The last command (`{cmd}`) exited with {code}; reading the relevant code next to see "
    "whether that is expected.",
)
THINKING = (
    "**Inspecting the repo**\n\nI should list the files before changing anything.",
    "The failure is probably in the config parsing; verify with the tests.",
    "Run the command and read its exit status.",
    "**Planning the change**\n\nSmallest change first, then the tests.",
)
#: further thinking paragraphs; {fn} {cmd} {code} come from the turn so far
THOUGHT_STEPS = (
    "`{cmd}` exited with {code}. If that is a real failure rather than the environment, the "
    "output should name a test or a file; otherwise I need to look at how the command is set "
    "up before reading any code.",
    "`{fn}` is the likeliest culprit: it is called from the CLI and from the report path, and "
    "both break in the same way when the input is empty. I'll read it and its callers before "
    "deciding whether the fix belongs there or one level up.",
    "I have to be careful not to change the public signature of `{fn}`; the user asked to keep "
    "the API stable, and other modules import it directly. A guard inside the function keeps "
    "callers untouched.",
    "There are two options: patch the call site, or make `{fn}` tolerate the odd input. The "
    "second is more robust and easier to test, so I'll do that and add a regression test with "
    "a non-ASCII name, since that is where the previous bug came from.",
    "After the edit I should run the narrow test module first, then the whole suite, and only "
    "then the linter; if the linter complains about unrelated files I'll leave those alone and "
    "mention them in the summary.",
    "The diff so far touches one module. Before finishing I want to double-check that nothing "
    "else relied on the old behaviour — a quick search for `{fn}` across src/ and tests/ will "
    "tell me.",
)
EDIT_LINES = (
    '{indent}log.debug("{fn}: start")',
    "{indent}if not rows:\n{indent}    return []",
    "{indent}# {fn} must not fail on empty input (see tests/test_empty.py)",
    '{indent}log.debug("{fn}: %d items", len(rows))\n{indent}rows = list(rows)',
)
FINALS = (
    "Done: the tests pass now. The failure came from an off-by-one in `{fn}`: it skipped the "
    "last row when the input ended without a newline. I fixed the loop bound and added a "
    "regression test covering both endings.",
    "Summary:\n- `{cmd}` → exit {code}\n- fixed `{fn}` (empty input returned None instead of "
    "an empty list)\n- added a test for the empty and non-ASCII cases\n\nAll checks are "
    "green; nothing else in the diff.",
    "The build failed because `{tool}` is not installed on a clean machine; the Makefile "
    "called it unconditionally. I added a fallback that uses the plain Python tooling when "
    "`{tool}` is missing and documented it in the README.",
    "完成：已修复 `{fn}` 并通过全部测试。问题出在空输入的处理上，我补充了对应的回归测试，"
    "其余文件没有改动。",
)
COMPACTION_SUMMARY = """## Goal
{goal}

## Constraints & Preferences
- Keep the public API of `{package}` unchanged; minimal diffs.
- Run the narrow tests first, then the full suite and the linter.

## Progress
### Done
- [x] Read the layout: `src/{package}/` with {modules} modules, tests under `tests/`.
- [x] Reproduced the failure with `python -m pytest -q`.
- [x] Fixed `{fn}` (empty input) and added a regression test.

### In Progress
- [ ] Re-run the whole suite and `ruff check src tests`.

### Blocked
- (none)

## Key Decisions
- **Guard inside `{fn}`**: safer than patching every caller; no signature change.

## Next Steps
1. Run the full test suite and the linter.
2. Summarise the change for the user and propose a commit message.

## Critical Context
- Files touched: {files}
- The user prefers short summaries with the commands that were run.
"""
COMMANDS = (  # (command, exit code, output)
    ("git status --short", 0, " M src/app.py\n?? notes.txt\n"),
    ("git log --oneline -n 3", 0, "3f2a1bc Add report\n9d8e7f6 Fix parser\n1a2b3c4 Init\n"),
    ("ls -la src", 0, "app.py\nconfig.py\nreport.py\n"),
    ("python -m pytest -q", 1, "F.\nFAILED tests/test_app.py::test_total - AssertionError\n"),
    ("python -m pytest -q tests/test_app.py", 0, "..\n2 passed in 0.04s\n"),
    ("grep -rn 'TODO' src | head -n 5", 0, "src/app.py:12:# TODO: handle empty input\n"),
    ("make build", 2, "make: *** No rule to make target 'build'.  Stop.\n"),
    ("cat missing.txt", 1, "cat: missing.txt: No such file or directory\n"),
    ("poetry install", 127, "bash: line 1: poetry: command not found\n"),
    ("ruff check src && ruff format --check src", 0, "All checks passed!\n"),
    ('for f in src/*.py; do wc -l "$f"; done', 0, "40 src/app.py\n22 src/config.py\n"),
    ("cat > notes.txt <<'EOF'\nrelease: v1.2\nEOF\ncat notes.txt", 0, "release: v1.2\n"),
    ("git diff --stat | tail -n 1", 0, " 2 files changed, 9 insertions(+), 3 deletions(-)\n"),
)
MODULE_NAMES = ("retry", "paging", "schema", "export", "auth", "limits", "timing")
FN_NAMES = ("parse_line", "load_config", "render_total", "merge_rows", "retry_request")
TOOLS_MISSING = ("poetry", "pnpm", "bazel")


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def encode_cwd(cwd: str) -> str:
    """Pi's session folder name for a working directory."""
    return "--" + cwd.lstrip("/\\").replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def _uuid7(ms: int, rng: random.Random) -> str:
    """A UUID version 7 (what pi 0.73 uses for session ids): time-ordered, seeded."""
    value = (ms & (2**48 - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64
    value |= 0b10 << 62 | rng.getrandbits(62)
    return str(uuid.UUID(int=value))


@dataclass(slots=True)
class _Model:
    provider: str
    api: str
    model: str
    levels: tuple[str, ...]
    prices: tuple[float, float, float, float]


@dataclass(slots=True)
class _Session:
    rng: random.Random
    model: _Model
    clock: int
    cwd: str
    session_id: str
    repo: Repo
    lines: list[bytes] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    leaf: str | None = None
    context: int = 0  # tokens in the context so far (drives input/cache counts)
    anchors: list[str | None] = field(default_factory=list)  # the leaf before each prompt

    # -- writing -------------------------------------------------------------------------------

    def advance(self, low: int, high: int) -> int:
        self.clock += self.rng.randint(low, high)
        return self.clock

    def new_id(self) -> str:
        while True:
            ident = f"{self.rng.getrandbits(32):08x}"
            if ident not in self.ids:
                self.ids.add(ident)
                return ident

    def entry(self, kind: str, fields: Obj, parent: str | bool | None = True) -> str:
        ident = self.new_id()
        body: Obj = {"type": kind, "id": ident}
        body["parentId"] = self.leaf if parent is True else parent
        body["timestamp"] = _iso(self.advance(3, 40))
        body.update(fields)
        self.lines.append(_ENCODER.encode(body))
        self.leaf = ident
        return ident

    def message(self, message: Obj, parent: str | bool | None = True) -> str:
        message["timestamp"] = self.clock
        return self.entry("message", {"message": message}, parent)

    # -- messages ------------------------------------------------------------------------------

    def user(self, text: str, parent: str | bool | None = True) -> str:
        self.advance(2_000, 40_000)
        self.context += len(text) // 3 + 5
        return self.message({"role": "user", "content": [{"type": "text", "text": text}]}, parent)

    def usage(self, output: int, zero: bool = False) -> Obj:
        m = self.model
        if zero:
            counts = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        elif m.api == "anthropic-messages":
            write = self.rng.randint(40, 900)
            counts = {"input": self.rng.randint(3, 60), "output": output}
            counts.update(cacheRead=max(0, self.context - write), cacheWrite=write)
        else:
            cached = (self.context // 1024) * 1024 if self.rng.random() < 0.8 else 0
            counts = {"input": self.context - cached + 2800, "output": output}
            counts.update(cacheRead=cached, cacheWrite=0)
        total = counts["input"] + counts["output"] + counts["cacheRead"] + counts["cacheWrite"]
        keys = ("input", "output", "cacheRead", "cacheWrite")
        cost = {k: counts[k] * price / 1e6 for k, price in zip(keys, m.prices, strict=True)}
        cost["total"] = sum(cost.values())
        self.context += output
        return {**counts, "totalTokens": total, "cost": cost}

    def text_block(self, text: str, phase: str) -> Obj:
        block: Obj = {"type": "text", "text": text}
        if self.model.api == "openai-responses":
            sig = {"v": 1, "id": f"msg_{self.rng.getrandbits(96):024x}", "phase": phase}
            block["textSignature"] = _ENCODER.encode(sig).decode()
        return block

    def thinking_block(self, text: str) -> Obj:
        api = self.model.api
        if api == "openai-responses":
            summary = [{"type": "summary_text", "text": text}]
            sig: Obj = {"id": f"rs_{self.rng.getrandbits(96):024x}", "type": "reasoning"}
            sig.update(summary=summary, encrypted_content=f"gAAAAA{self.rng.getrandbits(128):x}")
            signature = _ENCODER.encode(sig).decode()
        elif api == "anthropic-messages":
            signature = f"Eq{self.rng.getrandbits(256):x}"
        else:
            signature = "reasoning_content"
        return {"type": "thinking", "thinking": text, "thinkingSignature": signature}

    def call_id(self) -> str:
        api, bits = self.model.api, self.rng.getrandbits
        if api == "openai-responses":
            return f"call_{bits(96):024x}|fc_{bits(96):024x}"
        if api == "anthropic-messages":
            return f"toolu_{bits(96):024x}"
        return f"call_{bits(96):024x}"

    def assistant(
        self, content: list[Obj], stop: str, output: int, synthetic: bool = False, **extra: Any
    ) -> str:
        """An assistant message; `synthetic` ones (RPC abort) had no model request."""
        self.advance(400, 9_000)
        m = self.model
        message: Obj = {"role": "assistant", "content": content, "api": m.api}
        message.update(provider=m.provider, model=m.model)
        message["usage"] = self.usage(output, zero=stop in ("error", "aborted"))
        message["stopReason"] = stop
        message.update(extra)
        if stop != "error" and not synthetic:
            message["responseId"] = f"resp_{self.rng.getrandbits(96):024x}"
        return self.message(message)

    def tool_result(self, call: str, name: str, text: str, error: bool, details: Obj) -> None:
        self.advance(30, 3_000)
        self.context += len(text) // 4
        message: Obj = {"role": "toolResult", "toolCallId": call, "toolName": name}
        message.update(content=[{"type": "text", "text": text}], details=details, isError=error)
        self.message(message)


def _bash_output(code: int, output: str) -> tuple[str, bool, Obj]:
    text = output.rstrip("\n") or "(no output)"
    if code:
        text += f"\n\n\nCommand exited with code {code}"
    return text, code != 0, {}


def _long_output(s: _Session) -> tuple[str, str, Obj]:
    n = s.rng.randint(16_000, 22_000)
    lines = [f"row {i:06d},{i * 7 % 101:03d},ok,eu-1" for i in range(1, n + 1)]
    tail = lines[-2000:]
    content = "\n".join(tail)
    truncation: Obj = {"content": content, "truncated": True, "truncatedBy": "lines"}
    truncation.update(totalLines=n + 1, outputLines=2000, maxLines=2000, maxBytes=51200)
    path = f"/tmp/pi-bash-{s.rng.getrandbits(32):08x}.log"
    text = f"{content}\n\n[Showing lines {n - 1999}-{n} of {n}. Full output: {path}]"
    return f"python scripts/export.py --rows {n}", text, {"truncation": truncation}


def _numbered(sign: str, number: int, line: str) -> str:
    return f"{sign}{number:>4} {line}"


def _edit(s: _Session, ctx: Obj) -> Planned:
    """An ``edit`` call on one of the repository's modules, and Pi's result with its diff."""
    rng, repo = s.rng, s.repo
    name = rng.choice(repo.names)
    lines = repo.source(name)
    starts = [n for n, line in enumerate(lines) if line.startswith("def ")]
    at = rng.choice(starts) + rng.randint(2, 4)
    at = min(at, len(lines) - 2)
    size = rng.randint(3, 14)
    old = lines[at : at + size]
    indent = " " * (len(old[0]) - len(old[0].lstrip()))
    fn = lines[max(n for n in starts if n < at)].split("(")[0].removeprefix("def ")
    added = rng.choice(EDIT_LINES).format(indent=indent, fn=fn)
    new = [*old[:1], *added.split("\n"), *old[1:]]
    repo.sources[name] = lines[:at] + new + lines[at + size :]
    ctx["fn"] = fn
    path = repo.path(name)
    old_text, new_text = "\n".join(old), "\n".join(new)
    rows = ["     ..."]
    rows += [_numbered(" ", n + 1, lines[n]) for n in range(max(0, at - 4), at)]
    rows += [_numbered("-", at + 1 + i, x) for i, x in enumerate(old)]
    rows += [_numbered("+", at + 1 + i, x) for i, x in enumerate(new)]
    tail = range(at + size, min(len(lines), at + size + 4))
    rows += [_numbered(" ", n + 1 + len(new) - size, lines[n]) for n in tail]
    rows.append("     ...")
    text = (
        f"Successfully replaced text in {path}. "
        f"Changed {len(old_text)} characters to {len(new_text)} characters."
    )
    args = {"path": path, "oldText": old_text, "newText": new_text}
    return "edit", args, text, False, {"diff": "\n".join(rows)}


def _read(s: _Session) -> Planned:
    rng, repo = s.rng, s.repo
    name = rng.choice(repo.names)
    lines = repo.source(name)
    args: Obj = {"path": repo.path(name)}
    if rng.random() < 0.25:
        offset = rng.randint(1, max(1, len(lines) // 2))
        args.update(offset=offset, limit=rng.choice((40, 80)))
        lines = lines[offset - 1 : offset - 1 + args["limit"]]
    return "read", args, "\n".join(lines), False, {}


def _write(s: _Session) -> Planned:
    rng, repo = s.rng, s.repo
    if rng.random() < 0.5:  # a new module
        name = rng.choice([n for n in MODULE_NAMES if n not in repo.names] or ["extra"])
        repo.names.append(name)
        content = "\n".join(repo.source(name)) + "\n"
        path = repo.path(name)
        text = f"Successfully wrote {len(content.encode())} bytes to {path}"
        return "write", {"path": path, "content": content}, text, False, {}
    name = rng.choice(repo.names)
    module = f"{repo.package}.{name}"
    defs = [line for line in repo.source(name) if line.startswith("def ")]
    body = [f'"""Tests for {module}."""', "", "from __future__ import annotations", ""]
    body += ["import pytest", "", f"from {module} import *  # noqa: F403", ""]
    for line in rng.sample(defs, min(len(defs), rng.randint(3, 6))):
        fn = line.split("(")[0].removeprefix("def ")
        body += ["", f"def test_{fn}_rejects_bad_input() -> None:"]
        body += [
            "    with pytest.raises((ValueError, TypeError)):",
            f"        {fn}(None)  # type: ignore[arg-type]",
        ]
        body += ["", "", '@pytest.mark.parametrize("name", ["plain", "ünïcode", "名前"])']
        body += [
            f"def test_{fn}_keeps_names(name: str) -> None:",
            f"    assert {fn} is not None",
            "    assert name",
        ]
    content = "\n".join(body) + "\n"
    path = f"tests/test_{name}.py"
    text = f"Successfully wrote {len(content.encode())} bytes to {path}"
    return "write", {"path": path, "content": content}, text, False, {}


def _bash(s: _Session, ctx: Obj) -> Planned:
    rng = s.rng
    if rng.random() < 0.25:
        command, code, output = rng.choice(COMMANDS)
    else:
        command, code, output, _ = s.repo.pick()
    args: Obj = {"command": command}
    if rng.random() < 0.3:
        args["timeout"] = 120
    text, error, details = _bash_output(code, output)
    ctx["cmd"], ctx["code"] = command, code
    return "bash", args, text, error, details


def _thinking(s: _Session, ctx: Obj) -> str:
    rng = s.rng
    steps = rng.sample(THOUGHT_STEPS, rng.randint(1, 4))
    parts = [rng.choice(THINKING), *(step.format(**ctx) for step in steps)]
    return "\n\n".join(parts)


def _tool_round(s: _Session, ctx: Obj, flags: set[str]) -> None:
    """One model response with 1-2 tool calls and their results."""
    rng = s.rng
    content: list[Obj] = []
    if s.model.levels != ("off",) and rng.random() < 0.5:
        content.append(s.thinking_block(_thinking(s, ctx)))
    if rng.random() < 0.5:
        content.append(s.text_block(rng.choice(COMMENTARY).format(**ctx), "commentary"))
    planned: list[tuple[str, Planned]] = []
    for _ in range(rng.choice((1, 1, 1, 2))):
        call = s.call_id()
        if "long_output" in flags:
            flags.discard("long_output")
            command, text, details = _long_output(s)
            planned.append((call, ("bash", {"command": command}, text, False, details)))
            continue
        kind = rng.choices(("bash", "edit", "read", "write"), (48, 27, 22, 3))[0]
        if kind == "edit":
            planned.append((call, _edit(s, ctx)))
        elif kind == "read":
            planned.append((call, _read(s)))
        elif kind == "write":
            planned.append((call, _write(s)))
        else:
            planned.append((call, _bash(s, ctx)))
    for call, (name, args, *_) in planned:
        content.append({"type": "toolCall", "id": call, "name": name, "arguments": args})
    s.assistant(content, "toolUse", rng.randint(40, 400))
    for call, (name, _, text, error, details) in planned:
        s.tool_result(call, name, text, error, details)


def _turn(
    s: _Session,
    prompt: str,
    flags: set[str],
    parent: str | bool | None = True,
    most: int = 3,
) -> None:
    """One prompt and the agent's run: up to `most` tool rounds, then the answer."""
    rng = s.rng
    ctx: Obj = {"fn": rng.choice(FN_NAMES), "cmd": "git status", "code": 0}
    s.anchors.append(s.leaf if parent is True or parent is False else parent)
    s.user(prompt, parent)
    rounds = rng.randint(1 if "long_output" in flags else most // 4, most)
    for n in range(rounds):
        if "abort_tool" in flags and n == rounds - 1:
            call = s.call_id()
            command = "for i in $(seq 1 60); do sleep 1; done; echo finished"
            block: Obj = {"type": "toolCall", "id": call, "name": "bash"}
            block["arguments"] = {"command": command}
            s.assistant(
                [s.text_block("Starting the long run.", "commentary"), block], "toolUse", 80
            )
            s.tool_result(call, "bash", "Command aborted", True, {})
            s.assistant([], "aborted", 0, errorMessage="Request was aborted.", synthetic=True)
            return
        _tool_round(s, ctx, flags)
        if "steering" in flags and n == 0:
            s.user(rng.choice(STEERING))
    if "abort_stream" in flags:
        s.assistant([s.thinking_block("**Drafting the answer**")], "aborted", 0)
        return
    if "error" in flags or "retry" in flags:
        message = rng.choice(("503 Service Unavailable", "Connection error.", "terminated"))
        s.assistant([], "error", 0, errorMessage=message)
        if "error" in flags:
            return
    fmt = {**ctx, "tool": rng.choice(TOOLS_MISSING)}
    final = rng.choice(FINALS).format(**fmt)
    if rounds > 1:
        touched = rng.sample(s.repo.names, min(3, len(s.repo.names)))
        final += "\n\nFiles looked at: " + ", ".join(f"`{s.repo.path(n)}`" for n in touched)
        final += f".\nVerified with `{ctx['cmd']}` (exit {ctx['code']})."
    content = []
    if s.model.levels != ("off",) and rng.random() < 0.4:
        content.append(s.thinking_block(_thinking(s, ctx)))
    content.append(s.text_block(final, "final_answer"))
    s.assistant(content, "stop", rng.randint(30, 300))


def _session(rng: random.Random, index: int, total: int, root: Path, long: bool) -> Path:
    m = _Model(*rng.choice(MODELS))
    day = (index * SPAN_DAYS) // max(total, 1)
    start = BASE_MS + day * DAY_MS + rng.randint(0, 10 * 3_600_000)
    project = f"/home/dev/projects/{rng.choice(PROJECTS)}"
    session_id = _uuid7(start, rng)
    s = _Session(rng, m, start, project, session_id, Repo(rng, project.rsplit("/", 1)[1], (6, 12)))
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(start)}
    header["cwd"] = project
    s.lines.append(_ENCODER.encode(header))
    s.context = rng.randint(2500, 4500)  # system prompt and tools
    s.entry("model_change", {"provider": m.provider, "modelId": m.model}, None)
    s.entry("thinking_level_change", {"thinkingLevel": rng.choice(m.levels)})
    chosen = {k for k, rate in RATES.items() if rng.random() < rate}
    if index < len(SHOWCASE):
        chosen.add(SHOWCASE[index])
    # session length: most are a few short turns; a long working session has many turns,
    # each with many tool rounds (hundreds of lines)
    turns = rng.randint(10, 24) if long else rng.randint(1, 4)
    most = rng.randint(20, 40) if long else 3
    final_flags = {"abort_tool", "abort_stream", "error"} & chosen
    for n in range(turns):
        last = n == turns - 1
        flags = (
            {f for f in chosen if f in ("steering", "retry", "long_output")} if n == 0 else set()
        )
        if last:
            flags |= final_flags
        if n and "user_bash" in chosen and n == 1:
            command, code, output, _ = s.repo.pick()
            bash: Obj = {"role": "bashExecution", "command": command, "output": output}
            bash.update(exitCode=code, cancelled=False, truncated=False)
            s.advance(2_000, 20_000)
            s.message(bash)
        if n and "compaction" in chosen and n == 1:
            repo = s.repo
            files = ", ".join(f"`{repo.path(n)}`" for n in repo.names[:3])
            summary = COMPACTION_SUMMARY.format(
                goal=rng.choice(PROMPTS),
                package=repo.package,
                modules=len(repo.names),
                fn=rng.choice(FN_NAMES),
                files=files,
            )
            assert s.leaf is not None
            fields: Obj = {"summary": summary, "firstKeptEntryId": s.leaf}
            fields["tokensBefore"] = s.context
            s.entry("compaction", fields)
            s.context = rng.randint(3000, 6000)
        if n and "extension" in chosen and n == 1:
            content = "Reminder: update CHANGELOG.md before finishing."
            fields = {"customType": "changelog-reminder", "content": content}
            fields["display"] = True
            s.entry("custom_message", fields)
            text = "CHANGELOG.md already lists this change."
            s.assistant([s.text_block(text, "final_answer")], "stop", 40)
        parent: str | bool | None = True
        if n and "branch" in chosen and n == turns - 1:
            back = s.anchors[-1]  # abandon the previous turn: back to before its prompt
            summary = "The user tried another approach first; it changed src/app.py."
            fields = {"fromId": back or "root", "summary": summary}
            s.entry("branch_summary", fields, parent=back)
        prompt = rng.choice(PROMPTS) if n == 0 else rng.choice(FOLLOWUPS)
        _turn(s, prompt, flags, parent, most)
    if rng.random() < 0.3:
        s.entry("session_info", {"name": rng.choice(PROMPTS)[:40]})
    folder = root / "sessions" / encode_cwd(project)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _iso(start).replace(":", "-").replace(".", "-")
    path = folder / f"{stamp}_{session_id}.jsonl"
    path.write_bytes(b"\n".join(s.lines) + b"\n")
    return path


def generate(
    root: Path, *, sessions: int = 12, seed: int = 0, long_sessions: bool = True
) -> list[Path]:
    """Write `sessions` Pi sessions under `root`; return the .jsonl paths (sorted)."""
    rng = random.Random(seed)
    long = long_indexes("pi", seed, sessions, long_sessions)
    return sorted(_session(rng, i, sessions, Path(root), i in long) for i in range(sessions))
