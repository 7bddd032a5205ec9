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

import base64
import random
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from traceidx.demo.shape import long_indexes

Obj = dict[str, Any]
_ENCODE = msgspec.json.Encoder()
_START = datetime(2026, 9, 28, 8, 0, tzinfo=UTC)

PROJECTS = ("orchard", "tidepool", "quarry-api", "lumen", "basalt", "kite-cli", "marigold")
MODELS = (("gpt-5.5", "medium"), ("gpt-5.5", "high"), ("gpt-5.5-mini", "low"))
PROMPTS = (
    "Check the repo state and tell me what looks off. I pulled this morning and the CLI "
    "started printing warnings on every run; I have not changed anything locally.",
    "Run the tests and summarise the failures. Group them by cause if several fail for the "
    "same reason, and tell me which ones look flaky rather than broken.",
    "Find where the config file is parsed. I want to add an environment-variable override "
    "for the output directory, so note anything that reads the config before main() runs.",
    "请检查一下构建脚本，并简单汇报。重点看看依赖安装和测试这两步有没有多余的重复操作，"
    "以及缓存目录是否配置正确。",
    "Revisa los scripts de despliegue y resume lo que encuentres. Me interesa sobre todo si "
    "las variables de entorno se validan antes de usarlas.",
    "ビルドが遅い理由を調べてください。テストの実行時間とインポートの重さも確認して、"
    "改善案があれば短くまとめてください。",
    "Count the TODO markers and list the files. If some of them point at bugs that are "
    "already fixed, say so, but do not edit anything yet.",
    "Is the changelog up to date with the last tag? Compare it with `git log` since the tag "
    "and list the user-visible changes that are missing.",
)
FOLLOW_UPS = (
    "Thanks. Anything else worth fixing? Keep it to things you can verify with a command.",
    "Now run the linter too, and fix only what is clearly safe.",
    "Bitte fasse die Änderungen kurz zusammen und nenne die betroffenen Dateien.",
)
#: (reasoning summary title, body); {hint} is what the step looks at
THOUGHTS = (
    (
        "Inspecting the workspace",
        "I should look at {hint} before changing anything, so the answer rests on what the "
        "repository actually contains rather than on guesses about its layout.",
    ),
    (
        "Planning the checks",
        "The quickest signal is {hint}; if that is clean I can move on to the tests, otherwise "
        "the failure output should tell me which module to open next.",
    ),
    (
        "Reading the output",
        "The previous command answered part of the question. Next {hint} should confirm whether "
        "the problem is local to one module or shared by several of them.",
    ),
    (
        "Narrowing it down",
        "Several candidates remain. Running {hint} keeps the output short and avoids reading "
        "whole files I do not need, which matters with the context budget.",
    ),
)
COMMENTARY = (
    "Next I'll run `{cmd}` to confirm what I saw so far.",
    "That gives the overall picture; now `{cmd}` for the details.",
    "I'm checking one more thing with `{cmd}` before summarising.",
    "The first result looks consistent. Running `{cmd}` to rule out the other explanation.",
)
OPENERS = ("What I found:", "Summary (nothing modified):", "Results:")
CLOSERS_OK = ("All clean; nothing to fix.", "No action needed.")
CLOSERS_FAILED = (
    "The failures point at missing files or tests, not the environment; want me to fix them?",
    "Some commands failed; I left everything as it was.",
)
NOTES = """# Notes

Working notes for `{package}` (not shipped).

- `{module}` reads `DEFAULT_LIMIT` from the environment now; unset keeps the old default.
- Tests: `python -m pytest -q`; the suite takes a few seconds.
- Ünïcödé file names are covered by the fixtures in `tests/data/`.
"""
COMPACTION = """Summary of the work so far (context was compacted):

The user asked for a review of the `{package}` repository at {cwd}. I inspected the git \
state, read `src/{package}/{module}.py` and the surrounding modules, and ran the test suite \
and the linter. Findings so far:
- the working tree has local edits in a few modules that the user made before the session;
- some tests fail on empty input and on non-ASCII names; the assertion output points at the \
totals helpers, not at the parsing code;
- `ruff check` reports unused imports and a long line, nothing structural.
Nothing has been modified by me yet. Next steps: answer the follow-up question, then propose \
minimal fixes with tests.
"""
MODULES = ("config", "cli", "store", "report", "sync", "models", "http", "cache", "export")


NOUNS = ("config", "ledger", "batch", "route", "token", "schedule", "snapshot", "manifest", "entry")
VERBS = ("load", "parse", "merge", "render", "resolve", "validate", "flush", "collect", "split")
FIELDS = ("path", "owner", "region", "status", "label", "source")
IMPORTS = ("import re", "import time", "from datetime import UTC, datetime", "import shutil")
#: function bodies; {fn} {cls} {noun} {field} {limit} {other} are filled in per module
BODIES = (
    (
        "def {fn}(path: Path) -> list[{cls}]:",
        '    """Read every {noun} from `path`, skipping blank and comment lines."""',
        "    rows: list[{cls}] = []",
        "    for number, line in enumerate(path.read_text().splitlines(), 1):",
        '        if not line.strip() or line.startswith("#"):',
        "            continue",
        "        try:",
        "            rows.append({cls}.from_line(line))",
        "        except ValueError as exc:",
        '            raise ValueError(f"{{path}}:{{number}}: {{exc}}") from None',
        "    return rows",
    ),
    (
        "def {fn}(items: Iterable[{cls}], *, limit: int = {limit}) -> dict[str, int]:",
        '    """Totals per {field}, at most `limit` keys (the largest first)."""',
        "    totals: dict[str, int] = {{}}",
        "    for item in items:",
        '        key = str(item.{field} or "unknown")',
        "        totals[key] = totals.get(key, 0) + item.total",
        "    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))",
        "    return dict(ranked[:limit])",
    ),
    (
        "def {fn}(raw: dict[str, object]) -> {cls}:",
        '    """Build one {noun} from decoded JSON; unknown keys are ignored."""',
        '    name = raw.get("name")',
        "    if not isinstance(name, str) or not name:",
        '        raise ValueError("every {noun} needs a non-empty name")',
        '    total = raw.get("total", 0)',
        "    if not isinstance(total, int) or total < 0:",
        '        raise ValueError(f"bad total for {{name!r}}: {{total!r}}")',
        '    tags = tuple(str(t) for t in raw.get("tags", ()) or ())',
        "    return {cls}(name=name, total=total, tags=tags)",
    ),
    (
        "def {fn}(entries: list[{cls}], other: list[{cls}]) -> list[{cls}]:",
        '    """Merge two {noun} lists; on equal names the newer total wins."""',
        "    by_name = {{e.name: e for e in entries}}",
        "    for entry in other:",
        "        current = by_name.get(entry.name)",
        "        if current is None or entry.total >= current.total:",
        "            by_name[entry.name] = entry",
        "    return sorted(by_name.values(), key=lambda e: e.name)",
    ),
    (
        "def {fn}(target: Path, rows: list[{cls}]) -> int:",
        '    """Write `rows` as JSON lines next to `target`, then swap it in atomically."""',
        '    tmp = target.with_suffix(".tmp")',
        '    with tmp.open("w", encoding="utf-8") as out:',
        "        for row in rows:",
        '            out.write(json.dumps(row.as_dict(), sort_keys=True) + "\\n")',
        "    os.replace(tmp, target)",
        '    log.info("wrote %d rows to %s", len(rows), target)',
        "    return len(rows)",
    ),
    (
        "def {fn}(text: str) -> Iterator[tuple[str, str]]:",
        '    """Yield (key, value) pairs of a `key = value` {noun} file."""',
        "    for line in text.splitlines():",
        '        line = line.split("#", 1)[0].strip()',
        "        if not line:",
        "            continue",
        '        key, sep, value = line.partition("=")',
        "        if not sep:",
        '            raise ValueError(f"expected key = value, got {{line!r}}")',
        "        yield key.strip(), value.strip().strip('\"')",
    ),
    (
        "class {cls}Cache:",
        '    """A small LRU cache of {noun} lookups (max {limit} entries)."""',
        "",
        "    def __init__(self) -> None:",
        "        self._data: dict[str, {cls}] = {{}}",
        "",
        "    def get(self, key: str) -> {cls} | None:",
        "        value = self._data.pop(key, None)",
        "        if value is not None:",
        "            self._data[key] = value",
        "        return value",
        "",
        "    def put(self, key: str, value: {cls}) -> None:",
        "        self._data.pop(key, None)",
        "        self._data[key] = value",
        "        while len(self._data) > {limit}:",
        "            del self._data[next(iter(self._data))]",
    ),
)
COMMIT_SUBJECTS = (
    "Fix off-by-one in {fn}",
    "Add {noun} cache",
    "Read {noun} limits from the environment",
    "Refactor {fn} to stream rows",
    "Bump dependencies",
    "Document the {noun} format",
    "Handle empty {noun} files",
    "Retry transient failures in {fn}",
    "Test {fn} with unicode names",
    "Drop the legacy {noun} loader",
)


def _title(word: str) -> str:
    return "".join(part.title() for part in word.split("_"))


def module_source(rng: random.Random, module: str, functions: int = 0) -> list[str]:
    """A plausible Python module: docstring, imports, a dataclass and `functions` functions
    (default: 4-7)."""
    noun = rng.choice(NOUNS)
    cls = _title(noun)
    first = rng.choice(FIELDS)
    lines = [
        f'"""{_title(module)}: {rng.choice(VERBS)} and {rng.choice(VERBS)} {noun} files."""',
        "",
        "from __future__ import annotations",
        "",
        "import json",
        "import logging",
        "import os",
        *sorted(rng.sample(IMPORTS, 2)),
        "from collections.abc import Iterable, Iterator",
        "from dataclasses import dataclass",
        "from pathlib import Path",
        "",
        "log = logging.getLogger(__name__)",
        f"DEFAULT_LIMIT = {rng.choice((20, 50, 100, 250))}",
        "",
        "",
        "@dataclass(frozen=True)",
        f"class {cls}:",
        f'    """One {noun} as stored on disk."""',
        "",
        "    name: str",
        "    total: int = 0",
        f"    {first}: str | None = None",
        "    tags: tuple[str, ...] = ()",
        "",
        "    def as_dict(self) -> dict[str, object]:",
        f'        return {{"name": self.name, "total": self.total, "{first}": self.{first}}}',
    ]
    count = functions or rng.randint(4, 7)
    bodies = rng.sample(BODIES, min(count, len(BODIES)))
    bodies += rng.choices(BODIES, k=count - len(bodies))
    for body in bodies:
        fmt: Obj = {"fn": f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}", "cls": cls, "noun": noun}
        fmt.update(field=rng.choice(FIELDS), limit=rng.choice((8, 16, 64, 128)))
        lines += ["", "", *(line.format(**fmt) for line in body)]
    return lines


BASE_INSTRUCTIONS = """You are Codex, a coding agent working in the user's terminal. You \
and the user share one workspace; your job is to get their task done and keep them \
informed while you do it.

# Personality

Be concise, direct and friendly. Say what you are about to do before doing it, in one short \
sentence, and say what you found once it matters. Prefer plain language over jargon. Do not \
repeat the user's request back to them and do not pad answers with generic advice.

# Working in the repository

- Read before you write: look at the files you are about to change and at their tests.
- Prefer `rg` and `rg --files` to find code; they are much faster than `grep -r` or `find`.
- Keep changes minimal and focused on the task. Do not fix unrelated bugs or reformat files \
you did not otherwise need to touch; mention such problems in your final message instead.
- Follow the existing style of the codebase: naming, error handling, logging and test layout.
- Never revert changes you did not make. The worktree may contain the user's own edits; \
leave them alone unless asked, and never run destructive git commands such as \
`git reset --hard` or `git checkout --` without explicit approval.
- Do not add copyright or license headers, and do not add inline comments that merely \
restate the code.

# Tools

Run shell commands with `exec_command`. Set `workdir` instead of using `cd`, and prefer \
commands whose output is short; page through long files with `sed -n` ranges. A command \
that keeps running returns a session id: poll it with `write_stdin` and an empty input. \
Edit files with `apply_patch`; never write files with `cat` heredocs or `echo`. Use \
`spawn_agent` only for independent work that can run in parallel with your own.

# Validation

If the repository has tests, a linter or a type checker, run the narrowest relevant ones \
after a change, then broaden as you gain confidence. When a check fails for reasons \
unrelated to your change, say so rather than trying to fix it. Do not claim that something \
works unless you ran it.

# Planning

For multi-step tasks keep a short plan and update it as steps complete. Skip planning for \
simple one-step requests. If you are blocked by missing information that cannot be \
discovered locally, make a reasonable assumption and state it.

# Final answer

Lead with the outcome. Use short sections or flat bullet lists only when they help; \
reference files as `path:line` in backticks. Mention what you ran to verify the change and \
anything you could not verify. Suggest a natural next step only when one exists. Keep it \
under a dozen lines for simple tasks.
"""
PERMISSIONS = """<permissions instructions>
Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is \
`workspace-write`: The sandbox permits reading files, and editing files in `cwd` and \
`writable_roots`. Editing files in other directories requires approval. Network access is \
restricted.
Approval policy is currently never. Do not provide the `sandbox_permissions` for any reason, \
commands will be rejected. If a command fails because of the sandbox, explain what you \
could not do instead of retrying with different flags.
The writable roots are `{cwd}`, `/tmp`.
</permissions instructions>"""
SKILLS = """<skills_instructions>
## Skills
A skill is a set of local instructions stored in a `SKILL.md` file. Use a skill when the \
task clearly matches its description; read its `SKILL.md` first and follow it.
### Available skills
- release-notes: Draft release notes from the git history since the last tag. \
(file: /home/dev/.codex/skills/release-notes/SKILL.md)
- pytest-triage: Group failing tests by cause and propose minimal fixes. \
(file: /home/dev/.codex/skills/pytest-triage/SKILL.md)
- repo-map: Summarise a repository's layout, entry points and commands. \
(file: /home/dev/.codex/skills/repo-map/SKILL.md)
</skills_instructions>"""
COLLABORATION = """# Collaboration Mode: Default

You are now in Default mode. Any previous instructions for other modes (e.g. Plan mode) are \
no longer active. In Default mode, prefer making reasonable assumptions and executing the \
user's request rather than stopping to ask questions; ask only when the answer cannot be \
discovered locally and a wrong guess would be costly.
"""


def _agents_md(project: str, cwd: str, package: str) -> str:
    """The project's AGENTS.md as Codex injects it (a user-role message)."""
    return f"""# AGENTS.md instructions for {cwd}

<INSTRUCTIONS>
# {project}

## Layout
- `src/{package}/` holds the package; `tests/` mirrors it one test module per source module.
- `scripts/` has release and maintenance helpers; nothing there is imported at runtime.
- Generated files live under `build/` and are never committed.

## Commands
- Install: `python -m pip install -e '.[dev]'`
- Tests: `python -m pytest -q` (add `-x` while iterating, `-k name` for one test)
- Lint and format: `ruff check src tests` and `ruff format src tests`
- Types: `mypy src`

## Conventions
- Python 3.12, type hints everywhere, `from __future__ import annotations` at the top.
- Public functions get a one-line docstring; keep modules under ~400 lines.
- Errors: raise `ValueError` with the offending value in the message; never print.
- Every bug fix comes with a test that fails without it.
- Keep the changelog (`CHANGELOG.md`) in sync for user-visible changes.
</INSTRUCTIONS>"""


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
        used = min(99.0, self.total[0] // 40_000 + 1.0)
        resets = int(self.clock.timestamp()) // 3600 * 3600
        limits: Obj = {"limit_id": "codex", "limit_name": None}
        limits["primary"] = {"used_percent": used, "window_minutes": 300, "resets_at": resets}
        limits["secondary"] = {
            "used_percent": used // 4,
            "window_minutes": 10080,
            "resets_at": resets + 5 * 86400,
        }
        limits["credits"] = {"has_credits": False, "unlimited": False, "balance": None}
        self.event({"type": "token_count", "info": info, "rate_limits": limits})


#: (command, exit code, output, note for the final answer)
Command = tuple[str, int, str, str]


class Repo:
    """The invented repository a session works in (the Pi generator's too): modules are
    written on first look."""

    def __init__(
        self, rng: random.Random, project: str, functions: tuple[int, int] = (4, 7)
    ) -> None:
        self.rng = rng
        self.functions_per_module = functions
        self.package = project.replace("-", "_")
        self.names = rng.sample(MODULES, rng.randint(5, 8))
        self.sources: dict[str, list[str]] = {}
        self.tests = rng.randint(24, 140)

    def path(self, name: str) -> str:
        return f"src/{self.package}/{name}.py"

    def source(self, name: str) -> list[str]:
        if name not in self.sources:
            count = self.rng.randint(*self.functions_per_module)
            self.sources[name] = module_source(self.rng, name, count)
        return self.sources[name]

    def functions(self, name: str) -> list[tuple[int, str]]:
        return [
            (n, line)
            for n, line in enumerate(self.source(name), 1)
            if line.startswith(("def ", "class "))
        ]

    # -- commands -------------------------------------------------------------------------------

    def status(self) -> Command:
        changed = self.rng.sample(self.names, self.rng.randint(1, 3))
        out = "".join(f" M {self.path(n)}\n" for n in changed)
        out += self.rng.choice(("", "?? notes.md\n", "?? scratch/\n M CHANGELOG.md\n"))
        return "git status --short", 0, out, f"{len(changed)} modified module(s)"

    def listing(self) -> Command:
        rows = ["total 96", "drwxr-xr-x  3 dev dev  4096 Sep 27 18:02 .", "drwxr-xr-x  4 dev dev"]
        rows[-1] += "  4096 Sep 21 09:40 .."
        rows.append("-rw-r--r--  1 dev dev   112 Sep 21 09:40 __init__.py")
        rows.append("drwxr-xr-x  2 dev dev  4096 Sep 27 18:02 __pycache__")
        for name in sorted(self.names):
            size = sum(len(line) + 1 for line in self.source(name))
            day = self.rng.randint(10, 27)
            rows.append(
                f"-rw-r--r--  1 dev dev {size:5d} Sep {day} 1{day % 10}:0{day % 6} {name}.py"
            )
        command = f"ls -la src/{self.package}"
        return command, 0, "\n".join(rows) + "\n", f"{len(self.names)} modules"

    def show(self) -> Command:
        name = self.rng.choice(self.names)
        lines = self.source(name)
        end = self.rng.choice((80, 120, 160, 200))
        command = f"sed -n '1,{end}p' {self.path(name)}"
        return command, 0, "\n".join(lines[:end]) + "\n", f"read `{self.path(name)}`"

    def numbered(self) -> Command:
        name = self.rng.choice(self.names)
        lines = self.source(name)
        first = self.rng.randint(1, max(1, len(lines) - 40))
        last = min(len(lines), first + self.rng.randint(30, 70))
        body = "".join(f"{n:6d}\t{lines[n - 1]}\n" for n in range(first, last + 1))
        command = f"nl -ba {self.path(name)} | sed -n '{first},{last}p'"
        return command, 0, body, f"read lines {first}-{last} of `{self.path(name)}`"

    def search(self) -> Command:
        pattern = self.rng.choice(("def ", "class ", "raise ValueError", "log\\.", "TODO"))
        hits = []
        for name in self.names:
            for n, line in enumerate(self.source(name), 1):
                if re.search(pattern, line):
                    hits.append(f"{self.path(name)}:{n}:{line}")
        if pattern == "TODO":
            hits = [
                f"{self.path(n)}:{self.rng.randint(20, 90)}:    # TODO: retry"
                for n in self.names[:3]
            ]
        command = f'rg -n "{pattern}" src'
        return (
            command,
            0 if hits else 1,
            "\n".join(hits) + "\n" if hits else "",
            f"{len(hits)} hits",
        )

    def diff(self) -> Command:
        names = self.rng.sample(self.names, self.rng.randint(1, 2))
        parts = []
        for name in names:
            lines = self.source(name)
            path = self.path(name)
            parts.append(f"diff --git a/{path} b/{path}")
            parts.append(
                f"index {self.rng.getrandbits(28):07x}..{self.rng.getrandbits(28):07x} 100644"
            )
            parts += [f"--- a/{path}", f"+++ b/{path}"]
            for n, header in self.rng.sample(self.functions(name), 2):
                at = min(len(lines) - 4, n + self.rng.randint(2, 5))
                before = lines[at - 3 : at]
                changed = lines[at]
                after = lines[at + 1 : at + 4]
                new = (
                    changed.replace("return ", "return list(") + ")"
                    if "return " in changed
                    else changed + "  # checked"
                )
                span = len(before) + 1 + len(after)
                parts.append(f"@@ -{at - 2},{span} +{at - 2},{span} @@ {header}")
                parts += [f" {x}" for x in before] + [f"-{changed}", f"+{new}"]
                parts += [f" {x}" for x in after]
        command = "git diff" if self.rng.random() < 0.5 else f"git diff -- {self.path(names[0])}"
        return command, 0, "\n".join(parts) + "\n", f"{len(names)} file(s) changed"

    def tests_run(self, failing: bool) -> Command:
        total = self.tests
        dots = ["." * total]
        fails = self.rng.sample(range(total), self.rng.randint(1, 3)) if failing else []
        marks = "".join("F" if i in fails else "." for i in range(total))
        dots = [marks[i : i + 60] for i in range(0, total, 60)]
        rows = [
            f"{row:<60} [{min(100, (n + 1) * 60 * 100 // total):3d}%]" for n, row in enumerate(dots)
        ]
        secs = self.rng.uniform(0.4, 9.0)
        if not failing:
            rows.append(f"{total} passed in {secs:.2f}s")
            return "python -m pytest -q", 0, "\n".join(rows) + "\n", f"{total} passed"
        rows += ["", "=" * 30 + " FAILURES " + "=" * 30]
        summary = []
        for _ in fails:
            name = self.rng.choice(self.names)
            defs = [line for _, line in self.functions(name) if line.startswith("def ")]
            fn = self.rng.choice(defs).split("(")[0].removeprefix("def ")
            case = self.rng.choice(("empty", "unicode", "merge", "limit"))
            test = f"tests/test_{name}.py::test_{fn}_{case}"
            got = self.rng.randint(0, 9)
            rows.append(f"{'_' * 20} {test.split('::')[1]} {'_' * 20}")
            rows += [
                "",
                "    def " + test.split("::")[1] + "() -> None:",
                '        rows = [{"name": "é", "total": 3}]',
                f">       assert {fn}(rows) == expected",
                f"E       AssertionError: assert {got} == {self.rng.randint(10, 99)}",
                f"E        +  where {got} = {fn}([{{'name': 'é', 'total': 3}}])",
                "",
                f"tests/test_{name}.py:{self.rng.randint(12, 240)}: AssertionError",
            ]
            summary.append(f"FAILED {test} - AssertionError")
        rows += ["=" * 24 + " short test summary info " + "=" * 24, *summary]
        rows.append(f"{len(fails)} failed, {total - len(fails)} passed in {secs:.2f}s")
        return "python -m pytest -q", 1, "\n".join(rows) + "\n", f"{len(fails)} failing test(s)"

    def log(self) -> Command:
        rows = []
        for _ in range(self.rng.randint(8, 20)):
            subject = self.rng.choice(COMMIT_SUBJECTS)
            fn = f"{self.rng.choice(VERBS)}_{self.rng.choice(NOUNS)}"
            subject = subject.format(fn=fn, noun=self.rng.choice(NOUNS))
            rows.append(f"{self.rng.getrandbits(28):07x} {subject}")
        n = len(rows)
        return f"git log --oneline -n {n}", 0, "\n".join(rows) + "\n", f"last {n} commits"

    def pyproject(self) -> Command:
        text = f"""[project]
name = "{self.package.replace("_", "-")}"
version = "0.{self.rng.randint(1, 30)}.{self.rng.randint(0, 9)}"
description = "Invented demo project"
requires-python = ">=3.12"
dependencies = ["httpx>=0.27", "msgspec>=0.18", "rich>=13"]

[project.optional-dependencies]
dev = ["pytest>=8", "ruff>=0.6", "mypy>=1.11"]

[project.scripts]
{self.package.replace("_", "-")} = "{self.package}.cli:main"

[tool.ruff]
line-length = 100
target-version = "py312"

[tool.ruff.lint]
select = ["E", "F", "I", "UP", "B"]

[tool.pytest.ini_options]
addopts = "-ra"
testpaths = ["tests"]
"""
        return "cat pyproject.toml", 0, text, "read the project metadata"

    def counts(self) -> Command:
        rows = [f"{len(self.source(n)):5d} {self.path(n)}" for n in self.names]
        total = sum(len(self.source(n)) for n in self.names)
        rows.append(f"{total:5d} total")
        return f"wc -l src/{self.package}/*.py", 0, "\n".join(rows) + "\n", f"{total} lines"

    def lint(self) -> Command:
        if self.rng.random() < 0.6:
            return "ruff check src tests", 0, "All checks passed!\n", "lint clean"
        rows = []
        for _ in range(self.rng.randint(1, 4)):
            name = self.rng.choice(self.names)
            code, text = self.rng.choice(
                (
                    ("F401", "`os` imported but unused"),
                    ("E501", "Line too long (104 > 100)"),
                    ("B006", "Do not use mutable data structures for argument defaults"),
                    ("UP006", "Use `list` instead of `List` for type annotation"),
                )
            )
            where = f"{self.path(name)}:{self.rng.randint(3, 90)}:{self.rng.randint(1, 40)}"
            rows.append(f"{where}: {code} {text}")
        rows.append(f"Found {len(rows)} error{'s' if len(rows) > 1 else ''}.")
        return "ruff check src tests", 1, "\n".join(rows) + "\n", f"{len(rows) - 1} lint error(s)"

    def command(self, kind: str) -> Command:
        """A command of `kind` (see KINDS) run in this repository."""
        if kind == "failure":
            command, code, out = self.rng.choice(FAILURES)
            return command, code, out, "failed" if code else "printed fine"
        if kind == "tests":
            return self.tests_run(self.rng.random() < 0.4)
        builders = {"status": self.status, "listing": self.listing, "show": self.show}
        builders.update(numbered=self.numbered, search=self.search, diff=self.diff)
        builders.update(log=self.log, pyproject=self.pyproject, counts=self.counts)
        return builders.get(kind, self.lint)()

    def pick(self) -> Command:
        kinds, weights = zip(*KINDS, strict=True)
        return self.command(self.rng.choices(kinds, weights)[0])


#: failing and odd commands (command, exit code, output)
FAILURES: tuple[tuple[str, int, str], ...] = (
    ("cat missing.txt", 1, "cat: missing.txt: No such file or directory\n"),
    ("test -d build/output", 1, ""),
    ("ls nope", 2, "ls: cannot access 'nope': No such file or directory\n"),
    ("./run-tests.sh", 127, "bash: ./run-tests.sh: No such file or directory\n"),
    ('echo "naïve café — 日本語 ✅"', 0, "naïve café — 日本語 ✅\n"),
)
#: repository commands and their weights
KINDS = (
    ("status", 3),
    ("listing", 2),
    ("show", 4),
    ("numbered", 3),
    ("search", 3),
    ("diff", 3),
    ("tests", 3),
    ("log", 1),
    ("pyproject", 1),
    ("counts", 1),
    ("lint", 2),
    ("failure", 2),
)


def _uuid7(rng: random.Random, moment: datetime) -> str:
    ms = int(moment.timestamp() * 1000)
    raw = (ms << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62)
    raw |= rng.getrandbits(62)
    return str(uuid.UUID(int=raw))


class _Session:
    """Writes one session (and its subagent child, if any)."""

    def __init__(
        self, rng: random.Random, index: int, scenario: str, root: Path, long: bool = False
    ) -> None:
        self.rng = rng
        self.scenario = scenario
        self.long = long  # a long working session: many follow-up turns of many commands
        self.root = root
        start = _START + timedelta(days=index // 4, hours=index % 4 * 2, minutes=rng.randint(0, 59))
        self.project = PROJECTS[index % len(PROJECTS)]
        self.cwd = f"/home/dev/projects/{self.project}"
        thread = _uuid7(rng, start)
        self.out = _Rollout(rng, thread, self.cwd, start)
        self.model, self.effort = rng.choice(MODELS)
        self.files: list[Path] = []
        self.repo = Repo(rng, self.project)

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
            developer = _message("developer", PERMISSIONS.format(cwd=self.cwd), "input_text")
            collaboration = f"<collaboration_mode>{COLLABORATION}</collaboration_mode>"
            developer["content"].append({"type": "input_text", "text": collaboration})
            developer["content"].append({"type": "input_text", "text": SKILLS})
            out.add("response_item", developer)
            agents = _agents_md(self.project, self.cwd, self.repo.package)
            out.add("response_item", _message("user", agents, "input_text"))
            env = (
                f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
                f"  <current_date>{out.clock.date()}</current_date>\n"
                "  <timezone>Europe/Berlin</timezone>\n  <approval_policy>never</approval_policy>\n"
                "  <sandbox_mode>workspace-write</sandbox_mode>\n"
                "  <network_access>restricted</network_access>\n</environment_context>"
            )
            out.add("response_item", _message("user", env, "input_text"))
            out.add("world_state", {"full": True, "state": {"cwd": self.cwd}})
        settings = {"model": self.model, "reasoning_effort": self.effort}
        sandbox: Obj = {"type": "workspace-write", "writable_roots": [self.cwd, "/tmp"]}
        sandbox.update(network_access=False, exclude_tmpdir_env_var=False, exclude_slash_tmp=False)
        out.add(
            "turn_context",
            {
                "turn_id": turn,
                "cwd": self.cwd,
                "workspace_roots": [self.cwd],
                "current_date": str(out.clock.date()),
                "timezone": "Europe/Berlin",
                "approval_policy": "never",
                "sandbox_policy": sandbox,
                "permission_profile": {"type": "workspace-write"},
                "model": self.model,
                "personality": "pragmatic",
                "collaboration_mode": {"mode": "default", "settings": settings},
                "multi_agent_version": "v1",
                "realtime_active": False,
                "effort": self.effort,
                "summary": "auto",
                "truncation_policy": {"mode": "tokens", "limit": 10000},
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

    def think(self, out: _Rollout, turn: str, hint: str = "") -> None:
        out.tick(20, 600)
        rng = self.rng
        rid = f"rs_{rng.getrandbits(96):024x}"
        title, body = rng.choice(THOUGHTS)
        summary = f"**{title}**\n\n{body.format(hint=hint or 'the workspace')}"
        out.item(turn, {"type": "Reasoning", "id": rid, "summary_text": [summary]})
        sealed = base64.urlsafe_b64encode(rng.randbytes(rng.randint(16, 110))).decode()
        out.add(
            "response_item",
            {
                "type": "reasoning",
                "id": rid,
                "summary": [{"type": "summary_text", "text": summary}],
                "content": None,
                "encrypted_content": f"gAAAAA{sealed}",
            },
        )

    def shell(self, out: _Rollout, turn: str, command: str, code: int, text: str) -> None:
        args: Obj = {"cmd": command, "workdir": self.cwd}
        if self.rng.random() < 0.3:
            args.update(yield_time_ms=10000, max_output_tokens=self.rng.choice((4000, 12000)))
        call = self._call(out, "exec_command", args)
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
        repo = self.repo
        notes = NOTES.format(package=repo.package, module=repo.names[0])
        name = repo.names[0]
        lines = repo.source(name)
        at = next(n for n, line in enumerate(lines) if line.startswith("DEFAULT_LIMIT"))
        old, new = lines[at], 'DEFAULT_LIMIT = int(os.environ.get("DEFAULT_LIMIT", "100"))'
        hunk = [f" {x}" for x in lines[at - 2 : at]] + [f"-{old}", f"+{new}"]
        hunk += [f" {x}" for x in lines[at + 1 : at + 3]]
        added = "".join(f"+{line}\n" for line in notes.splitlines())
        body = (
            f"*** Begin Patch\n*** Add File: notes.md\n{added}"
            f"*** Update File: {repo.path(name)}\n@@\n" + "\n".join(hunk) + "\n*** End Patch\n"
        )
        payload = {"type": "custom_tool_call", "status": "completed", "call_id": call}
        out.add("response_item", {**payload, "name": "apply_patch", "input": body})
        usage = out.call_usage(turn)
        out.tick()
        change: Obj = {"type": "FileChange", "id": call, "status": "completed"}
        diff = f"@@ -{at - 1},5 +{at - 1},5 @@\n" + "\n".join(hunk) + "\n"
        change["changes"] = {
            f"{self.cwd}/notes.md": {"type": "add", "content": notes},
            f"{self.cwd}/{repo.path(name)}": {
                "type": "update",
                "unified_diff": diff,
                "move_path": None,
            },
        }
        out.item(turn, change)
        text = (
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
        )
        out.add(
            "response_item",
            {
                **_output(call, f"{text}A notes.md\nM {repo.path(name)}\n"),
                "type": "custom_tool_call_output",
            },
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

    def work_turn(
        self, out: _Rollout, first: bool, prompt: str, calls: int, failing: bool = False
    ) -> str:
        turn = self.turn_start(out, first)
        self.prompt(out, turn, prompt)
        rng = self.rng
        picks = [self.repo.pick() for _ in range(calls)]
        if failing:  # one of each failure exit code
            picks += [(c, code, text, "failed") for c, code, text in FAILURES if code]
            rng.shuffle(picks)
        for n, (command, code, text, _) in enumerate(picks):
            if rng.random() < 0.5:
                self.think(out, turn, f"`{command.split(' | ')[0]}`")
            if n and rng.random() < 0.6:
                note = rng.choice(COMMENTARY).format(cmd=command.split(" | ")[0])
                self.say(out, turn, note, "commentary")
            self.shell(out, turn, command, code, text)
        rows = [
            f"- `{c}`: {note}" + (f" (exit {code})" if code else "") for c, code, _, note in picks
        ]
        answer = rng.choice(OPENERS) + "\n\n" + "\n".join(rows)
        if any(code for _, code, _, _ in picks):
            answer += "\n\n" + rng.choice(CLOSERS_FAILED)
        else:
            answer += "\n\n" + rng.choice(CLOSERS_OK)
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
            self.work_turn(out, True, prompt, rng.randint(1, 4), failing=kind == "failing")
        if kind == "interrupt":
            self.interrupted_turn(out)
        elif kind == "failed":
            turn = self.turn_start(out, False)
            self.prompt(out, turn, rng.choice(FOLLOW_UPS))
            self.think(out, turn)
            self.shell(out, turn, *self.repo.pick()[:3])
            self.complete(out, turn, None, "stream disconnected before completion")
        elif kind == "compaction":
            out.tick(1000, 3000)
            summary = COMPACTION.format(
                cwd=self.cwd, package=self.repo.package, module=self.repo.names[0]
            )
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
        for _ in range(rng.randint(8, 20) if self.long else 0):
            out.tick(20_000, 600_000)
            self.work_turn(out, False, rng.choice(FOLLOW_UPS), rng.randint(4, 14))
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


def generate(
    root: Path, *, sessions: int = 12, seed: int = 0, long_sessions: bool = True
) -> list[Path]:
    """Write `sessions` Codex sessions (plus subagent children) under `root`; sorted paths."""
    rng = random.Random(seed)
    long = long_indexes("codex", seed, sessions, long_sessions)
    paths: list[Path] = []
    for index in range(sessions):
        if index < len(SCENARIOS):
            scenario = SCENARIOS[index]
        else:
            scenario = rng.choice(SCENARIOS + ("plain",) * 5)
        session_rng = random.Random(rng.getrandbits(64))
        paths.extend(_Session(session_rng, index, scenario, Path(root), index in long).write())
    return sorted(paths)
