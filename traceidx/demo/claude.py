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
  ``compact_boundary``).

Scenarios (seeded rates; the first eight sessions each showcase one so small corpora have them
all): foreground subagents, mid-turn steering, interrupts (tool rejected / mid-stream), synthetic
API errors, compaction (manual ``/compact`` or automatic), tool output over 70 KiB, non-ASCII
prompts, failing commands and failed edits.
"""

from __future__ import annotations

import base64
import calendar
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

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

    def signature(self) -> str:
        return base64.b64encode(self.rng.randbytes(96)).decode()


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

_PY_TEMPLATE = (
    '"""{Mod} helpers."""',
    "",
    "from __future__ import annotations",
    "",
    "",
    "def {fn}(items: list[str]) -> list[str]:",
    "    out = []",
    "    for item in items:",
    "        if item.strip():",
    "            out.append(item.strip())",
    "    return out",
)
_TS_TEMPLATE = (
    "// {Mod} helpers",
    "export function {fn}(items: string[]): string[] {{",
    "  const out: string[] = [];",
    "  for (const item of items) {{",
    "    if (item.trim()) out.push(item.trim());",
    "  }}",
    "  return out;",
    "}}",
)
_GO_TEMPLATE = (
    "package {mod}",
    "",
    'import "strings"',
    "",
    "func {Fn}(items []string) []string {{",
    "\tout := make([]string, 0, len(items))",
    "\tfor _, item := range items {{",
    '\t\tif s := strings.TrimSpace(item); s != "" {{',
    "\t\t\tout = append(out, s)",
    "\t\t}}",
    "\t}}",
    "\treturn out",
    "}}",
)
_TEMPLATES = {"py": _PY_TEMPLATE, "ts": _TS_TEMPLATE, "go": _GO_TEMPLATE}


def _source(lang: str, mod: str, fn: str) -> str:
    camel = "".join(part.title() for part in fn.split("_"))
    lines = _TEMPLATES[lang]
    return (
        "\n".join(line.format(Mod=mod.title(), mod=mod, fn=fn, Fn=camel) for line in lines) + "\n"
    )


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


def _sh_git_status(c: _Ctx) -> _Sh:
    mods = c.rng.sample(c.project.modules, 2)
    out = "\n".join([f" M {c.project.path(m)}" for m in mods] + ["?? notes.md"])
    return _Sh("git status --short", "Show working tree status", 0, out)


def _sh_git_log(c: _Ctx) -> _Sh:
    out = "\n".join(f"{c.ids.hex(7)} {m}" for m in c.rng.sample(COMMIT_MSGS, 5))
    return _Sh("git log --oneline -5", "Show recent commits", 0, out)


def _sh_git_diff(c: _Ctx) -> _Sh:
    add, rem = c.rng.randint(1, 40), c.rng.randint(0, 20)
    out = f" {c.path} | {add + rem} {'+' * min(add, 20)}{'-' * min(rem, 10)}\n"
    out += f" 1 file changed, {add} insertions(+), {rem} deletions(-)"
    return _Sh("git diff --stat", "Show diff summary", 0, out)


def _sh_commit(c: _Ctx) -> _Sh:
    msg = c.rng.choice(COMMIT_MSGS)
    cmd = f'git add -A && git commit -m "{msg}"'
    out = f"[main {c.ids.hex(7)}] {msg}\n 2 files changed, {c.rng.randint(3, 60)} insertions(+)"
    return _Sh(cmd, "Commit the changes", 0, out)


def _test_failure(c: _Ctx) -> str:
    line = c.rng.randint(10, 80)
    head = f"F.....{'.' * c.rng.randint(0, 6)}"
    return (
        f"{head}\n{'=' * 20} FAILURES {'=' * 20}\n____ test_{c.fn}_empty ____\n\n"
        f"    def test_{c.fn}_empty():\n>       assert {c.fn}([]) == []\n"
        f"E       TypeError: 'NoneType' object is not iterable\n\n{c.test}:{line}: TypeError\n"
        f"FAILED {c.test}::test_{c.fn}_empty - TypeError\n1 failed, {len(head) - 1} passed in 0.41s"
    )


def _sh_tests(c: _Ctx) -> _Sh:
    cmd = LANGS[c.project.lang].test_cmd.format(test=c.test, mod=c.mod)
    n = c.rng.randint(4, 40)
    if c.rng.random() < 0.3:
        return _Sh(cmd, "Run the tests", 1, _test_failure(c))
    return _Sh(cmd, "Run the tests", 0, f"{'.' * n}{' ' * 8}[100%]\n{n} passed in 0.{n:02d}s")


def _sh_lint(c: _Ctx) -> _Sh:
    cmd = LANGS[c.project.lang].lint_cmd
    if c.rng.random() < 0.25:
        out = f"{c.path}:3:1: F401 `os` imported but unused\nFound 1 error."
        return _Sh(cmd, "Run the linter", 1, out)
    return _Sh(cmd, "Run the linter", 0, "All checks passed!")


def _sh_ls(c: _Ctx) -> _Sh:
    src = c.path.rsplit("/", 1)[0]
    ext = LANGS[c.project.lang].ext
    out = "\n".join(f"{m}.{ext}" for m in sorted(c.project.modules))
    return _Sh(f"ls {src} | head -20", "List source files", 0, out)


def _sh_grep(c: _Ctx) -> _Sh:
    src = c.path.split("/", 1)[0]
    mark = LANGS[c.project.lang].comment
    hits = [
        f"{c.project.path(m)}:{c.rng.randint(2, 90)}:  {mark} TODO: {c.fn}"
        for m in c.project.modules
    ]
    return _Sh(f'grep -rn "TODO" {src} | head -10', "Find TODO comments", 0, "\n".join(hits))


def _sh_heredoc(c: _Ctx) -> _Sh:
    cmd = (
        "cat > /tmp/sample.json <<'EOF'\n"
        f'{{"name": "{c.mod}", "items": [" a ", "", "b"]}}\nEOF\n'
        "python3 -m json.tool /tmp/sample.json"
    )
    items = '    "items": [\n        " a ",\n        "",\n        "b"\n    ]'
    out = f'{{\n    "name": "{c.mod}",\n{items}\n}}'
    return _Sh(cmd, "Write a sample input and pretty-print it", 0, out)


def _sh_make(c: _Ctx) -> _Sh:
    build = LANGS[c.project.lang].build_cmd
    cmd = f"cd {c.project.cwd} && {build}"
    if c.rng.random() < 0.3:
        err = f"{c.path}:12: error: undefined: {c.fn}\nmake: *** [Makefile:14: build] Error 1"
        return _Sh(cmd, "Build the project", 2, "", err)
    return _Sh(cmd, "Build the project", 0, f"built {c.project.pkg} in {c.rng.randint(2, 40)}s")


def _sh_missing_tool(c: _Ctx) -> _Sh:
    tool = c.rng.choice(MISSING_TOOLS)
    err = f"/bin/bash: line 1: {tool}: command not found"
    return _Sh(f"{tool} --version", f"Check {tool} version", 127, "", err)


def _sh_missing_dir(c: _Ctx) -> _Sh:
    err = "ls: cannot access 'build/': No such file or directory"
    return _Sh("ls build/", "List build output", 2, "", err)


def _sh_count(c: _Ctx) -> _Sh:
    ext = LANGS[c.project.lang].ext
    cmd = f"find . -name '*.{ext}' -not -path './.git/*' | wc -l"
    return _Sh(cmd, "Count source files", 0, str(c.rng.randint(8, 300)))


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
    return "\n".join(f"{i}\t{line}" for i, line in enumerate(content.split("\n"), 1))


def _plan_read(c: _Ctx) -> _Call:
    content = _source(c.project.lang, c.mod, c.fn)
    n = content.count("\n") + 1
    file = {
        "filePath": c.abspath,
        "content": content,
        "numLines": n,
        "startLine": 1,
        "totalLines": n,
    }
    result = {"type": "text", "file": file}
    return _Call("Read", {"file_path": c.abspath}, _numbered(content), result, False, 25)


def _patch(lines: list[str], k: int, new: str) -> Obj:
    start, end = max(0, k - 3), min(len(lines), k + 4)
    hunk = [" " + x for x in lines[start:k]] + ["-" + lines[k], "+" + new]
    hunk += [" " + x for x in lines[k + 1 : end]]
    size = end - start
    return {
        "oldStart": start + 1,
        "oldLines": size,
        "newStart": start + 1,
        "newLines": size,
        "lines": hunk,
    }


def _plan_edit(c: _Ctx) -> _Call:
    original = _source(c.project.lang, c.mod, c.fn)
    lines = original.split("\n")
    k = c.rng.choice([i for i, x in enumerate(lines) if c.fn in x or "return" in x])
    old = lines[k]
    new = old.replace("out", "result") + f"  {LANGS[c.project.lang].comment} normalized"
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
        "structuredPatch": [_patch(lines, k, new)],
        "userModified": False,
        "replaceAll": False,
    }
    text = f"The file {c.abspath} has been updated successfully. {UPDATED}"
    return _Call("Edit", inp, text, result, False, 30)


def _plan_write(c: _Ctx) -> _Call:
    path = f"{c.project.cwd}/docs/{c.mod}.md"
    content = f"# {c.mod}\n\n`{c.fn}` strips blank items and returns the rest.\n"
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
    files = [c.project.path(m) for m in c.rng.sample(c.project.modules, 2)]
    if c.rng.random() < 0.5:
        inp: Obj = {"pattern": c.fn, "output_mode": "files_with_matches"}
        text = f"Found {len(files)} files\n" + "\n".join(files)
        result: Obj = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        return _Call("Grep", inp, text, result, False, 60)
    hits = "\n".join(f"{f}:{c.rng.randint(1, 60)}:    return {c.fn}(rows)" for f in files)
    inp = {"pattern": f"{c.fn}\\(", "output_mode": "content", "-n": True}
    result = {"mode": "content", "numFiles": 0, "filenames": [], "content": hits, "numLines": 2}
    return _Call("Grep", inp, hits, result, False, 70)


def _plan_glob(c: _Ctx) -> _Call:
    ext = LANGS[c.project.lang].ext
    files = [f"{c.project.cwd}/{c.project.path(m)}" for m in c.project.modules]
    result = {"filenames": files, "durationMs": c.rng.randint(5, 200), "numFiles": len(files)}
    result["truncated"] = False
    return _Call("Glob", {"pattern": f"**/*.{ext}"}, "\n".join(files), result, False, 40)


TOOL_POOL: tuple[tuple[Callable[[_Ctx], _Call], int], ...] = (
    (_plan_bash, 50),
    (_plan_read, 18),
    (_plan_edit, 12),
    (_plan_write, 5),
    (_plan_grep, 9),
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

    # -- envelope -------------------------------------------------------------------------------

    def meta(self, body: Obj) -> None:
        body["sessionId"] = self.gen.session_id
        self.lines.append(_enc(body))

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
        self.gen.last_prompt(self)
        self._note_tools(blocks)
        thinking = sum(
            _tok(b["thinking"]) + self.rng.randint(5, 80) for b in blocks if "thinking" in b
        )
        output = thinking + sum(_tok(str(b.get("text") or b.get("input"))) for b in blocks)
        usage = self.usage(output + self.rng.randint(8, 40), thinking)
        self.last_usage = usage
        msg_id, req = self.ids.msg(), self.ids.req()
        self.gen.advance(700, 6000 + 40 * output)
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
            self.gen.advance(call.duration_ms, call.duration_ms * 3)
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

    def __init__(self, rng: random.Random, index: int, total: int, root: Path) -> None:
        self.rng = rng
        self.ids = _Ids(rng)
        self.root = root
        self.project = rng.choices(PROJECTS, weights=[p.weight for p in PROJECTS])[0]
        self.session_id = self.ids.uuid()
        self.model = _weighted(rng, MODELS)
        self.permission_mode = _weighted(rng, PERMISSION_MODES)
        day = index * SPAN_DAYS // max(total, 1)
        self.clock = BASE_MS + day * DAY_MS + rng.randint(0, 9 * 3600) * 1000
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
        return _Ctx(self.rng, self.ids, self.project, mod, self.rng.choice(FN_NAMES))

    def last_prompt(self, tr: _Transcript) -> None:
        if tr is self.main:
            self.main.meta(
                {"type": "last-prompt", "lastPrompt": self.prompt_text, "leafUuid": tr.leaf}
            )

    # -- session ----------------------------------------------------------------------------------

    def run(self) -> None:
        self.main.meta({"type": "permission-mode", "permissionMode": self.permission_mode})
        turns = self.rng.randint(1, 5)
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
        return self.compaction == "auto" and tr.responses >= 3 and (late or full)

    def between_turns(self, last: bool) -> None:
        if self.compaction == "manual" and (last or self.rng.random() < 0.5):
            self.manual_compact()
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
            return lang, text.format(**fmt)
        lang, text = self.rng.choice(FOLLOWUPS)
        return lang, text.format(**fmt)

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
        steps = self.rng.randint(1, 7)
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

    def pre_blocks(self, c: _Ctx, *, ack: str | None = None) -> list[Obj]:
        fmt = {"mod": c.mod, "fn": c.fn, "path": c.path}
        blocks: list[Obj] = []
        if self.rng.random() < 0.45:
            thought = self.rng.choice(THINKING).format(**fmt)
            blocks.append(
                {"type": "thinking", "thinking": thought, "signature": self.ids.signature()}
            )
        if ack is not None:
            blocks.append({"type": "text", "text": ack})
        elif self.rng.random() < 0.55:
            blocks.append({"type": "text", "text": self.rng.choice(COMMENTARY)})
        return blocks

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
        return self.rng.choice(FINALS[lang]).format(**fmt)

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
        extra: Obj = {"isVisibleInTranscriptOnly": True, "isCompactSummary": True}
        tr.user(summary, extra, parent=boundary)
        tr.cached, tr.pending = 0, self.rng.randint(9000, 15000) + post

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


def generate(root: Path, *, sessions: int = 12, seed: int = 0) -> list[Path]:
    """Write `sessions` Claude Code sessions under `root`; return the .jsonl paths (sorted)."""
    rng = random.Random(seed)
    paths: list[Path] = []
    for index in range(sessions):
        gen = _SessionGen(rng, index, sessions, Path(root))
        gen.run()
        paths.extend(gen.write())
    return sorted(paths)
