"""Generate a deterministic demo corpus of Claude Code session transcripts (no network).

The files imitate what Claude Code 2.1.332 writes for interactive (``entrypoint: "cli"``,
``promptSource: "typed"``) sessions, modelled on real 2.1.332 transcripts and on the public 2.1.x
interactive samples (``turn_duration``, ``ai-title``, ``permission-mode``, file-history snapshots):

* layout ``<root>/projects/<cwd with "/" and "." as "-">/<sessionId>.jsonl``; subagents in
  ``<sessionId>/subagents/agent-<agentId>.jsonl`` plus ``agent-<agentId>.meta.json``;
* every content block of one API response is its own ``assistant`` line; all lines of a response
  share ``message.id`` and ``requestId`` and repeat the response's final ``stop_reason`` and
  ``usage`` (with ``output_tokens_details.thinking_tokens``);
* tool results are ``user`` lines with ``tool_result`` blocks, ``toolUseResult`` and
  ``sourceToolAssistantUUID``; failed Bash calls read ``Exit code N`` (``is_error: true``);
* bookkeeping lines: ``queue-operation``, ``attachment`` (``deferred_tools_delta``,
  ``skill_listing``, ``date``, ``queued_command``), ``last-prompt``, ``tools-used``, ``ai-title``,
  ``permission-mode``, ``file-history-snapshot`` and ``system`` (``turn_duration``, ``api_error``,
  ``compact_boundary``);
* request bookkeeping, as 2.1.332 writes it before every API request (``api-request``; the
  first requests of a transcript also ``api-request-shape``, ``api-request-blob`` and
  ``prompt_snapshot`` attachments), ``atis-latch``, ``cost-state`` and ``mode``
  (`traceidx.demo.claude_requests`). None of them makes an Item, so they decide, as in real
  transcripts, how many Items a megabyte holds.

Scenarios (seeded rates; the first eight sessions each showcase one so small corpora have them
all): foreground subagents, mid-turn steering, interrupts (tool rejected / mid-stream), synthetic
API errors, compaction (manual ``/compact`` or automatic), tool output over 70 KiB, non-ASCII
prompts, failing commands and failed edits.
"""

from __future__ import annotations

import base64
import calendar
import functools
import random
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from traceidx.demo.claude_requests import Requests
from traceidx.demo.shape import long_indexes

Obj = dict[str, Any]

VERSION = "2.1.332"
BASE_MS = calendar.timegm((2026, 1, 5, 9, 0, 0, 0, 0, 0)) * 1000
SPAN_DAYS = 70  # 2026-01-05 .. mid-March: three calendar months
DAY_MS = 86_400_000
AUTO_COMPACT_TOKENS = 150_000

# Per-turn / per-call rates of the scenarios.
RATES = {
    "subagent": 0.10,
    "steering": 0.07,
    "interrupt_tool": 0.05,
    "interrupt_stream": 0.02,
    "api_error": 0.03,
    "compaction": 0.05,  # per session
    "long_output": 0.012,  # per Bash call
    "edit_failure": 0.08,  # per Edit call
}
SHOWCASE = (
    "subagent",
    "steering",
    "interrupt_tool",
    "api_error",
    "compaction",
    "long_output",
    "interrupt_stream",
    "subagent",
)

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ENCODER = msgspec.json.Encoder()
_UNSET = "\x00leaf"

# ---------------------------------------------------------------------------------------------
# Content pools (small, combined at random)

MODELS = (("claude-opus-4-5", 5), ("claude-sonnet-4-5", 4), ("claude-haiku-4-5", 2))
PERMISSION_MODES = (("default", 5), ("acceptEdits", 3), ("bypassPermissions", 2))
DEFERRED_TOOLS = ("NotebookEdit", "WebFetch", "WebSearch", "TaskStop", "CronCreate", "CronList")
SKILLS = (
    ("update-config", "Configure the Claude Code harness via settings.json."),
    ("code-review", "Review the current diff for correctness bugs."),
    ("simplify", "Review changed code for reuse and simplification, then apply fixes."),
    ("init", "Initialize a new CLAUDE.md file with codebase documentation."),
    ("security-review", "Complete a security review of the pending changes."),
)
COMMIT_MSGS = (
    "Fix off-by-one in pagination",
    "Add retry with backoff to the HTTP client",
    "Refactor config loading",
    "Bump dependencies",
    "Add CLI --verbose flag",
    "Document environment variables",
    "Speed up report rendering",
    "Handle missing files gracefully",
)
FN_NAMES = ("parse_line", "load_config", "render", "normalize", "merge_rows", "retry", "validate")
SLUG_WORDS = ("typed", "sparking", "fiddle", "parsed", "sleeping", "heron", "quiet", "amber", "fox")
MISSING_TOOLS = ("pnpm", "poetry", "golangci-lint", "bazel", "terraform")
COMMIT_VERBS = ("fix", "handle", "simplify", "test", "document", "speed up", "validate", "log")
COMMIT_OBJECTS = (
    "empty input in {fn}",
    "unicode in {fn}",
    "{noun} batching",
    "error path of {fn}",
    "the {mod} retry loop",
    "duplicate keys in {noun}",
    "{fn} edge cases",
    "malformed lines when not strict",
)
COMMIT_BODIES = (
    "The old code returned None for an empty input, which the callers\ndid not expect.",
    "Callers now get a typed error with the line number instead of a\nbare ValueError.",
    "No behaviour change; this only moves the parsing into one place so\nthe next fix "
    "is smaller.\n\nRefs #142",
    "Adds regression tests for the cases found while debugging the CI\nfailure on main.",
    "The limit was checked after the append, so one record too many was\nkept. Check it first.",
)
AUTHORS = (
    "Dev Example <dev@example.com>",
    "Mira Chen <mira@acme.dev>",
    "Jonas Weber <jw@acme.dev>",
)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
GIT_HINTS = (
    '  (use "git add <file>..." to update what will be committed)',
    '  (use "git restore <file>..." to discard changes in working directory)',
    '  (use "git add <file>..." to include in what will be committed)',
)
EDIT_NOTES = (
    "keep the original order",
    "empty input is valid here",
    "callers rely on a list, never None",
    "see the regression test",
    "strip once, not twice",
    "guard against blank keys",
)
PY_ERRORS = (
    "TypeError: 'NoneType' object is not iterable",
    "AssertionError: assert [''] == []",
    "AttributeError: 'NoneType' object has no attribute 'strip'",
    "KeyError: 'value'",
    "AssertionError: assert ['a', 'b'] == ['a', 'b', 'c']",
)
LINT_RULES = {
    "py": (
        ("F401", "[*] `os` imported but unused"),
        ("E501", "Line too long (104 > 100)"),
        ("F841", "Local variable `tmp` is assigned to but never used"),
        ("B006", "Do not use mutable data structures for argument defaults"),
        ("UP035", "[*] Import from `collections.abc` instead: `Iterable`"),
        ("SIM108", "Use ternary operator instead of `if`-`else`-block"),
    ),
    "ts": (
        ("@typescript-eslint/no-unused-vars", "'tmp' is assigned a value but never used"),
        ("@typescript-eslint/no-explicit-any", "Unexpected any. Specify a different type"),
        ("prefer-const", "'out' is never reassigned. Use 'const' instead"),
        ("no-console", "Unexpected console statement"),
    ),
    "go": (
        ("printf", "fmt.Sprintf format %d has arg rec.Key of wrong type string"),
        ("unusedresult", "result of fmt.Sprintf call not used"),
        ("copylocks", "assignment copies lock value to b: sync.Mutex"),
    ),
}
LS_EXTRA = {
    "py": ("__init__.py", "__main__.py", "py.typed", "_compat.py"),
    "ts": ("index.ts", "types.ts", "utils.ts"),
    "go": ("doc.go", "options.go"),
}
EXTRA_FILES = {
    "py": ("README.md", "pyproject.toml", "tests/conftest.py", "Makefile"),
    "ts": ("README.md", "package.json", "tsconfig.json", "src/index.ts", "vite.config.ts"),
    "go": ("README.md", "go.mod", "go.sum", "Makefile", "cmd/server/main.go"),
}
BUILD_ERRORS = (
    "undefined: {fn}",
    "cannot use result (variable of type []string) as string value in return statement",
    "Cannot find name '{fn}'. Did you mean '{mod}'?",
    "Type 'string | undefined' is not assignable to type 'string'.",
    "missing return",
)
DOC_INTROS = (
    "The `{mod}` module reads key=value input, validates it and hands the records to the "
    "report layer. `{fn}` is the entry point most callers need.",
    "This page describes the `{mod}` helpers: parsing, validation and batching. Start with "
    "`{fn}`; the other functions are building blocks for it.",
)

PROMPTS = (
    ("en", "Fix the failing test in {test} and explain the cause.", "Fix failing {mod} test"),
    ("en", "Add type hints to {path} and make the linter pass.", "Add type hints to {mod}"),
    ("en", "Why does the build fail? Please investigate and fix it.", "Investigate build failure"),
    ("en", "Refactor {path} to remove the duplicated parsing code.", "Refactor {mod} parsing"),
    ("en", "Can you add a --verbose flag to the CLI?", "Add verbose CLI flag"),
    ("en", "Find where `{fn}` is used and check the error handling.", "Review {fn} error handling"),
    ("en", "ship it 🚀 run the linters and commit if everything is green ✅", "Lint and commit"),
    ("en", "Quick one: what does `{fn}` return when the input is empty? 🤔", "Explain {fn}"),
    ("en", "The CI job is red on main, can you figure out why?", "Debug CI failure"),
    ("en", "Please write unit tests for `{fn}` covering the edge cases.", "Test {fn} edge cases"),
    ("en", "Rename `{fn}` to something clearer and update all call sites.", "Rename {fn}"),
    ("en", "Add logging around the retry loop in {path}.", "Add retry logging"),
    ("en", "Is there dead code in {path}? Remove it if so.", "Remove dead code in {mod}"),
    ("en", "Bump the minimum supported version and fix whatever breaks.", "Bump min version"),
    ("en", "Review my last commit for bugs.", "Review last commit"),
    ("en", "Make `{fn}` handle unicode input properly.", "Unicode handling in {fn}"),
    ("de", "Bitte prüfe, warum der Build fehlschlägt, und behebe es.", "Build-Fehler beheben"),
    ("de", "Kannst du die Tests für {mod} ausführen und die Fehler zusammenfassen?", "Tests {mod}"),
    ("zh", "请帮我检查一下 {mod} 模块里的错误处理，并补充单元测试。", "检查 {mod} 错误处理"),
    ("zh", "这个函数 `{fn}` 太慢了，能优化一下吗？", "优化 {fn}"),
    ("ja", "{mod} のテストが失敗している原因を調べて、修正してください。", "{mod} テスト修正"),
    ("ja", "README に使い方のセクションを追加してください 🙏", "README 使い方追加"),
)
FOLLOWUPS = (
    ("en", "Thanks! Now also update the changelog."),
    ("en", "Looks good. Please run the full test suite once more."),
    ("en", "Can you commit this with a sensible message?"),
    ("en", "Hmm, that broke something else, can you check {test}?"),
    ("de", "Danke! Jetzt bitte noch die Doku anpassen."),
    ("zh", "好的，再跑一遍测试。"),
    ("ja", "ありがとう！コミットしてください。"),
    ("en", "👍 and please keep the public API unchanged"),
    ("en", "ok, now run the linter too"),
    ("en", "Can you also add a test for the error path?"),
    ("en", "That's not quite it. The bug only happens with an empty list."),
    ("en", "great, push a commit"),
    ("en", "What about {path}? Same problem there?"),
)
STEERING = (
    "Also print DONE when you are finished.",
    "Don't touch the migrations folder please.",
    "Use the existing helper in utils instead of a new one.",
    "另外，完成后请运行一下 lint。",
    "Bitte keine neuen Abhängigkeiten hinzufügen.",
)
COMMENTARY = (
    "Let me look at the current state first.",
    "I'll check the failing test and the code it exercises.",
    "Now let me run the tests again.",
    "Let me search for the other call sites.",
    "I'll make the change and verify it.",
    "Checking the git state before committing.",
    "Mal sehen, was hier liegt.",
    "Let me read the module before editing it.",
)
THINKING = (
    "The failure mentions `{fn}`; I should read {path} to see how it handles an empty input.",
    "The user wants a minimal change. Edit {path}, then run the tests for {mod}.",
    "Two call sites use `{fn}`. Checking both before changing the signature.",
    "The linter complaint is about an unused import in {path}; easy fix.",
    "Tests pass now. I should summarise what changed and why.",
)
THINKING_MORE = (
    "Looking at the traceback again: the error is raised inside the loop, not at the call site. "
    "So the input is fine and the problem is the `None` that comes back when the list is empty.",
    "Options: (1) return an empty list early, (2) make the caller tolerate `None`. Option 1 is "
    "smaller and keeps the contract the tests describe, so I'll go with that.",
    "I shouldn't change the public API here, so any new parameter of `{fn}` has to be "
    "keyword-only with a default that keeps today's behaviour.",
    "{test} already has a fixture for this; I can add a parametrized case instead of writing a "
    "new test function, which keeps the file consistent.",
    "Wait, the strip happens twice in `{fn}`. Not a bug, but if I'm editing that line anyway I "
    "can compute it once and make the intent clearer.",
    "Before committing I want to see the full diff, to be sure I didn't leave debugging output "
    "in {path} or change formatting in unrelated lines.",
    "The build error says the symbol is undefined, which usually means a rename didn't reach "
    "every file. A search for `{fn}` across the repository will show what is left.",
    "Unicode: the trimming has to handle non-breaking spaces and full-width spaces too, "
    "otherwise the Japanese sample input from the bug report still produces a blank entry.",
    "The CI log shows the failure only on one job, so it's probably environment-specific. "
    "I'll reproduce it locally with the same command before guessing at a fix.",
    "I have enough context now. Plan: fix `{fn}`, add a regression test in {test}, run the "
    "{mod} tests, then the full suite and the linter.",
)
COMMENTARY_MORE = (
    "The test fails because `{fn}` returns None for an empty list. Let me look at {path} to see "
    "why.",
    "Good, the {mod} tests pass. Let me also run the linter before summarising.",
    "That grep shows two more call sites. I'll update them too so the behaviour stays consistent.",
    "The edit didn't apply because the snippet had changed. Let me re-read the file and retry.",
    "Now I understand the problem: the helper strips each item twice and drops the empty case. "
    "I'll fix it in one place.",
)
FINAL_SECTIONS = {
    "en": (
        "**What changed**",
        "**Root cause**",
        "**Verification**",
        "**Notes**",
        (
            "`{path}`: `{fn}` now returns an empty list for empty input instead of `None`",
            "`{test}`: added a regression test for the empty and whitespace-only cases",
            "removed the duplicated strip call in the loop",
            "the error message now includes the line number",
            "`docs/{mod}.md`: documented the strict mode and the limit",
            "no public API change; the new parameter is keyword-only with the old default",
        ),
        "The loop in `{fn}` never ran for an empty list, and the early return that used to "
        "handle it was removed in a refactor, so the function fell through and returned `None`. "
        "Callers iterate over the result, hence the `TypeError` in the test.",
        "- `{cmd}`: {n} passed\n- `{lint}`: clean",
        "I didn't touch the other modules. If you want, I can apply the same guard to the "
        "similar helper in the report code, which has the same pattern.",
    ),
    "de": (
        "**Änderungen**",
        "**Ursache**",
        "**Prüfung**",
        "**Hinweise**",
        (
            "`{path}`: `{fn}` liefert bei leerer Eingabe jetzt eine leere Liste",
            "`{test}`: Regressionstest für leere Eingaben ergänzt",
            "doppelter Aufruf von strip entfernt",
        ),
        "Die Schleife in `{fn}` lief bei leerer Eingabe nie, und der frühe Rücksprung fehlte "
        "seit dem letzten Refactoring.",
        "- `{cmd}`: {n} bestanden\n- `{lint}`: keine Fehler",
        "Die öffentliche API ist unverändert.",
    ),
    "zh": (
        "**修改内容**",
        "**原因**",
        "**验证**",
        "**备注**",
        (
            "`{path}`：`{fn}` 在输入为空时返回空列表",
            "`{test}`：新增空输入的回归测试",
            "删除了循环中重复的 strip 调用",
        ),
        "重构时删除了提前返回，导致空列表时 `{fn}` 返回 `None`。",
        "- `{cmd}`：{n} 个测试通过\n- `{lint}`：没有问题",
        "公共 API 没有变化。",
    ),
    "ja": (
        "**変更点**",
        "**原因**",
        "**確認**",
        "**補足**",
        (
            "`{path}`: 空入力のとき `{fn}` が空リストを返すように修正",
            "`{test}`: 空入力の回帰テストを追加",
            "ループ内の重複した strip 呼び出しを削除",
        ),
        "リファクタリングで早期リターンが消え、空リストのとき `{fn}` が `None` を返していました。",
        "- `{cmd}`: {n} 件成功\n- `{lint}`: 問題なし",
        "公開 API は変更していません。",
    ),
}
PROMPT_CONTEXT = (
    "Context: this started after the last refactor of {path}; before that the same input worked.",
    "Please keep the change small, we want to backport it to the release branch.",
    "Don't change the public API, other services import this module.",
    "I ran the tests locally and got the output below.",
    "Also check whether the same pattern exists elsewhere in {mod}.",
    "When you're done, run the full test suite and the linter, and tell me what you changed.",
    "Here is what I see:",
)
FINALS = {
    "en": (
        "Done. `{fn}` in `{path}` now handles the empty case; the tests for {mod} pass.",
        "Fixed: the build failed because of a stale import in `{path}`. Lint and tests are green.",
        "I refactored `{path}` so the parsing lives in one place. {n} tests pass.",
        "Summary:\n- updated `{path}`\n- added a regression test\n- all {n} tests pass",
    ),
    "de": (
        "Erledigt: `{fn}` in `{path}` ist korrigiert, alle {n} Tests laufen durch.",
        "Der Build schlug wegen eines veralteten Imports in `{path}` fehl. Jetzt ist alles grün.",
    ),
    "zh": (
        "已完成：修复了 `{path}` 中 `{fn}` 的错误处理，{n} 个测试全部通过。",
        "我优化了 `{fn}`，并补充了单元测试。",
    ),
    "ja": (
        "修正しました。`{path}` の `{fn}` が空入力を正しく扱うようになり、テストも通ります。",
        "README に使い方セクションを追加しました ✅",
    ),
}
AGENT_TASKS = (  # (agent type, description, prompt, report)
    (
        "Explore",
        "Find callers of {fn}",
        "Find every caller of `{fn}` and report file:line.",
        "`{fn}` is called from 2 places:\n- {path}:41\n- {test}:12\nNeither checks for None.",
    ),
    (
        "general-purpose",
        "Run test suite",
        "Run the test suite and list failures with file:line.",
        "The suite passes except one test in {test}: `{fn}([])` raises TypeError.",
    ),
    (
        "Plan",
        "Plan the refactor",
        "Plan how to split {path} into smaller modules.",
        "Plan:\n1. Move parsing out of {path}.\n2. Keep `{fn}` as a thin wrapper.\n3. Add tests.",
    ),
)
AGENT_BRIEF = (
    "The repository is at {cwd}. Do not modify any files; this is a read-only investigation.\n"
    "Look at {path} and {test} first, then follow imports as needed. For every finding give the "
    "file path and line number, quote the relevant line, and say in one sentence why it matters. "
    "Ignore generated files, vendored code and anything under node_modules or .venv.\n\n"
    "Report format:\n1. A one-paragraph summary.\n2. A list of findings (file:line, quote, "
    "reason).\n3. Anything you could not determine and why.\n\nKeep the report under 400 words."
)
AGENT_ADVICE = (
    "Summary: the empty-input path of `{fn}` is the only place that can return `None`; all "
    "other paths return a list. The callers in {path} assume a list and iterate over it "
    "directly, so a guard at the top of `{fn}` (return an empty list) fixes every caller at "
    "once. {test} has no case for empty input, which is why this was not caught.\n\n"
    "Not determined: whether any external package imports `{fn}`; nothing in this repository "
    "suggests so."
)
API_ERRORS = (
    (500, "api_error", "server_error", "500 Internal server error"),
    (529, "overloaded_error", "server_error", "529 Overloaded"),
)
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)
CAVEAT = (
    "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as "
    "a request, and its output goes straight to the user. It's recorded here as context for later "
    "messages.</local-command-caveat>"
)
COMPACT_COMMAND = (
    "<command-name>/compact</command-name>\n            <command-message>compact</command-message>"
    "\n            <command-args></command-args>"
)
UPDATED = "(file state is current in your context — no need to Read it back)"


# ---------------------------------------------------------------------------------------------
# Small helpers


def _enc(obj: Obj) -> bytes:
    return _ENCODER.encode(obj)


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _tok(text: str) -> int:
    """A rough token count (about 3.5 characters per token)."""
    return len(text) * 2 // 7 + 1


def _weighted(rng: random.Random, pairs: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def encode_cwd(cwd: str) -> str:
    """Claude Code's project directory name for a working directory."""
    return cwd.replace("/", "-").replace(".", "-")


class _Ids:
    """Random identifiers in Claude Code's formats, all drawn from one seeded rng."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def b62(self, n: int) -> str:
        return "".join(self.rng.choices(_B62, k=n))

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def msg(self) -> str:
        return "msg_01" + self.b62(22)

    def req(self) -> str:
        return "req_011C" + self.b62(24)

    def toolu(self) -> str:
        return "toolu_01" + self.b62(22)

    def agent(self) -> str:
        return "a" + self.hex(16)

    def signature(self, size: int = 96) -> str:
        return base64.b64encode(self.rng.randbytes(size)).decode()


# ---------------------------------------------------------------------------------------------
# Projects and their source files


@dataclass(frozen=True)
class _Lang:
    ext: str
    comment: str
    src: str
    test_path: str
    test_cmd: str
    lint_cmd: str
    build_cmd: str


LANGS = {
    "py": _Lang(
        ext="py",
        comment="#",
        src="src/{pkg}",
        test_path="tests/test_{mod}.py",
        test_cmd="pytest -q {test}",
        lint_cmd="ruff check .",
        build_cmd="make dist",
    ),
    "ts": _Lang(
        ext="ts",
        comment="//",
        src="src",
        test_path="src/{mod}.test.ts",
        test_cmd="npx vitest run {test}",
        lint_cmd="npx eslint src",
        build_cmd="npm run build",
    ),
    "go": _Lang(
        ext="go",
        comment="//",
        src="internal/{mod}",
        test_path="internal/{mod}/{mod}_test.go",
        test_cmd="go test ./internal/{mod}/...",
        lint_cmd="go vet ./...",
        build_cmd="make build",
    ),
}


@dataclass(frozen=True)
class _Project:
    cwd: str
    lang: str
    modules: tuple[str, ...]
    branches: tuple[str, ...]
    weight: int

    @property
    def pkg(self) -> str:
        return self.cwd.rsplit("/", 1)[1].replace("-", "_").replace(".", "_")

    def path(self, mod: str) -> str:
        lang = LANGS[self.lang]
        return lang.src.format(pkg=self.pkg, mod=mod) + f"/{mod}.{lang.ext}"

    def test(self, mod: str) -> str:
        return LANGS[self.lang].test_path.format(mod=mod)


PROJECTS = (
    _Project(
        "/home/dev/projects/ledger", "py", ("parser", "models", "report", "cli"), ("main",), 5
    ),
    _Project(
        "/home/dev/projects/pixel-forge", "ts", ("canvas", "palette", "export"), ("main", "dev"), 3
    ),
    _Project("/home/dev/projects/site.io", "ts", ("routes", "feed", "layout"), ("main",), 2),
    _Project(
        "/home/dev/code/api-gateway", "go", ("router", "auth", "ratelimit"), ("main", "auth-v2"), 4
    ),
    _Project(
        "/home/dev/projects/notebook-tools", "py", ("cells", "kernel", "export"), ("main",), 2
    ),
    _Project(
        "/home/dev/src/github.com/acme/ingest", "go", ("queue", "worker"), ("main", "fix/retry"), 2
    ),
)

# Source files are assembled from per-language snippet templates: a header, the turn's focus
# function and a seeded selection of further functions/classes, so files range from a few dozen
# to several hundred lines. Slots read ``<<name>>``; Go templates are indented with four spaces
# and converted to tabs.

_SLOT = re.compile(r"<<(\w+)>>")
VERBS = ("load", "scan", "group", "check", "flush", "encode", "split", "apply", "collect", "sort")
NOUNS = ("entries", "header", "record", "batch", "index", "token", "payload", "window", "chunk")
TEST_CASES = (
    "empty",
    "single_item",
    "unicode",
    "whitespace",
    "large_input",
    "duplicates",
    "trailing_newline",
    "crlf",
    "nested",
    "missing_key",
    "roundtrip",
    "invalid_type",
)

_PY_HEADER = '''"""<<Mod>> helpers for <<pkg>>.

This module reads, validates and normalises <<mod>> <<noun>>s. The public entry points are
re-exported from ``<<pkg>>.__init__``; names starting with an underscore are internal.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
DEFAULT_LIMIT = <<n>>


class <<Mod>>Error(ValueError):
    """Raised when <<mod>> input cannot be processed."""


@dataclass
class <<Mod>>Record:
    """One <<noun>> with the line it came from."""

    key: str
    value: str = ""
    line: int = 0
    tags: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not self.value.strip()
'''
_PY_MAIN = '''def <<fn>>(items: list[str]) -> list[str]:
    """Strip every item and drop the blank ones (the order is kept)."""
    out = []
    for item in items:
        if item.strip():
            out.append(item.strip())
    return out
'''
_PY_PARTS = (
    '''def <<name>>(path: Path, *, strict: bool = False) -> list[<<Mod>>Record]:
    """Read <<noun>>s from `path`; skip malformed lines unless `strict`."""
    out: list[<<Mod>>Record] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            raw = raw.rstrip("\\n")
            if not raw or raw.startswith("#"):
                continue
            key, sep, value = raw.partition("=")
            if not sep:
                if strict:
                    raise <<Mod>>Error(f"{path}:{lineno}: expected key=value, got {raw!r}")
                log.warning("skipping malformed line %d in %s", lineno, path)
                continue
            out.append(<<Mod>>Record(key.strip(), value.strip(), lineno))
    return out
''',
    '''def <<name>>(records: Iterable[<<Mod>>Record]) -> dict[str, list[<<Mod>>Record]]:
    """Group records by key, keeping the first-seen order of the keys."""
    groups: dict[str, list[<<Mod>>Record]] = {}
    for record in records:
        if record.is_empty():
            continue
        groups.setdefault(record.key, []).append(record)
    log.debug("grouped %d keys", len(groups))
    return groups
''',
    '''def <<name>>(record: <<Mod>>Record) -> list[str]:
    """Return the problems found in `record` (an empty list when it is valid)."""
    problems = []
    if not _KEY_RE.match(record.key):
        problems.append(f"line {record.line}: invalid key {record.key!r}")
    if len(record.value) > DEFAULT_LIMIT:
        problems.append(f"line {record.line}: value longer than {DEFAULT_LIMIT} characters")
    if record.value != record.value.strip():
        problems.append(f"line {record.line}: surrounding whitespace in {record.key!r}")
    for tag in record.tags:
        if not tag.isidentifier():
            problems.append(f"line {record.line}: bad tag {tag!r}")
    return problems
''',
    '''class <<Name>>:
    """Accumulates <<noun>>s and flushes them to `sink` in batches."""

    def __init__(self, sink: list[<<Mod>>Record], batch_size: int = <<n>>) -> None:
        self._sink = sink
        self._batch: list[<<Mod>>Record] = []
        self._batch_size = batch_size
        self.flushed = 0

    def add(self, record: <<Mod>>Record) -> None:
        self._batch.append(record)
        if len(self._batch) >= self._batch_size:
            self.flush()

    def flush(self) -> int:
        if not self._batch:
            return 0
        self._sink.extend(self._batch)
        count = len(self._batch)
        self.flushed += count
        self._batch.clear()
        log.info("flushed %d <<noun>>s (%d in total)", count, self.flushed)
        return count

    def __enter__(self) -> <<Name>>:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
''',
    '''def <<name>>(records: list[<<Mod>>Record], width: int = 72) -> str:
    """Render records as an aligned two-column table."""
    if not records:
        return "(no <<noun>>s)"
    key_width = max(len(r.key) for r in records)
    lines = []
    for record in sorted(records, key=lambda r: (r.key, r.line)):
        value = record.value
        if len(value) > width - key_width - 3:
            value = value[: width - key_width - 6] + "..."
        lines.append(f"{record.key.ljust(key_width)} : {value}")
    return "\\n".join(lines)
''',
    '''def <<name>>(action: Callable[[], T], attempts: int = 3, delay: float = 0.5) -> T:
    """Call `action` until it succeeds, sleeping `delay` * 2**n between attempts."""
    last: Exception | None = None
    for attempt in range(attempts):
        try:
            return action()
        except (OSError, <<Mod>>Error) as exc:
            last = exc
            wait = delay * 2**attempt
            log.warning("attempt %d/%d failed: %s", attempt + 1, attempts, exc)
            time.sleep(wait)
    assert last is not None
    raise <<Mod>>Error(f"giving up after {attempts} attempts") from last
''',
    '''def <<name>>(
    base: dict[str, str], override: dict[str, str], *, keep_empty: bool = False
) -> dict[str, str]:
    """Merge two mappings; values from `override` win unless they are blank."""
    merged = dict(base)
    for key, value in override.items():
        if not value and not keep_empty:
            continue
        if key in merged and merged[key] != value:
            log.debug("override %s: %r -> %r", key, merged[key], value)
        merged[key] = value
    return merged
''',
    '''def <<name>>(text: str) -> <<Mod>>Record:
    """Parse ``key = value  # tag1, tag2`` into a record."""
    body, _, comment = text.partition("#")
    key, sep, value = body.partition("=")
    if not sep:
        raise <<Mod>>Error(f"missing '=' in {text!r}")
    tags = [t.strip() for t in comment.split(",") if t.strip()]
    return <<Mod>>Record(key.strip(), value.strip(), 0, tags)
''',
    '''def <<name>>(
    records: Iterable[<<Mod>>Record], *, limit: int = DEFAULT_LIMIT
) -> Iterator[<<Mod>>Record]:
    """Yield the non-empty records, at most `limit` of them, with duplicate keys dropped."""
    seen: set[str] = set()
    for count, record in enumerate(records):
        if count >= limit:
            log.info("stopping after %d <<noun>>s", limit)
            return
        if record.is_empty() or record.key in seen:
            continue
        seen.add(record.key)
        yield record
''',
)
_PY_TEST_HEADER = '''"""Tests for <<pkg>>.<<mod>>."""

from __future__ import annotations

import pytest

from <<pkg>>.<<mod>> import <<Mod>>Error, <<Mod>>Record, <<fn>>
'''
_PY_TEST_PARTS = (
    """def test_<<fn>>_<<case>>() -> None:
    items = [" a ", "", "b", "   ", "c\\n"]
    assert <<fn>>(items) == ["a", "b", "c"]
""",
    """@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ([], []),
        ([""], []),
        (["x"], ["x"]),
        ([" x ", "y "], ["x", "y"]),
        (["ü", " 日本 "], ["ü", "日本"]),
    ],
)
def test_<<fn>>_<<case>>(raw: list[str], expected: list[str]) -> None:
    assert <<fn>>(raw) == expected
""",
    """def test_<<fn>>_<<case>>_keeps_order() -> None:
    items = [f" item-{i} " for i in range(<<n>>)]
    result = <<fn>>(items)
    assert len(result) == <<n>>
    assert result == sorted(result, key=lambda s: int(s.split("-")[1]))
""",
    """def test_record_<<case>>() -> None:
    record = <<Mod>>Record("name", "  ", 3)
    assert record.is_empty()
    with pytest.raises(<<Mod>>Error, match="boom"):
        raise <<Mod>>Error("boom")
""",
)

_TS_HEADER = """// <<Mod>> helpers: parsing, validation and rendering of <<noun>>s.
//
// Everything exported here is re-exported from src/index.ts.

import { readFile } from "node:fs/promises";
import path from "node:path";

export const DEFAULT_LIMIT = <<n>>;

export interface <<Mod>>Record {
  key: string;
  value: string;
  line: number;
  tags: string[];
}

export class <<Mod>>Error extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = "<<Mod>>Error";
  }
}
"""
_TS_MAIN = """export function <<fn>>(items: string[]): string[] {
  const out: string[] = [];
  for (const item of items) {
    if (item.trim()) out.push(item.trim());
  }
  return out;
}
"""
_TS_PARTS = (
    """export async function <<camel>>(file: string, strict = false): Promise<<<Mod>>Record[]> {
  const text = await readFile(file, "utf8");
  const records: <<Mod>>Record[] = [];
  text.split(/\\r?\\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const eq = line.indexOf("=");
    if (eq < 0) {
      if (strict) {
        const where = `${path.basename(file)}:${index + 1}`;
        throw new <<Mod>>Error(`${where}: expected key=value`, index + 1);
      }
      return;
    }
    const key = line.slice(0, eq).trim();
    records.push({ key, value: line.slice(eq + 1).trim(), line: index + 1, tags: [] });
  });
  return records;
}
""",
    """export function <<camel>>(records: <<Mod>>Record[]): Map<string, <<Mod>>Record[]> {
  const groups = new Map<string, <<Mod>>Record[]>();
  for (const record of records) {
    if (!record.value) continue;
    const bucket = groups.get(record.key);
    if (bucket) bucket.push(record);
    else groups.set(record.key, [record]);
  }
  return groups;
}
""",
    """export function <<camel>>(record: <<Mod>>Record): string[] {
  const problems: string[] = [];
  if (!/^[A-Za-z_][\\w.-]*$/.test(record.key)) {
    problems.push(`line ${record.line}: invalid key ${JSON.stringify(record.key)}`);
  }
  if (record.value.length > DEFAULT_LIMIT) {
    problems.push(`line ${record.line}: value longer than ${DEFAULT_LIMIT} characters`);
  }
  for (const tag of record.tags) {
    if (tag.includes(" ")) problems.push(`line ${record.line}: bad tag ${tag}`);
  }
  return problems;
}
""",
    """export class <<Name>> {
  private batch: <<Mod>>Record[] = [];
  flushed = 0;

  constructor(
    private readonly sink: (batch: <<Mod>>Record[]) => void,
    private readonly batchSize = <<n>>,
  ) {}

  add(record: <<Mod>>Record): void {
    this.batch.push(record);
    if (this.batch.length >= this.batchSize) this.flush();
  }

  flush(): number {
    if (this.batch.length === 0) return 0;
    const count = this.batch.length;
    this.sink(this.batch);
    this.batch = [];
    this.flushed += count;
    return count;
  }
}
""",
    """export function <<camel>>(records: <<Mod>>Record[], width = 72): string {
  if (records.length === 0) return "(no <<noun>>s)";
  const keyWidth = Math.max(...records.map((r) => r.key.length));
  return [...records]
    .sort((a, b) => a.key.localeCompare(b.key) || a.line - b.line)
    .map((r) => {
      const room = width - keyWidth - 3;
      const value = r.value.length > room ? `${r.value.slice(0, room - 3)}...` : r.value;
      return `${r.key.padEnd(keyWidth)} : ${value}`;
    })
    .join("\\n");
}
""",
    """export async function <<camel>><T>(
  action: () => Promise<T>,
  attempts = 3,
  delayMs = 500,
): Promise<T> {
  let last: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await action();
    } catch (err) {
      last = err;
      const wait = delayMs * 2 ** attempt;
      console.warn(`attempt ${attempt + 1}/${attempts} failed; retrying in ${wait}ms`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  throw new <<Mod>>Error(`giving up after ${attempts} attempts: ${String(last)}`);
}
""",
    """export function <<camel>>(
  base: Record<string, string>,
  override: Record<string, string>,
  keepEmpty = false,
): Record<string, string> {
  const merged = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (!value && !keepEmpty) continue;
    merged[key] = value;
  }
  return merged;
}
""",
)
_TS_TEST_HEADER = """import { describe, expect, it } from "vitest";

import { <<fn>>, <<Mod>>Error } from "./<<mod>>";

describe("<<fn>>", () => {"""
_TS_TEST_PARTS = (
    """  it("handles <<case>>", () => {
    expect(<<fn>>([" a ", "", "b"])).toEqual(["a", "b"]);
    expect(<<fn>>([])).toEqual([]);
  });
""",
    """  it.each([
    [[], []],
    [[""], []],
    [[" x ", "y "], ["x", "y"]],
    [["ü", " 日本 "], ["ü", "日本"]],
  ])("<<case>> %j", (input, expected) => {
    expect(<<fn>>(input)).toEqual(expected);
  });
""",
    """  it("keeps the order (<<case>>)", () => {
    const items = Array.from({ length: <<n>> }, (_, i) => ` item-${i} `);
    const result = <<fn>>(items);
    expect(result).toHaveLength(<<n>>);
    expect(result[0]).toBe("item-0");
  });
""",
    """  it("throws a typed error (<<case>>)", () => {
    expect(() => {
      throw new <<Mod>>Error("boom", 3);
    }).toThrowError(<<Mod>>Error);
  });
""",
)

_GO_HEADER = """// Package <<mod>> implements <<noun>> parsing, validation and batching for <<pkg>>.
package <<mod>>

import (
    "bufio"
    "context"
    "errors"
    "fmt"
    "io"
    "sort"
    "strings"
    "sync"
    "time"
)

// DefaultLimit caps the length of a value.
const DefaultLimit = <<n>>

// Err<<Mod>> is returned for malformed input.
var Err<<Mod>> = errors.New("<<mod>>: malformed input")

// Record is one <<noun>> with the line it came from.
type Record struct {
    Key   string
    Value string
    Line  int
    Tags  []string
}
"""
_GO_MAIN = """// <<Fn>> trims every item and drops the blank ones.
func <<Fn>>(items []string) []string {
    out := make([]string, 0, len(items))
    for _, item := range items {
        if s := strings.TrimSpace(item); s != "" {
            out = append(out, s)
        }
    }
    return out
}
"""
_GO_PARTS = (
    """// <<Name>> reads key=value lines from r, skipping comments and blank lines.
func <<Name>>(r io.Reader, strict bool) ([]Record, error) {
    var out []Record
    sc := bufio.NewScanner(r)
    line := 0
    for sc.Scan() {
        line++
        text := strings.TrimSpace(sc.Text())
        if text == "" || strings.HasPrefix(text, "#") {
            continue
        }
        key, value, ok := strings.Cut(text, "=")
        if !ok {
            if strict {
                return nil, fmt.Errorf("line %d: %w", line, Err<<Mod>>)
            }
            continue
        }
        rec := Record{Key: strings.TrimSpace(key), Value: strings.TrimSpace(value), Line: line}
        out = append(out, rec)
    }
    return out, sc.Err()
}
""",
    """// <<Name>> groups records by key and returns the keys in sorted order.
func <<Name>>(records []Record) (map[string][]Record, []string) {
    groups := make(map[string][]Record)
    for _, rec := range records {
        if rec.Value == "" {
            continue
        }
        groups[rec.Key] = append(groups[rec.Key], rec)
    }
    keys := make([]string, 0, len(groups))
    for k := range groups {
        keys = append(keys, k)
    }
    sort.Strings(keys)
    return groups, keys
}
""",
    """// <<Name>> reports the problems found in rec.
func <<Name>>(rec Record) []string {
    var problems []string
    if rec.Key == "" || strings.ContainsAny(rec.Key, " \\t") {
        problems = append(problems, fmt.Sprintf("line %d: invalid key %q", rec.Line, rec.Key))
    }
    if len(rec.Value) > DefaultLimit {
        msg := fmt.Sprintf("line %d: value longer than %d bytes", rec.Line, DefaultLimit)
        problems = append(problems, msg)
    }
    for _, tag := range rec.Tags {
        if strings.TrimSpace(tag) != tag {
            problems = append(problems, fmt.Sprintf("line %d: bad tag %q", rec.Line, tag))
        }
    }
    return problems
}
""",
    """// <<Name>> collects records and flushes them in batches; it is safe for concurrent use.
type <<Name>> struct {
    mu      sync.Mutex
    batch   []Record
    size    int
    flush   func([]Record) error
    Flushed int
}

// New<<Name>> returns a batcher that calls flush every size records.
func New<<Name>>(size int, flush func([]Record) error) *<<Name>> {
    return &<<Name>>{size: size, flush: flush}
}

// Add queues rec and flushes when the batch is full.
func (b *<<Name>>) Add(rec Record) error {
    b.mu.Lock()
    defer b.mu.Unlock()
    b.batch = append(b.batch, rec)
    if len(b.batch) < b.size {
        return nil
    }
    return b.flushLocked()
}

func (b *<<Name>>) flushLocked() error {
    if len(b.batch) == 0 {
        return nil
    }
    if err := b.flush(b.batch); err != nil {
        return fmt.Errorf("flush %d records: %w", len(b.batch), err)
    }
    b.Flushed += len(b.batch)
    b.batch = b.batch[:0]
    return nil
}
""",
    """// <<Name>> calls fn until it succeeds, the attempts run out or ctx is done.
func <<Name>>(ctx context.Context, attempts int, delay time.Duration, fn func() error) error {
    var err error
    for i := 0; i < attempts; i++ {
        if err = fn(); err == nil {
            return nil
        }
        wait := delay * time.Duration(1<<i)
        select {
        case <-ctx.Done():
            return errors.Join(err, ctx.Err())
        case <-time.After(wait):
        }
    }
    return fmt.Errorf("giving up after %d attempts: %w", attempts, err)
}
""",
    """// <<Name>> renders records as an aligned two-column table.
func <<Name>>(records []Record, width int) string {
    if len(records) == 0 {
        return "(no <<noun>>s)"
    }
    keyWidth := 0
    for _, r := range records {
        if len(r.Key) > keyWidth {
            keyWidth = len(r.Key)
        }
    }
    var sb strings.Builder
    for _, r := range records {
        value := r.Value
        if room := width - keyWidth - 3; len(value) > room && room > 3 {
            value = value[:room-3] + "..."
        }
        fmt.Fprintf(&sb, "%-*s : %s\\n", keyWidth, r.Key, value)
    }
    return sb.String()
}
""",
    """// <<Name>> merges override into base; blank values in override are ignored.
func <<Name>>(base, override map[string]string) map[string]string {
    merged := make(map[string]string, len(base)+len(override))
    for k, v := range base {
        merged[k] = v
    }
    for k, v := range override {
        if v != "" {
            merged[k] = v
        }
    }
    return merged
}
""",
)
_GO_TEST_HEADER = """package <<mod>>

import (
    "reflect"
    "testing"
)
"""
_GO_TEST_PARTS = (
    """func Test<<Fn>><<Case>>(t *testing.T) {
    tests := []struct {
        name string
        in   []string
        want []string
    }{
        {"empty", nil, []string{}},
        {"blank", []string{"", "  "}, []string{}},
        {"trim", []string{" a ", "b"}, []string{"a", "b"}},
        {"unicode", []string{"ü", " 日本 "}, []string{"ü", "日本"}},
    }
    for _, tt := range tests {
        t.Run(tt.name, func(t *testing.T) {
            if got := <<Fn>>(tt.in); !reflect.DeepEqual(got, tt.want) {
                t.Errorf("<<Fn>>(%q) = %q, want %q", tt.in, got, tt.want)
            }
        })
    }
}
""",
    """func Test<<Fn>><<Case>>Order(t *testing.T) {
    in := make([]string, 0, <<n>>)
    for i := 0; i < <<n>>; i++ {
        in = append(in, " x ")
    }
    if got := <<Fn>>(in); len(got) != <<n>> {
        t.Fatalf("len = %d, want <<n>>", len(got))
    }
}
""",
)


@dataclass(frozen=True)
class _Code:
    header: str
    main: str
    parts: tuple[str, ...]
    test_header: str
    test_parts: tuple[str, ...]
    test_footer: str = ""


CODE = {
    "py": _Code(_PY_HEADER, _PY_MAIN, _PY_PARTS, _PY_TEST_HEADER, _PY_TEST_PARTS),
    "ts": _Code(_TS_HEADER, _TS_MAIN, _TS_PARTS, _TS_TEST_HEADER, _TS_TEST_PARTS, "});\n"),
    "go": _Code(_GO_HEADER, _GO_MAIN, _GO_PARTS, _GO_TEST_HEADER, _GO_TEST_PARTS),
}


def _camel(snake: str, upper: bool = True) -> str:
    out = "".join(part.title() for part in snake.split("_"))
    return out if upper else out[:1].lower() + out[1:]


def _fill(template: str, slots: dict[str, str], lang: str) -> str:
    text = _SLOT.sub(lambda m: slots[m.group(1)], template)
    if lang == "go":
        text = re.sub(r"(?m)^(?:    )+", lambda m: "\t" * (len(m.group(0)) // 4), text)
    return text


def _slots(project: _Project, mod: str, fn: str, rng: random.Random) -> dict[str, str]:
    noun = rng.choice(NOUNS).removesuffix("s")
    return {
        "mod": mod,
        "Mod": mod.title(),
        "pkg": project.pkg,
        "fn": fn,
        "Fn": _camel(fn),
        "noun": noun,
        "n": str(rng.choice((8, 16, 32, 50, 64, 100, 128, 256, 500, 1000))),
    }


@functools.lru_cache(maxsize=1024)
def _source(project: _Project, mod: str, fn: str, rev: int = 0) -> str:
    """The module `mod` of `project` (revision `rev`): tens to hundreds of lines, seeded."""
    rng = random.Random(f"{project.cwd}:{mod}:{fn}:{rev}")
    code, lang = CODE[project.lang], project.lang
    slots = _slots(project, mod, fn, rng)
    names = [f"{v}_{n}" for v in VERBS for n in NOUNS if f"{v}_{n}" != fn]
    count = min(22, max(1, round(rng.lognormvariate(1.75, 0.7))))
    chunks = []
    for name in rng.sample(names, count):
        part = rng.choice(code.parts)
        chunk_slots = {**slots, "name": name, "Name": _camel(name), "camel": _camel(name, False)}
        chunks.append(_fill(part, chunk_slots, lang))
    chunks.insert(rng.randint(0, len(chunks)), _fill(code.main, slots, lang))
    sep = "\n\n" if lang == "py" else "\n"
    return _fill(code.header, slots, lang) + sep + sep.join(chunks)


@functools.lru_cache(maxsize=1024)
def _test_source(project: _Project, mod: str, fn: str) -> str:
    """The test file of `mod`: a handful of test functions around `fn`."""
    rng = random.Random(f"test:{project.cwd}:{mod}:{fn}")
    code, lang = CODE[project.lang], project.lang
    slots = _slots(project, mod, fn, rng)
    chunks = []
    for case in rng.sample(TEST_CASES, rng.randint(4, 12)):
        part = rng.choice(code.test_parts)
        chunks.append(_fill(part, {**slots, "case": case, "Case": _camel(case)}, lang))
    sep = "\n\n" if lang == "py" else "\n"
    head = _fill(code.test_header, slots, lang)
    return head + sep + sep.join(chunks) + code.test_footer


# ---------------------------------------------------------------------------------------------
# Tool calls: what the model asks for and what the runtime answers


@dataclass
class _Call:
    name: str
    input: Obj
    content: str | list[Obj]
    result: Any  # toolUseResult: object or string
    is_error: bool = False
    duration_ms: int = 120
    extra: Obj = field(default_factory=dict)


@dataclass(frozen=True)
class _Sh:
    command: str
    description: str
    code: int
    stdout: str
    stderr: str = ""


@dataclass
class _Ctx:
    """What the tool planners need: the rng, the project and the turn's focus."""

    rng: random.Random
    ids: _Ids
    project: _Project
    mod: str
    fn: str
    rev: int = 0
    long_output: bool = False

    @property
    def path(self) -> str:
        return self.project.path(self.mod)

    @property
    def test(self) -> str:
        return self.project.test(self.mod)

    @property
    def abspath(self) -> str:
        return f"{self.project.cwd}/{self.path}"


def _src(c: _Ctx) -> str:
    return _source(c.project, c.mod, c.fn, c.rev)


def _go_module(project: _Project) -> str:
    return "github.com/acme/" + project.cwd.rsplit("/", 1)[1]


def _commit_msg(c: _Ctx) -> str:
    if c.rng.random() < 0.4:
        return c.rng.choice(COMMIT_MSGS)
    verb, what = c.rng.choice(COMMIT_VERBS), c.rng.choice(COMMIT_OBJECTS)
    return f"{c.mod}: {verb} {what.format(fn=c.fn, mod=c.mod, noun=c.rng.choice(NOUNS))}"


def _project_files(c: _Ctx) -> list[str]:
    files = [c.project.path(m) for m in c.project.modules]
    files += [c.project.test(m) for m in c.project.modules]
    return sorted(files + list(EXTRA_FILES[c.project.lang]))


def _sh_git_status(c: _Ctx) -> _Sh:
    mods = c.rng.sample(c.project.modules, min(len(c.project.modules), c.rng.randint(1, 3)))
    changed = [c.project.path(m) for m in mods] + [c.project.test(m) for m in mods[:1]]
    untracked = c.rng.sample(("notes.md", "scratch/", f"docs/{c.mod}.md", "tmp.json"), 2)
    if c.rng.random() < 0.4:
        out = "\n".join([f" M {p}" for p in changed] + [f"?? {p}" for p in untracked])
        return _Sh("git status --short", "Show working tree status", 0, out)
    branch = c.rng.choice(c.project.branches)
    lines = [f"On branch {branch}", f"Your branch is up to date with 'origin/{branch}'.", ""]
    lines += ["Changes not staged for commit:", *GIT_HINTS[:2]]
    lines += [f"\tmodified:   {p}" for p in changed]
    lines += ["", "Untracked files:", GIT_HINTS[2], *(f"\t{p}" for p in untracked)]
    lines += ["", 'no changes added to commit (use "git add" and/or "git commit -a")']
    return _Sh("git status", "Show working tree status", 0, "\n".join(lines))


def _sh_git_log(c: _Ctx) -> _Sh:
    if c.rng.random() < 0.5:
        n = c.rng.choice((5, 10, 15, 20, 30))
        out = "\n".join(f"{c.ids.hex(7)} {_commit_msg(c)}" for _ in range(n))
        return _Sh(f"git log --oneline -{n}", "Show recent commits", 0, out)
    n = c.rng.randint(3, 8)
    entries = []
    day = c.rng.randint(1, 28)
    for i in range(n):
        author = c.rng.choice(AUTHORS)
        body = "\n".join(f"    {line}" for line in c.rng.choice(COMMIT_BODIES).split("\n"))
        date = f"{c.rng.choice(WEEKDAYS)} Jan {max(1, day - i)} {c.rng.randint(8, 19)}:"
        date += f"{c.rng.randint(0, 59):02d}:{c.rng.randint(0, 59):02d} 2026 +0100"
        head = f"commit {c.ids.hex(40)}\nAuthor: {author}\nDate:   {date}\n\n"
        entries.append(f"{head}    {_commit_msg(c)}\n\n{body}\n")
    return _Sh(f"git log -{n}", "Show recent commits with messages", 0, "\n".join(entries))


def _hunks(lines: list[str], c: _Ctx, count: int) -> list[str]:
    """Unified-diff hunks that retouch `count` lines of a file."""
    comment = LANGS[c.project.lang].comment
    cands = [i for i, x in enumerate(lines) if x.strip() and i > 3]
    out = []
    for k in sorted(c.rng.sample(cands, min(count, len(cands)))):
        start, end = max(0, k - 3), min(len(lines), k + 4)
        new = [lines[k].replace("out", "result") + f"  {comment} {c.rng.choice(EDIT_NOTES)}"]
        if c.rng.random() < 0.4:
            indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
            new.insert(0, f"{indent}{comment} {c.rng.choice(EDIT_NOTES)}")
        size = end - start
        body = [" " + x for x in lines[start:k]] + ["-" + lines[k]] + ["+" + x for x in new]
        body += [" " + x for x in lines[k + 1 : end]]
        head = f"@@ -{start + 1},{size} +{start + 1},{size + len(new) - 1} @@"
        out.append("\n".join([head, *body]))
    return out


def _sh_git_diff(c: _Ctx) -> _Sh:
    mods = c.rng.sample(c.project.modules, min(len(c.project.modules), c.rng.randint(1, 3)))
    if c.rng.random() < 0.35:
        stats, add_total, rem_total = [], 0, 0
        for m in mods:
            add, rem = c.rng.randint(1, 80), c.rng.randint(0, 40)
            add_total, rem_total = add_total + add, rem_total + rem
            bar = "+" * min(add, 30) + "-" * min(rem, 15)
            stats.append(f" {c.project.path(m)} | {add + rem} {bar}")
        stats.append(
            f" {len(mods)} files changed, {add_total} insertions(+), {rem_total} deletions(-)"
        )
        return _Sh("git diff --stat", "Show diff summary", 0, "\n".join(stats))
    parts = []
    for m in mods[:2]:
        path = c.project.path(m)
        lines = _source(c.project, m, c.fn, c.rev).split("\n")
        parts.append(
            f"diff --git a/{path} b/{path}\nindex {c.ids.hex(7)}..{c.ids.hex(7)} 100644\n"
            f"--- a/{path}\n+++ b/{path}"
        )
        parts.extend(_hunks(lines, c, c.rng.randint(1, 4)))
    return _Sh("git diff", "Show the uncommitted changes", 0, "\n".join(parts))


def _sh_commit(c: _Ctx) -> _Sh:
    msg = _commit_msg(c)
    cmd = f'git add -A && git commit -m "{msg}"'
    files = c.rng.randint(1, 4)
    out = f"[{c.rng.choice(c.project.branches)} {c.ids.hex(7)}] {msg}\n"
    out += f" {files} files changed, {c.rng.randint(3, 160)} insertions(+), "
    out += f"{c.rng.randint(0, 60)} deletions(-)"
    if c.rng.random() < 0.4:
        out += f"\n create mode 100644 {c.project.test(c.mod)}"
    return _Sh(cmd, "Commit the changes", 0, out)


def _test_names(c: _Ctx, n: int) -> list[str]:
    cases = [TEST_CASES[i % len(TEST_CASES)] for i in range(n)]
    names = []
    for i, case in enumerate(cases):
        name = f"test_{c.fn}_{case}"
        names.append(name if i < len(TEST_CASES) else f"{name}[case{i // len(TEST_CASES)}]")
    return names


def _pytest_failure(c: _Ctx, passed: int) -> str:
    test_lines = _test_source(c.project, c.mod, c.fn).split("\n")
    line = c.rng.randint(10, max(11, len(test_lines)))
    name = f"test_{c.fn}_{c.rng.choice(TEST_CASES)}"
    frame = "\n".join(f"    {x}" for x in c.rng.choice(_PY_TEST_PARTS).split("\n")[1:5])
    err = c.rng.choice(PY_ERRORS).format(fn=c.fn)
    return (
        f"{'=' * 30} FAILURES {'=' * 30}\n{'_' * 20} {name} {'_' * 20}\n\n"
        f"    def {name}() -> None:\n{frame}\n>       assert {c.fn}(items) == expected\n"
        f"E       {err}\n\n{c.test}:{line}: {err.split(':')[0]}\n"
        f"{'=' * 24} short test summary info {'=' * 24}\n"
        f"FAILED {c.test}::{name} - {err}\n"
        f"{'=' * 20} 1 failed, {passed} passed in {c.rng.randint(1, 9)}.{passed % 100:02d}s "
        f"{'=' * 20}"
    )


def _sh_pytest(c: _Ctx, fail: bool) -> _Sh:
    style = c.rng.choice(("q", "v", "suite"))
    if style == "suite":
        cmd, files = "pytest", [c.project.test(m) for m in c.project.modules]
    else:
        cmd, files = f"pytest -{style} {c.test}", [c.test]
    head = (
        f"{'=' * 29} test session starts {'=' * 29}\n"
        "platform linux -- Python 3.12.8, pytest-8.3.4, pluggy-1.5.0\n"
        f"rootdir: {c.project.cwd}\nconfigfile: pyproject.toml\nplugins: cov-6.0.0\n"
    )
    counts = [c.rng.randint(4, 45) for _ in files]
    total = sum(counts)
    body = [] if style == "q" else [head + f"collected {total} items\n"]
    done = 0
    for path, n in zip(files, counts, strict=True):
        if style == "v":
            for i, name in enumerate(_test_names(c, n)):
                verdict = "FAILED" if fail and i == n // 2 else "PASSED"
                pct = (done + i + 1) * 100 // total
                body.append(f"{path}::{name} {verdict}".ljust(74) + f"[{pct:3d}%]")
        else:
            marks = "." * n if not fail or path != c.test else "." * (n - 1) + "F"
            done_pct = (done + n) * 100 // total
            prefix = f"{path} " if style == "suite" else ""
            body.append(f"{prefix}{marks}".ljust(74) + f"[{done_pct:3d}%]")
        done += n
    if fail:
        body.append("\n" + _pytest_failure(c, total - 1))
        return _Sh(cmd, "Run the tests", 1, "\n".join(body))
    secs = f"{c.rng.randint(0, 6)}.{c.rng.randint(10, 99)}s"
    summary = f"{total} passed in {secs}"
    if style != "q":
        summary = f"{'=' * 30} {summary} {'=' * 30}"
    return _Sh(cmd, "Run the tests", 0, "\n".join([*body, "", summary]))


def _sh_vitest(c: _Ctx, fail: bool) -> _Sh:
    cmd = f"npx vitest run {c.test}" if c.rng.random() < 0.6 else "npx vitest run"
    mods = [c.mod] if cmd.endswith(".ts") else list(c.project.modules)
    lines = [f" RUN  v2.1.8 {c.project.cwd}", ""]
    total = 0
    for m in mods:
        n = c.rng.randint(3, 30)
        total += n
        ms = c.rng.randint(3, 90)
        if fail and m == c.mod:
            lines.append(f" ❯ {c.project.test(m)} ({n} tests | 1 failed) {ms}ms")
            for name in _test_names(c, n):
                mark = "×" if name.endswith("empty") else "✓"
                lines.append(f"   {mark} {c.fn} > {name.removeprefix('test_')} {ms // 3}ms")
        else:
            lines.append(f" ✓ {c.project.test(m)} ({n} tests) {ms}ms")
    failed = 1 if fail else 0
    if fail:
        bar = "⎯" * 24
        lines += [
            "",
            f"{bar} Failed Tests 1 {bar}",
            "",
            f" FAIL  {c.test} > {c.fn} > handles empty",
            "AssertionError: expected [ '' ] to deeply equal []",
            "",
            "- Expected",
            "+ Received",
            "",
            "- []",
            "+ [",
            '+   "",',
            "+ ]",
            "",
            f" ❯ {c.test}:{c.rng.randint(5, 60)}:{c.rng.randint(3, 30)}",
            f'    {c.rng.randint(5, 60)}|     expect({c.fn}([" a ", "", "b"]))',
            "       |                      ^",
            "",
            "⎯" * 60,
        ]
    status = f"{failed} failed | {total - failed} passed" if fail else f"{total} passed"
    file_status = f"1 failed | {len(mods) - 1} passed" if fail else f"{len(mods)} passed"
    lines += [
        "",
        f" Test Files  {file_status} ({len(mods)})",
        f"      Tests  {status} ({total})",
        f"   Start at  {c.rng.randint(8, 19):02d}:{c.rng.randint(0, 59):02d}:"
        f"{c.rng.randint(0, 59):02d}",
        f"   Duration  {c.rng.randint(300, 4000)}ms (transform {c.rng.randint(20, 400)}ms, "
        f"setup 0ms, collect {c.rng.randint(20, 600)}ms, tests {c.rng.randint(5, 300)}ms, "
        f"environment 0ms, prepare {c.rng.randint(50, 300)}ms)",
    ]
    return _Sh(cmd, "Run the tests", 1 if fail else 0, "\n".join(lines))


def _sh_gotest(c: _Ctx, fail: bool) -> _Sh:
    module = _go_module(c.project)
    verbose = c.rng.random() < 0.5
    cmd = f"go test {'-v ' if verbose else ''}./internal/{c.mod}/..."
    lines = []
    if verbose:
        for name in _test_names(c, c.rng.randint(3, 25)):
            test = "Test" + _camel(name.removeprefix("test_").split("[")[0])
            lines.append(f"=== RUN   {test}")
            for sub in c.rng.sample(("empty", "blank", "trim", "unicode"), c.rng.randint(0, 4)):
                lines += [f"=== RUN   {test}/{sub}"]
            lines.append(f"--- PASS: {test} (0.00s)")
    if fail:
        test = f"Test{_camel(c.fn)}Empty"
        lines += [
            f"--- FAIL: {test} (0.00s)",
            f'    {c.mod}_test.go:{c.rng.randint(10, 80)}: {_camel(c.fn)}([]) = [""], want []',
            "FAIL",
            f"FAIL\t{module}/internal/{c.mod}\t0.0{c.rng.randint(10, 99)}s",
            "FAIL",
        ]
        return _Sh(cmd, "Run the tests", 1, "\n".join(lines))
    if verbose:
        lines.append("PASS")
    lines.append(f"ok  \t{module}/internal/{c.mod}\t0.{c.rng.randint(3, 900):03d}s")
    return _Sh(cmd, "Run the tests", 0, "\n".join(lines))


def _sh_tests(c: _Ctx) -> _Sh:
    fail = c.rng.random() < 0.3
    run = {"py": _sh_pytest, "ts": _sh_vitest, "go": _sh_gotest}[c.project.lang]
    return run(c, fail)


def _sh_lint(c: _Ctx) -> _Sh:
    cmd = LANGS[c.project.lang].lint_cmd
    lang = c.project.lang
    if c.rng.random() >= 0.3:
        ok = {"py": "All checks passed!", "ts": "", "go": ""}[lang]
        return _Sh(cmd, "Run the linter", 0, ok)
    lines = _src(c).split("\n")
    found = c.rng.sample(LINT_RULES[lang], c.rng.randint(1, min(4, len(LINT_RULES[lang]))))
    out = []
    if lang == "ts":
        out.append(f"{c.abspath}")
    for code, msg in found:
        k = c.rng.randrange(len(lines))
        col = c.rng.randint(1, 20)
        if lang == "py":
            out += [f"{c.path}:{k + 1}:{col}: {code} {msg}", "   |"]
            out += [f"{i + 1:>3}| {lines[i]}" for i in range(max(0, k - 2), k + 1)]
            out += ["   |" + " " * (col + 1) + "^^^^ " + code, "   |", ""]
        elif lang == "ts":
            out.append(f"  {k + 1}:{col}  error  {msg}  {code}")
        else:
            out.append(f"{c.path}:{k + 1}:{col}: {msg}")
    if lang == "py":
        out.append(f"Found {len(found)} error{'s' if len(found) > 1 else ''}.")
    elif lang == "ts":
        out += ["", f"✖ {len(found)} problem{'s' if len(found) > 1 else ''} ({len(found)} errors)"]
    else:
        out.insert(0, f"# {_go_module(c.project)}/internal/{c.mod}")
    return _Sh(cmd, "Run the linter", 1, "\n".join(out))


def _sh_ls(c: _Ctx) -> _Sh:
    src = c.path.rsplit("/", 1)[0]
    ext = LANGS[c.project.lang].ext
    names = sorted({f"{m}.{ext}" for m in c.project.modules} | set(LS_EXTRA[c.project.lang]))
    if c.rng.random() < 0.4:
        return _Sh(f"ls {src}", "List source files", 0, "\n".join(names))
    rows = [f"total {c.rng.randint(20, 200)}"]
    rows.append(f"drwxr-xr-x  {c.rng.randint(3, 9)} dev dev  4096 Jan  5 09:12 .")
    rows.append(f"drwxr-xr-x  {c.rng.randint(3, 9)} dev dev  4096 Jan  5 09:12 ..")
    for name in names:
        size = c.rng.randint(120, 24000)
        stamp = f"{c.rng.choice(('Dec', 'Jan'))} {c.rng.randint(1, 28):2d} {c.rng.randint(8, 19)}:"
        rows.append(f"-rw-r--r--  1 dev dev {size:5d} {stamp}{c.rng.randint(0, 59):02d} {name}")
    return _Sh(f"ls -la {src}", "List source files", 0, "\n".join(rows))


def _sh_grep(c: _Ctx) -> _Sh:
    top = c.path.split("/", 1)[0]
    hits = []
    for m in c.project.modules:
        for i, line in enumerate(_source(c.project, m, c.fn, c.rev).split("\n"), 1):
            if c.fn in line or "Error(" in line:
                hits.append(f"{c.project.path(m)}:{i}:{line}")
    hits = hits[: c.rng.choice((10, 20, 40))]
    cmd = f'grep -rn "{c.fn}\\|Error(" {top} | head -{len(hits)}'
    return _Sh(cmd, f"Find uses of {c.fn}", 0, "\n".join(hits))


def _sh_show(c: _Ctx) -> _Sh:
    """Print part of a source file (sed/head/cat), as agents often do."""
    lines = _src(c).split("\n")
    start = c.rng.randrange(max(1, len(lines) - 20)) + 1
    end = min(len(lines), start + c.rng.choice((30, 40, 60, 80, 120)))
    cmd = c.rng.choice((f"sed -n '{start},{end}p' {c.path}", f"head -n {end} {c.path}"))
    if cmd.startswith("head"):
        start = 1
    return _Sh(cmd, f"Show part of {c.path}", 0, "\n".join(lines[start - 1 : end]))


def _sh_heredoc(c: _Ctx) -> _Sh:
    cmd = (
        "cat > /tmp/sample.json <<'EOF'\n"
        f'{{"name": "{c.mod}", "items": [" a ", "", "b"]}}\nEOF\n'
        "python3 -m json.tool /tmp/sample.json"
    )
    items = '    "items": [\n        " a ",\n        "",\n        "b"\n    ]'
    out = f'{{\n    "name": "{c.mod}",\n{items}\n}}'
    return _Sh(cmd, "Write a sample input and pretty-print it", 0, out)


def _build_output(c: _Ctx) -> str:
    lang, pkg, rng = c.project.lang, c.project.pkg, c.rng
    version = f"0.{rng.randint(1, 9)}.{rng.randint(0, 20)}"
    if lang == "py":
        lines = [
            "python -m build",
            "* Creating isolated environment: venv+pip...",
            "* Installing packages in isolated environment:",
            "  - hatchling>=1.25",
            "* Getting build dependencies for sdist...",
            "* Building sdist...",
            "* Building wheel from sdist",
            "* Creating isolated environment: venv+pip...",
            "* Installing packages in isolated environment:",
            "  - hatchling>=1.25",
            "* Getting build dependencies for wheel...",
            "* Building wheel...",
        ]
        lines.append(
            f"Successfully built {pkg}-{version}.tar.gz and {pkg}-{version}-py3-none-any.whl"
        )
        return "\n".join(lines)
    if lang == "ts":
        name = c.project.cwd.rsplit("/", 1)[1]
        lines = [
            f"> {name}@{version} build",
            "> tsc -p tsconfig.json && vite build",
            "",
            "vite v5.4.11 building for production...",
            "transforming...",
            f"✓ {rng.randint(40, 900)} modules transformed.",
            "rendering chunks...",
            "computing gzip size...",
        ]
        lines.append(f"dist/index.html {' ' * 26}0.{rng.randint(30, 99)} kB │ gzip:  0.30 kB")
        for m in c.project.modules:
            size, gz = rng.randint(2000, 300000), rng.randint(900, 90000)
            asset = f"dist/assets/{m}-{c.ids.hex(8)}.js".ljust(40)
            lines.append(f"{asset}{size / 1000:>7.2f} kB │ gzip: {gz / 1000:>6.2f} kB")
        lines.append(f"✓ built in {rng.randint(1, 9)}.{rng.randint(10, 99)}s")
        return "\n".join(lines)
    module = _go_module(c.project)
    lines = [f"go build -v -o bin/{module.rsplit('/', 1)[1]} ./cmd/..."]
    lines += [f"{module}/internal/{m}" for m in c.project.modules]
    lines.append(f"{module}/cmd/{module.rsplit('/', 1)[1]}")
    return "\n".join(lines)


def _sh_make(c: _Ctx) -> _Sh:
    build = LANGS[c.project.lang].build_cmd
    cmd = f"cd {c.project.cwd} && {build}"
    if c.rng.random() < 0.3:
        lines = _src(c).split("\n")
        errs = [
            f"{c.path}:{c.rng.randrange(len(lines)) + 1}:{c.rng.randint(2, 30)}: error: "
            f"{c.rng.choice(BUILD_ERRORS).format(fn=c.fn, mod=c.mod)}"
            for _ in range(c.rng.randint(1, 4))
        ]
        err = "\n".join([*errs, "make: *** [Makefile:14: build] Error 1"])
        return _Sh(cmd, "Build the project", 2, "", err)
    return _Sh(cmd, "Build the project", 0, _build_output(c))


def _sh_missing_tool(c: _Ctx) -> _Sh:
    tool = c.rng.choice(MISSING_TOOLS)
    err = f"/bin/bash: line 1: {tool}: command not found"
    return _Sh(f"{tool} --version", f"Check {tool} version", 127, "", err)


def _sh_missing_dir(c: _Ctx) -> _Sh:
    err = "ls: cannot access 'build/': No such file or directory"
    return _Sh("ls build/", "List build output", 2, "", err)


def _sh_count(c: _Ctx) -> _Sh:
    ext = LANGS[c.project.lang].ext
    cmd = f"find . -name '*.{ext}' -not -path './.git/*' | xargs wc -l | sort -n | tail -15"
    files = _project_files(c)
    rows = [f"{c.rng.randint(20, 900):>6} ./{p}" for p in files if p.endswith(ext)]
    rows.append(f"{c.rng.randint(2000, 9000):>6} total")
    return _Sh(cmd, "Count lines per source file", 0, "\n".join(rows[-15:]))


def _sh_long(c: _Ctx) -> _Sh:
    """A command with more than 70 KiB of output."""
    cmd = LANGS[c.project.lang].test_cmd.format(test=".", mod=c.mod) + " -v 2>&1"
    n = c.rng.randint(950, 1350)
    lines = [
        f"{c.test}::test_{c.fn}_case_{i:04d} PASSED{' ' * 18}[{i * 100 // n:3d}%]" for i in range(n)
    ]
    lines.append(f"{n} passed in {n // 90}.{n % 100:02d}s")
    return _Sh(cmd, "Run the full test suite verbosely", 0, "\n".join(lines))


BASH_POOL: tuple[tuple[Callable[[_Ctx], _Sh], int], ...] = (
    (_sh_git_status, 6),
    (_sh_git_log, 3),
    (_sh_git_diff, 3),
    (_sh_commit, 2),
    (_sh_tests, 8),
    (_sh_lint, 4),
    (_sh_ls, 4),
    (_sh_grep, 4),
    (_sh_show, 3),
    (_sh_heredoc, 2),
    (_sh_make, 3),
    (_sh_missing_tool, 1),
    (_sh_missing_dir, 1),
    (_sh_count, 2),
)


def _plan_bash(c: _Ctx) -> _Call:
    gens, weights = zip(*BASH_POOL, strict=True)
    long = c.long_output or c.rng.random() < RATES["long_output"]
    c.long_output = False
    sh = _sh_long(c) if long else c.rng.choices(gens, weights=weights)[0](c)
    inp = {"command": sh.command, "description": sh.description}
    duration = c.rng.randint(40, 900) if sh.code != 127 else 15
    extra: Obj = {"sandboxed": False}
    if sh.code == 0:
        text = (
            "\n".join(s for s in (sh.stdout, sh.stderr) if s) or "(Bash completed with no output)"
        )
        result = {
            "stdout": sh.stdout,
            "stderr": sh.stderr,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return _Call("Bash", inp, text, result, False, duration, extra)
    body = "\n".join(s for s in (sh.stdout, sh.stderr) if s)
    text = f"Exit code {sh.code}\n{body}"
    return _Call("Bash", inp, text, f"Error: {text}", True, duration, extra)


def _numbered(content: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(content.split("\n"), 1))


def _plan_read(c: _Ctx) -> _Call:
    path = c.abspath
    if c.rng.random() < 0.2:
        path = f"{c.project.cwd}/{c.test}"
        content = _test_source(c.project, c.mod, c.fn)
    else:
        content = _src(c)
    n = content.count("\n") + 1
    file = {
        "filePath": path,
        "content": content,
        "numLines": n,
        "startLine": 1,
        "totalLines": n,
    }
    result = {"type": "text", "file": file}
    return _Call("Read", {"file_path": path}, _numbered(content), result, False, 25)


def _patch(lines: list[str], k: int, old: list[str], new: list[str]) -> Obj:
    start, end = max(0, k - 3), min(len(lines), k + len(old) + 3)
    hunk = [" " + x for x in lines[start:k]] + ["-" + x for x in old] + ["+" + x for x in new]
    hunk += [" " + x for x in lines[k + len(old) : end]]
    size = end - start
    return {
        "oldStart": start + 1,
        "oldLines": size,
        "newStart": start + 1,
        "newLines": size - len(old) + len(new),
        "lines": hunk,
    }


def _plan_edit(c: _Ctx) -> _Call:
    original = _src(c)
    lines = original.split("\n")
    comment = LANGS[c.project.lang].comment
    k = c.rng.choice([i for i, x in enumerate(lines) if c.fn in x or "return" in x])
    span = c.rng.choice((1, 2, 3, 4, 6, 8, 12, 16))
    old_lines = lines[k : k + span]
    while len(old_lines) > 1 and not old_lines[-1].strip():
        old_lines.pop()
    new_lines = [x.replace("out", "result").replace("items", "values") for x in old_lines]
    indent = old_lines[0][: len(old_lines[0]) - len(old_lines[0].lstrip())]
    if c.rng.random() < 0.5:
        new_lines.insert(0, f"{indent}{comment} {c.rng.choice(EDIT_NOTES)}")
    if new_lines == old_lines or c.rng.random() < 0.3:
        new_lines[-1] += f"  {comment} normalized"
    old, new = "\n".join(old_lines), "\n".join(new_lines)
    inp = {"replace_all": False, "file_path": c.abspath, "old_string": old, "new_string": new}
    if c.rng.random() < RATES["edit_failure"]:
        inp["old_string"] = old + " "
        msg = f"String to replace not found in file.\nString: {old} "
        text = f"<tool_use_error>{msg}</tool_use_error>"
        return _Call("Edit", inp, text, f"Error: {msg}", True, 12)
    result = {
        "filePath": c.abspath,
        "oldString": old,
        "newString": new,
        "originalFile": original,
        "structuredPatch": [_patch(lines, k, old_lines, new_lines)],
        "userModified": False,
        "replaceAll": False,
    }
    text = f"The file {c.abspath} has been updated successfully. {UPDATED}"
    return _Call("Edit", inp, text, result, False, 30)


def _doc(c: _Ctx) -> str:
    cmd = LANGS[c.project.lang].test_cmd.format(test=c.test, mod=c.mod)
    fence = "```"
    return (
        f"# {c.mod}\n\n{c.rng.choice(DOC_INTROS).format(mod=c.mod, fn=c.fn)}\n\n"
        f"## Usage\n\n{fence}{c.project.lang}\n{c.rng.choice(CODE[c.project.lang].test_parts)}"
        f"{fence}\n\n## Behaviour\n\n"
        f"- `{c.fn}` strips every item and drops the blank ones; the order is kept.\n"
        "- An empty input gives an empty result (never `None`).\n"
        "- Values longer than the configured limit are reported, not truncated.\n"
        "- Malformed lines are skipped unless strict mode is on, which raises instead.\n\n"
        "## Options\n\n| Option | Default | Meaning |\n| --- | --- | --- |\n"
        "| `strict` | `false` | fail on the first malformed line |\n"
        "| `limit` | `DEFAULT_LIMIT` | maximum number of records to keep |\n"
        "| `batch_size` | `100` | records per flush |\n\n"
        f"## Testing\n\n{fence}sh\n{cmd}\n{fence}\n"
    )


def _plan_write(c: _Ctx) -> _Call:
    roll = c.rng.random()
    if roll < 0.3:
        path, content = f"{c.project.cwd}/docs/{c.mod}.md", _doc(c)
    elif roll < 0.65:  # a new module next to the one in focus
        helper = f"{c.mod}_helpers"
        path = f"{c.project.cwd}/{c.project.path(helper)}"
        content = _source(c.project, helper, c.fn, c.rev)
    else:
        path = f"{c.project.cwd}/{c.test}"
        content = _test_source(c.project, c.mod, c.fn)
    result: Obj = {
        "type": "create",
        "filePath": path,
        "content": content,
        "structuredPatch": [],
        "originalFile": None,
        "userModified": False,
    }
    text = f"File created successfully at: {path} {UPDATED}"
    return _Call("Write", {"file_path": path, "content": content}, text, result, False, 20)


def _plan_grep(c: _Ctx) -> _Call:
    mods = c.rng.sample(c.project.modules, min(len(c.project.modules), c.rng.randint(2, 4)))
    files = [c.project.path(m) for m in mods] + [c.project.test(m) for m in mods[:2]]
    if c.rng.random() < 0.4:
        inp: Obj = {"pattern": c.fn, "output_mode": "files_with_matches"}
        text = f"Found {len(files)} files\n" + "\n".join(files)
        result: Obj = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        return _Call("Grep", inp, text, result, False, 60)
    pattern = c.rng.choice((c.fn, "Error", "return", "DEFAULT_LIMIT"))
    hits = []
    for m in mods:
        lines = _source(c.project, m, c.fn, c.rev).split("\n")
        hits += [f"{c.project.path(m)}:{i}:{x}" for i, x in enumerate(lines, 1) if pattern in x]
    hits = hits[:40]
    inp = {"pattern": pattern, "output_mode": "content", "-n": True}
    content = "\n".join(hits)
    result = {"mode": "content", "numFiles": 0, "filenames": [], "content": content}
    result["numLines"] = len(hits)
    return _Call("Grep", inp, content or "No matches found", result, False, 70)


def _plan_glob(c: _Ctx) -> _Call:
    ext = LANGS[c.project.lang].ext
    files = [f"{c.project.cwd}/{p}" for p in _project_files(c) if p.endswith(f".{ext}")]
    result = {"filenames": files, "durationMs": c.rng.randint(5, 200), "numFiles": len(files)}
    result["truncated"] = False
    return _Call("Glob", {"pattern": f"**/*.{ext}"}, "\n".join(files), result, False, 40)


TOOL_POOL: tuple[tuple[Callable[[_Ctx], _Call], int], ...] = (
    (_plan_bash, 44),
    (_plan_read, 22),
    (_plan_edit, 15),
    (_plan_write, 6),
    (_plan_grep, 7),
    (_plan_glob, 6),
)


# ---------------------------------------------------------------------------------------------
# One transcript file: envelope, parent chain, token accounting


class _Transcript:
    """Builds the lines of one .jsonl file (a main session or a subagent)."""

    def __init__(self, gen: _SessionGen, model: str, agent_id: str | None = None) -> None:
        self.gen = gen
        self.ids = gen.ids
        self.rng = gen.rng
        self.model = model
        self.agent_id = agent_id
        self.lines: list[bytes] = []
        self.leaf: str | None = None
        self.slug: str | None = None
        self.cached = 0  # tokens already in the prompt cache
        self.pending = gen.rng.randint(9000, 21000)  # system prompt + tools, not yet cached
        self.tools_used: list[str] = []
        self.responses = 0
        self.last_usage: Obj = {}
        # the request bookkeeping lines, from their own random stream
        source = "repl_main_thread" if agent_id is None else "agent"
        self.requests = Requests(f"requests:{gen.session_id}:{agent_id}", source)
        self.new_messages = 0  # messages written since the last request
        self.unsent: str | None = None  # a new prompt the next request sends (its blob)

    # -- envelope -------------------------------------------------------------------------------

    def meta(self, body: Obj) -> None:
        body["sessionId"] = self.gen.session_id
        self.lines.append(_enc(body))

    def book(self, body: Obj, stamped: bool = True) -> None:
        """A bookkeeping line: its type, the session, then (`stamped`) time and version."""
        line: Obj = {"type": body.pop("type"), "sessionId": self.gen.session_id}
        if stamped:
            line.update(timestamp=self.gen.now(), version=VERSION)
        line.update(body)
        self.lines.append(_enc(line))

    def request(self) -> None:
        """The lines 2.1.332 writes before an API request (`traceidx.demo.claude_requests`)."""
        req = self.requests
        if req.count < 2:  # the system prompt, then the tools too, are snapshotted
            body: Obj = {"attachment": req.snapshot(with_tools=req.count == 1)}
            body.update(type="attachment", uuid=req.uuid(), timestamp=self.gen.now())
            self.line(body)
        if req.count == 0:
            self.book(req.shape_line())
        if self.unsent is not None:
            self.book(req.blob(self.unsent), stamped=False)
            self.unsent = None
        effort = "high" if self.model == "claude-opus-4-5" else "medium"
        self.book(req.request(self.model, effort, self.new_messages))
        self.new_messages = 0

    def line(self, body: Obj, parent: str | None = _UNSET, prompt_id: str | None = None) -> str:
        rec: Obj = {"parentUuid": self.leaf if parent == _UNSET else parent}
        rec["isSidechain"] = self.agent_id is not None
        if prompt_id is not None:
            rec["promptId"] = prompt_id
        if self.agent_id is not None:
            rec["agentId"] = self.agent_id
        rec.update(body)
        rec.update(self.gen.tail)
        if self.slug is not None:
            rec["slug"] = self.slug
        self.lines.append(_enc(rec))
        uid: str = body["uuid"]
        self.leaf = uid
        return uid

    def user(self, content: Any, extra: Obj | None = None, parent: str | None = _UNSET) -> str:
        body: Obj = {"type": "user", "message": {"role": "user", "content": content}}
        body["uuid"] = self.ids.uuid()
        body["timestamp"] = self.gen.now()
        body.update(extra or {})
        self.new_messages += 1
        return self.line(body, parent, self.gen.prompt_id)

    def attachment(self, att: Obj, rendered: Any, role: str = "system") -> str:
        body: Obj = {"attachment": att, "type": "attachment", "uuid": self.ids.uuid()}
        body["timestamp"] = self.gen.now()
        body["rendered"] = [{"content": rendered}]
        body["renderedRole"] = role
        return self.line(body)

    def system(self, subtype: str, fields: Obj, parent: str | None = _UNSET) -> str:
        body: Obj = {"type": "system", "subtype": subtype, **fields}
        body["timestamp"] = self.gen.now()
        body["uuid"] = self.ids.uuid()
        return self.line(body, parent)

    # -- model responses ------------------------------------------------------------------------

    def usage(self, output: int, thinking: int) -> Obj:
        created, read = self.pending + self.rng.randint(150, 900), self.cached
        self.cached += created
        self.pending = output
        return {
            "input_tokens": self.rng.randint(3, 60) if read else self.rng.randint(20, 120),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "output_tokens": output,
            "output_tokens_details": {"thinking_tokens": thinking},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {
                "ephemeral_1h_input_tokens": 0,
                "ephemeral_5m_input_tokens": created,
            },
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
        }

    def response(self, blocks: list[Obj], stop: str) -> list[str]:
        """Write one API response, one line per block; returns the line uuids."""
        self.request()
        self.gen.last_prompt(self)
        self._note_tools(blocks)
        thinking = sum(
            _tok(b["thinking"]) + self.rng.randint(5, 80) for b in blocks if "thinking" in b
        )
        output = thinking + sum(_tok(str(b.get("text") or b.get("input"))) for b in blocks)
        usage = self.usage(output + self.rng.randint(8, 40), thinking)
        self.last_usage = usage
        msg_id, req = self.ids.msg(), self.ids.req()
        sent = self.gen.clock
        self.gen.advance(700, 6000 + 40 * output)
        self.requests.spend(self.model, usage, self.gen.clock - sent)
        uids = []
        for i, block in enumerate(blocks):
            message: Obj = {"id": msg_id, "type": "message", "role": "assistant"}
            message["model"] = self.model
            message.update(content=[block], stop_reason=stop, stop_sequence=None, usage=usage)
            message["stop_details"] = None
            body: Obj = {"message": message, "apiBlockIndex": i, "requestId": req}
            body.update(type="assistant", uuid=self.ids.uuid(), timestamp=self.gen.now())
            uids.append(self.line(body))
            self.gen.advance(10, 60 + 4 * _tok(str(block)))
        self.responses += 1
        if self.responses == 1 and self.agent_id is None and self.gen.title:
            self.meta({"type": "ai-title", "aiTitle": self.gen.title})
        return uids

    def _note_tools(self, blocks: list[Obj]) -> None:
        new = [
            b["name"]
            for b in blocks
            if b["type"] == "tool_use" and b["name"] not in self.tools_used
        ]
        if new and self.agent_id is None:
            self.tools_used.extend(dict.fromkeys(new))
            self.meta({"type": "tools-used", "tools": list(self.tools_used)})

    def tool_results(self, calls: list[tuple[_Call, str, str]]) -> None:
        """One user line per call (call, tool_use id, uuid of its assistant line)."""
        for call, tid, src in calls:
            before = self.gen.clock
            self.gen.advance(call.duration_ms, call.duration_ms * 3)
            self.gen.tool_ms += self.gen.clock - before
            block: Obj = {"tool_use_id": tid, "type": "tool_result", "content": call.content}
            if call.is_error:
                block = {"type": "tool_result", "content": call.content, "is_error": True}
                block["tool_use_id"] = tid
            elif call.name == "Bash":
                block["is_error"] = False
            extra: Obj = {"toolUseResult": call.result, **call.extra}
            extra["sourceToolAssistantUUID"] = src
            if self.gen.permission_mode == "bypassPermissions" and not call.is_error:
                extra["permissionDecision"] = {
                    "decision": "accept",
                    "source": "config",
                    "reasonType": "mode",
                }
            self.user([block], extra, parent=src)
            self.pending += _tok(
                call.content if isinstance(call.content, str) else str(call.content)
            )

    def tool_step(self, calls: list[_Call], pre: list[Obj]) -> list[tuple[_Call, str, str]]:
        """A response with optional thinking/text blocks and tool_use blocks (no results yet)."""
        tids = [self.ids.toolu() for _ in calls]
        uses = [
            {"type": "tool_use", "id": t, "name": c.name, "input": c.input}
            for t, c in zip(tids, calls, strict=True)
        ]
        uids = self.response(pre + uses, "tool_use")
        return list(zip(calls, tids, uids[len(pre) :], strict=True))


# ---------------------------------------------------------------------------------------------
# One session: turns and scenarios


class _SessionGen:
    """Generates one main session (and its subagents) into memory."""

    def __init__(
        self, rng: random.Random, index: int, total: int, root: Path, long: bool = False
    ) -> None:
        self.rng = rng
        self.long = long  # a long working session: many turns of many steps
        self.ids = _Ids(rng)
        self.root = root
        self.project = rng.choices(PROJECTS, weights=[p.weight for p in PROJECTS])[0]
        self.session_id = self.ids.uuid()
        self.model = _weighted(rng, MODELS)
        self.permission_mode = _weighted(rng, PERMISSION_MODES)
        day = index * SPAN_DAYS // max(total, 1)
        self.clock = BASE_MS + day * DAY_MS + rng.randint(0, 9 * 3600) * 1000
        self.started, self.tool_ms = self.clock, 0
        self.tail: Obj = {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.project.cwd,
            "sessionId": self.session_id,
            "version": VERSION,
            "gitBranch": rng.choice(self.project.branches),
        }
        self.showcase = SHOWCASE[index] if index < len(SHOWCASE) else None
        self.compaction: str | None = None  # "manual" (/compact) or "auto" (a full context)
        if self.showcase == "compaction" or rng.random() < RATES["compaction"]:
            self.compaction = rng.choice(("manual", "auto"))
        self.prompt_id: str | None = None
        self.prompt_text = ""
        self.title = ""
        self.ack: str | None = None
        self.main = _Transcript(self, self.model)
        if self.compaction == "auto":  # many MCP tools and a big CLAUDE.md: a heavy context
            self.main.pending += rng.randint(115_000, 135_000)
        self.subagents: list[tuple[str, _Transcript, Obj]] = []

    # -- clock ------------------------------------------------------------------------------------

    def now(self) -> str:
        return _iso(self.clock)

    def advance(self, lo: int, hi: int) -> None:
        self.clock += self.rng.randint(lo, max(lo, hi))

    def ctx(self) -> _Ctx:
        mod = self.rng.choice(self.project.modules)
        fn = self.rng.choice(FN_NAMES)
        return _Ctx(self.rng, self.ids, self.project, mod, fn, self.rng.randrange(3))

    def last_prompt(self, tr: _Transcript) -> None:
        if tr is self.main:
            self.main.meta(
                {"type": "last-prompt", "lastPrompt": self.prompt_text, "leafUuid": tr.leaf}
            )
            if tr.requests.rng.random() < 0.65:
                tr.book({"type": "atis-latch", "atis": ""}, stamped=False)

    # -- session ----------------------------------------------------------------------------------

    def run(self) -> None:
        self.main.meta({"type": "permission-mode", "permissionMode": self.permission_mode})
        turns = self.rng.randint(12, 30) if self.long else self.rng.randint(1, 5)
        if self.compaction == "manual":
            turns = max(turns, 2)
        for t in range(turns):
            if t:
                self.between_turns(t == turns - 1)
            self.turn(t, self.showcase if t == turns - 1 else None)
        self.main.meta(
            {"type": "last-prompt", "lastPrompt": self.prompt_text, "leafUuid": self.main.leaf}
        )

    def wants_auto_compact(self, late: bool) -> bool:
        tr = self.main
        full = tr.cached + tr.pending >= AUTO_COMPACT_TOKENS
        if self.long and full:  # a long session fills its context now and then
            return True
        return self.compaction == "auto" and tr.responses >= 3 and (late or full)

    def between_turns(self, last: bool) -> None:
        if self.compaction == "manual" and (last or self.rng.random() < 0.5):
            self.manual_compact()
        if self.main.requests.rng.random() < 0.15:
            self.main.book({"type": "mode", "mode": "normal"}, stamped=False)
        gap = self.rng.choice((15, 40, 90, 240, 600, 1500)) * 1000
        self.advance(gap // 2, gap)
        if gap > 300_000:  # the 5-minute prompt cache expired
            self.main.pending += self.main.cached
            self.main.cached = 0

    def pick_prompt(self, t: int, c: _Ctx) -> tuple[str, str]:
        fmt = {"mod": c.mod, "fn": c.fn, "path": c.path, "test": c.test}
        if t == 0 or self.rng.random() < 0.3:
            lang, text, title = self.rng.choice(PROMPTS)
            if t == 0:
                self.title = title.format(**fmt)
        else:
            lang, text = self.rng.choice(FOLLOWUPS)
        text = text.format(**fmt)
        if self.rng.random() < 0.6:  # more context, often with pasted output
            extra = self.rng.sample(PROMPT_CONTEXT, self.rng.randint(1, 3))
            text += "\n\n" + " ".join(extra).format(**fmt)
            if self.rng.random() < 0.75:
                run = {"py": _sh_pytest, "ts": _sh_vitest, "go": _sh_gotest}[c.project.lang]
                text += f"\n\n```\n{run(c, True).stdout}\n```"
        return lang, text

    def open_turn(self, t: int, text: str) -> None:
        tr = self.main
        self.prompt_id, self.prompt_text = self.ids.uuid(), text
        tr.pending += _tok(text) + 20
        self.meta_queue(text)
        uid = self.ids.uuid()
        snap = {"messageId": uid, "trackedFileBackups": {}, "timestamp": self.now()}
        tr.meta({"type": "file-history-snapshot", "messageId": uid, "snapshot": snap})
        body: Obj = {"type": "user", "message": {"role": "user", "content": text}, "uuid": uid}
        body.update(timestamp=self.now(), permissionMode=self.permission_mode, promptSource="typed")
        body.update(sentAtMs=self.clock, rowSource="local")
        body["turnPosition"] = {"promptIndex": 0, "turnIndex": t + 1}
        tr.line(body, prompt_id=self.prompt_id)
        tr.new_messages += 1
        tr.unsent = text
        if t == 0:
            self.session_attachments()

    def meta_queue(self, text: str) -> None:
        ts = self.now()
        self.main.meta(
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts, "content": text}
        )
        self.advance(1, 3)
        self.main.meta({"type": "queue-operation", "operation": "dequeue", "timestamp": self.now()})

    def session_attachments(self) -> None:
        tr = self.main
        names = list(DEFERRED_TOOLS)
        delta = {"type": "deferred_tools_delta", "addedNames": names, "addedLines": names}
        for key in ("removedNames", "wireHiddenNames", "readdedNames", "pendingMcpServers"):
            delta[key] = []
        head = "The following deferred tools are now available via ToolSearch:\n"
        tr.attachment(
            delta, "<system-reminder>\n" + head + "\n".join(names) + "\n</system-reminder>"
        )
        listing = "\n".join(f"- {n}: {d}" for n, d in SKILLS)
        skills: Obj = {"type": "skill_listing", "content": listing, "skillCount": len(SKILLS)}
        skills.update(isInitial=True, names=[n for n, _ in SKILLS])
        skills["digests"] = [self.ids.hex(16) for _ in SKILLS]
        intro = "The following skills are available for use with the Skill tool:\n\n"
        tr.attachment(skills, f"<system-reminder>\n{intro}{listing}\n</system-reminder>")
        self.date_attachment(tr)

    def date_attachment(self, tr: _Transcript) -> None:
        day = self.now()[:10]
        rendered = f"<system-reminder>\nToday's date is {day}.\n</system-reminder>"
        tr.attachment({"type": "date", "date": day}, rendered)

    # -- turns ------------------------------------------------------------------------------------

    def pick_scenario(self, forced: str | None) -> str | None:
        if forced is not None:
            return forced
        roll = self.rng.random()
        for name in ("subagent", "steering", "interrupt_tool", "interrupt_stream", "api_error"):
            if roll < RATES[name]:
                return name
            roll -= RATES[name]
        return None

    def turn(self, t: int, forced: str | None) -> None:
        c = self.ctx()
        lang, text = self.pick_prompt(t, c)
        start, first_line = self.clock, len(self.main.lines)
        self.open_turn(t, text)
        scenario = self.pick_scenario(forced)
        c.long_output = scenario == "long_output"
        steps = self.rng.randint(5, 20) if self.long else self.rng.randint(1, 7)
        if forced is not None:
            steps = max(steps, 3)
        special = self.rng.randrange(steps)
        for j in range(steps):
            if scenario == "subagent" and j == special:
                self.subagent_step(c)
            elif scenario == "interrupt_tool" and j == steps - 1:
                self.interrupted_step(c)
                return
            else:
                self.work_step(c, steering=scenario == "steering" and j == special)
            if self.wants_auto_compact(j >= special):
                self.compact("auto")
        if scenario == "api_error":
            self.api_error()
        elif scenario == "interrupt_stream":
            self.stream_interrupt(lang, c)
        else:
            self.final_step(lang, c)
            self.turn_duration(start, len(self.main.lines) - first_line)
            self.main.book(self.main.requests.cost_state(self.started, self.clock, self.tool_ms))

    def pre_blocks(self, c: _Ctx, *, ack: str | None = None) -> list[Obj]:
        fmt = {"mod": c.mod, "fn": c.fn, "path": c.path}
        blocks: list[Obj] = []
        if self.rng.random() < 0.45:
            thought = self.thinking(c)
            size = 150 + len(thought.encode()) * 3 // 5 + self.rng.randint(0, 200)
            blocks.append(
                {"type": "thinking", "thinking": thought, "signature": self.ids.signature(size)}
            )
        if ack is not None:
            blocks.append({"type": "text", "text": ack})
        elif self.rng.random() < 0.55:
            text = self.rng.choice(COMMENTARY)
            if self.rng.random() < 0.4:
                text = self.rng.choice(COMMENTARY_MORE).format(**fmt)
            blocks.append({"type": "text", "text": text})
        return blocks

    def thinking(self, c: _Ctx) -> str:
        """A thinking block of one to several short paragraphs."""
        fmt = {"mod": c.mod, "fn": c.fn, "path": c.path, "test": c.test}
        count = self.rng.choice((1, 1, 2, 3, 3, 4, 5, 7))
        parts = [self.rng.choice(THINKING), *self.rng.sample(THINKING_MORE, count - 1)]
        text = parts[0]
        for part in parts[1:]:
            text += self.rng.choice((" ", "\n\n")) + part
        return text.format(**fmt)

    def plan_calls(self, c: _Ctx) -> list[_Call]:
        n = self.rng.choices((1, 2, 3), weights=(70, 20, 10))[0]
        planners, weights = zip(*TOOL_POOL, strict=True)
        calls = [self.rng.choices(planners, weights=weights)[0](c) for _ in range(n)]
        if c.long_output:
            calls[0] = _plan_bash(c)
        return calls

    def work_step(self, c: _Ctx, steering: bool = False) -> None:
        """One response with tool calls, then their results (and maybe a steering message)."""
        ack, self.ack = self.ack, None
        pending = self.main.tool_step(self.plan_calls(c), self.pre_blocks(c, ack=ack))
        if steering:
            self.steer(pending)
        else:
            self.main.tool_results(pending)

    def steer(self, pending: list[tuple[_Call, str, str]]) -> None:
        """The user types a message while tools run; it is absorbed into the running turn."""
        tr = self.main
        text = self.rng.choice(STEERING)
        sent = self.now()
        tr.meta({"type": "queue-operation", "operation": "enqueue", "timestamp": sent})
        tr.tool_results(pending)
        cmd, delivery = self.ids.uuid(), self.ids.uuid()
        op: Obj = {"type": "queue-operation", "operation": "remove", "timestamp": self.now()}
        op.update(content=text, reason="absorbed_mid_turn", commandUuid=cmd, deliveryId=delivery)
        tr.meta(op)
        prompt = [{"type": "text", "text": text}]
        att: Obj = {"type": "queued_command", "prompt": prompt, "source_uuid": cmd}
        att.update(delivery_id=delivery, commandMode="prompt", rowSource="local", timestamp=sent)
        att["hostsOwnTurn"] = True
        note = "<system-reminder>\nThe user sent a new message while you were working:\n"
        tr.attachment(att, [{"type": "text", "text": f"{note}{text}\n</system-reminder>"}])
        tr.pending += _tok(text) + 60
        self.ack = "Noted, I'll take that into account."

    def final_step(self, lang: str, c: _Ctx) -> None:
        text = self.final_text(lang, c)
        blocks = [b for b in self.pre_blocks(c) if b["type"] == "thinking"]
        self.main.response([*blocks, {"type": "text", "text": text}], "end_turn")

    def turn_duration(self, start: int, count: int) -> None:
        self.advance(20, 80)
        fields: Obj = {"durationMs": self.clock - start, "messageCount": count, "isMeta": False}
        self.main.system("turn_duration", fields)

    # -- scenarios --------------------------------------------------------------------------------

    def interrupted_step(self, c: _Ctx) -> None:
        """A long command is started, then the user presses Esc."""
        build = LANGS[c.project.lang].build_cmd
        call = _Call("Bash", {"command": build, "description": "Build the project"}, "", None)
        ((call, tid, src),) = self.main.tool_step([call], self.pre_blocks(c))
        self.advance(2000, 20000)
        block = {"type": "tool_result", "content": REJECTED, "is_error": True, "tool_use_id": tid}
        extra: Obj = {"toolUseResult": "User rejected tool use", "toolDenialKind": "user-rejected"}
        extra["sourceToolAssistantUUID"] = src
        self.main.user([block], extra, parent=src)
        marker = [{"type": "text", "text": "[Request interrupted by user for tool use]"}]
        self.main.user(marker, {"rowSource": "harness"})

    def stream_interrupt(self, lang: str, c: _Ctx) -> None:
        """The user interrupts while the answer streams: partial text, stop_reason null."""
        tr = self.main
        tr.request()
        self.last_prompt(tr)
        full = self.final_text(lang, c)
        usage = {
            "input_tokens": self.rng.randint(3, 40),
            "cache_creation_input_tokens": tr.pending,
            "cache_read_input_tokens": tr.cached,
            "cache_creation": {
                "ephemeral_5m_input_tokens": tr.pending,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": 1,
            "service_tier": "standard",
        }
        tr.cached, tr.pending = tr.cached + tr.pending, 1
        self.advance(800, 4000)
        message: Obj = {"id": self.ids.msg(), "type": "message", "role": "assistant"}
        message.update(model=tr.model, content=[{"type": "text", "text": full[: len(full) // 2]}])
        message.update(stop_reason=None, stop_sequence=None, usage=usage)
        body: Obj = {"message": message, "apiBlockIndex": 0, "requestId": self.ids.req()}
        body.update(
            type="assistant", uuid=self.ids.uuid(), timestamp=self.now(), isAbortedMidStream=True
        )
        tr.line(body)
        tr.responses += 1
        self.advance(50, 500)
        tr.user(
            [{"type": "text", "text": "[Request interrupted by user]"}], {"rowSource": "harness"}
        )

    def final_text(self, lang: str, c: _Ctx) -> str:
        fmt = {"mod": c.mod, "fn": c.fn, "path": c.path, "n": self.rng.randint(4, 120)}
        lang_spec = LANGS[c.project.lang]
        fmt.update(test=c.test, cmd=lang_spec.test_cmd.format(test=c.test, mod=c.mod))
        fmt["lint"] = lang_spec.lint_cmd
        parts = [self.rng.choice(FINALS[lang])]
        if self.rng.random() < 0.75:  # a structured summary, as final answers usually are
            changes, cause, verify, notes, bullets, why, checks, remark = FINAL_SECTIONS[lang]
            picked = self.rng.sample(bullets, self.rng.randint(2, len(bullets)))
            parts.append(changes + "\n" + "\n".join(f"- {b}" for b in picked))
            if self.rng.random() < 0.6:
                parts.append(f"{cause}\n{why}")
            parts.append(f"{verify}\n{checks}")
            if self.rng.random() < 0.4:
                parts.append(f"{notes}\n{remark}")
        return "\n\n".join(parts).format(**fmt)

    def api_error(self) -> None:
        """Retries fail; the CLI writes a synthetic assistant message with zero usage."""
        status, etype, error, short = self.rng.choice(API_ERRORS)
        retries = 2
        for attempt in range(1, retries + 1):
            req = self.ids.req()
            err: Obj = {"message": f'{status} {{"type":"error","error":{{"type":"{etype}"}}}}'}
            err.update(status=status, requestId=req, formatted=short)
            wait = 500 * 2**attempt
            fields: Obj = {
                "level": "error",
                "error": err,
                "retryInMs": wait,
                "retryAttempt": attempt,
            }
            fields.update(maxRetries=retries, source="request_retry")
            self.main.system("api_error", fields)
            self.advance(wait, wait + 300)
        zero = {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}
        usage: Obj = {"output_tokens_details": None, "input_tokens": 0, "output_tokens": 0}
        usage.update(cache_creation_input_tokens=0, cache_read_input_tokens=0, service_tier=None)
        usage["cache_creation"] = zero
        text = f"API Error: {short}. This is a server-side issue, usually temporary — try again."
        message: Obj = {"id": self.ids.uuid(), "model": "<synthetic>", "role": "assistant"}
        message.update(stop_reason="stop_sequence", stop_sequence="", type="message", usage=usage)
        message["content"] = [{"type": "text", "text": text}]
        body: Obj = {"type": "assistant", "uuid": self.ids.uuid(), "timestamp": self.now()}
        body.update(message=message, requestId=self.ids.req(), error=error, isApiErrorMessage=True)
        body.update(apiErrorStatus=status, apiErrorType=etype)
        self.main.line(body)

    def compact(self, trigger: str) -> None:
        """A compaction: a boundary starts a new parent chain, then the summary message."""
        tr = self.main
        self.compaction = None
        pre = tr.cached + tr.pending
        post = self.rng.randint(2400, 3600)
        self.advance(8000, 40000)
        meta: Obj = {"trigger": trigger, "preTokens": pre, "postTokens": post}
        meta.update(cumulativeDroppedTokens=pre - post, durationMs=self.rng.randint(5000, 40000))
        fields: Obj = {"logicalParentUuid": tr.leaf, "content": "Conversation compacted"}
        fields.update(isMeta=False, level="info", compactMetadata=meta)
        tr.slug = "-".join(self.rng.sample(SLUG_WORDS, 3))
        boundary = tr.system("compact_boundary", fields, parent=None)
        summary = (
            "This session is being continued from a previous conversation that ran out of "
            "context. The summary below covers the earlier portion of the conversation.\n\n"
            f"Summary:\n1. Primary Request and Intent: {self.prompt_text}\n"
            "2. Current Work: editing and testing the module.\n3. Pending Tasks: none."
        )
        summary += "\n\n" + self.summary_details()
        extra: Obj = {"isVisibleInTranscriptOnly": True, "isCompactSummary": True}
        tr.user(summary, extra, parent=boundary)
        tr.cached, tr.pending = 0, self.rng.randint(9000, 15000) + post

    def summary_details(self) -> str:
        """The detailed sections a compaction summary carries (files, code, errors)."""
        c = self.ctx()
        code = "\n".join(_src(c).split("\n")[:40])
        errors = "\n".join(f"   - {e.format(fn=c.fn)}" for e in self.rng.sample(PY_ERRORS, 3))
        return (
            f"4. Key Technical Concepts:\n   - `{c.fn}` in {c.path} and its callers\n"
            f"   - the tests in {c.test}\n   - {LANGS[c.project.lang].lint_cmd} for linting\n\n"
            f"5. Files and Code Sections:\n   - {c.path}: the module being fixed; the first "
            f"part of the file as last read:\n```\n{code}\n```\n\n"
            f"6. Errors and fixes:\n{errors}\n\n7. All user messages:\n   - {self.prompt_text}"
        )

    def manual_compact(self) -> None:
        """The user types /compact between turns (a local command, not a prompt)."""
        self.meta_queue("/compact")
        self.prompt_id = self.ids.uuid()
        self.compact("manual")
        tr = self.main
        tr.user(CAVEAT, {"isMeta": True, "rowSource": "harness"})
        tr.user(COMPACT_COMMAND, {"rowSource": "local"})
        tr.user("<local-command-stdout>Compacted </local-command-stdout>", {"rowSource": "local"})

    def subagent_step(self, c: _Ctx) -> None:
        """A foreground Agent call: the child transcript runs, then the parent gets its report."""
        agent_type, desc, task, report = self.rng.choice(AGENT_TASKS)
        fmt = {"fn": c.fn, "path": c.path, "test": c.test}
        desc, prompt, report = desc.format(**fmt), task.format(**fmt), report.format(**fmt)
        prompt += "\n\n" + AGENT_BRIEF.format(**fmt, cwd=c.project.cwd)
        hits = [
            f"- `{c.path}:{i}`: `{line.strip()}`"
            for i, line in enumerate(_src(c).split("\n"), 1)
            if c.fn in line or "raise" in line or "Error(" in line
        ]
        report += "\n\nDetails:\n" + "\n".join(hits[:16]) + "\n\n" + AGENT_ADVICE.format(**fmt)
        call = _Call(
            "Agent", {"description": desc, "prompt": prompt, "subagent_type": agent_type}, "", None
        )
        call.input["run_in_background"] = False
        ((call, tid, src),) = self.main.tool_step([call], self.pre_blocks(c))
        started = self.clock
        child_id = self.ids.agent()
        child_model = self.rng.choice((self.model, "claude-haiku-4-5", "claude-sonnet-4-5"))
        child = _Transcript(self, child_model, child_id)
        tools = self.run_child(child, prompt, report, c)
        last = _usage_summary(child.last_usage)
        total = sum(last[k] for k in USAGE_COUNTS)
        duration = self.clock - started
        call.content = [
            {"type": "text", "text": _handback(report, child_id, total, tools, duration)}
        ]
        call.result = {
            "status": "completed",
            "prompt": prompt,
            "agentId": child_id,
            "agentType": agent_type,
            "content": [{"type": "text", "text": report}],
            "totalDurationMs": duration,
            "totalTokens": total,
            "totalToolUseCount": tools,
            "usage": last,
        }
        self.main.tool_results([(call, tid, src)])
        meta: Obj = {
            "agentType": agent_type,
            "isBuiltIn": True,
            "description": desc,
            "toolUseId": tid,
        }
        meta.update(spawnDepth=1, requestShape="foreground", model=child_model, finished=True)
        self.subagents.append((child_id, child, meta))

    def run_child(self, child: _Transcript, prompt: str, report: str, c: _Ctx) -> int:
        """Write the subagent's transcript; returns its number of tool calls."""
        child.user(prompt, {"rowSource": "recorded"}, parent=None)
        child.unsent = prompt
        self.date_attachment(child)
        tools = 0
        for _ in range(self.rng.randint(0, 3)):
            calls = [_plan_read(c) if self.rng.random() < 0.4 else _plan_bash(c)]
            pending = child.tool_step(calls, self.pre_blocks(c))
            child.tool_results(pending)
            tools += len(pending)
        thinking = [b for b in self.pre_blocks(c) if b["type"] == "thinking"]
        child.response([*thinking, {"type": "text", "text": report}], "end_turn")
        return tools

    def write(self) -> list[Path]:
        proj = self.root / "projects" / encode_cwd(self.project.cwd)
        proj.mkdir(parents=True, exist_ok=True)
        main = proj / f"{self.session_id}.jsonl"
        main.write_bytes(b"\n".join(self.main.lines) + b"\n")
        paths = [main]
        if self.subagents:
            sub = proj / self.session_id / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            for agent_id, tr, meta in self.subagents:
                path = sub / f"agent-{agent_id}.jsonl"
                path.write_bytes(b"\n".join(tr.lines) + b"\n")
                (sub / f"agent-{agent_id}.meta.json").write_bytes(_enc(meta))
                paths.append(path)
        return paths


USAGE_COUNTS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _usage_summary(usage: Obj) -> Obj:
    """The usage object a foreground Agent result repeats (the child's last response)."""
    out: Obj = {"output_tokens_details": usage["output_tokens_details"]}
    out.update({k: usage[k] for k in USAGE_COUNTS})
    out.update(service_tier="standard", cache_creation=usage["cache_creation"])
    return out


def _handback(report: str, agent_id: str, tokens: int, tools: int, ms: int) -> str:
    indented = "\n".join("  " + line for line in report.split("\n"))
    return (
        "[Subagent hand-back] The text below is the final report of a subagent this session "
        f"delegated to. The report follows:\n{indented}\n"
        f"agentId: {agent_id} (use SendMessage with to: '{agent_id}' to continue this agent)\n"
        f"<usage>subagent_tokens: {tokens}\ntool_uses: {tools}\nduration_ms: {ms}</usage>"
    )


# ---------------------------------------------------------------------------------------------
# Public API


def generate(
    root: Path, *, sessions: int = 12, seed: int = 0, long_sessions: bool = True
) -> list[Path]:
    """Write `sessions` Claude Code sessions under `root`; return the .jsonl paths (sorted)."""
    rng = random.Random(seed)
    long = long_indexes("claude_code", seed, sessions, long_sessions)
    paths: list[Path] = []
    for index in range(sessions):
        gen = _SessionGen(rng, index, sessions, Path(root), index in long)
        gen.run()
        paths.extend(gen.write())
    return sorted(paths)
