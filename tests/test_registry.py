"""The runtime registry and the package's public face: one table, no import circle, a plain
API that stays callable and cheap to import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import traceidx
from tests.conftest import fixture_path
from traceidx.adapters import adapter, adapters, detect
from traceidx.runtimes import RUNTIMES, declared, names

PACKAGE = Path(traceidx.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The traceidx modules a module imports, at load or in a function (``import``, ``from``
    and ``importlib.import_module`` of a literal name; not under ``if TYPE_CHECKING``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(str(node.args[0].value))
    return {name for name in found if name.startswith("traceidx.")}


def test_no_module_imports_itself_through_others() -> None:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {
        name: {m for m in _imports(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    state: dict[str, int] = {}
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name)


def test_every_registered_runtime_has_its_adapter_package() -> None:
    assert names() == sorted(RUNTIMES) == list(declared())
    for name, entry in RUNTIMES.items():
        cls = adapter(name)
        assert cls.runtime == name
        assert entry.module == f"traceidx.adapters.{name}.adapter"
        folder = PACKAGE / "adapters" / name
        assert (folder / "adapter.py").is_file() and (folder / "wire.py").is_file(), name
        assert entry.homes and all(h.folders for h in entry.homes), name
    assert adapters() == {name: adapter(name) for name in names()}


def test_each_fixture_is_claimed_by_its_own_runtime_only() -> None:
    from tests.facts import decoded_records

    folders = {"codex": ("codex", "*.jsonl"), "pi": ("pi", "*.jsonl")}
    folders["copilot"] = ("copilot", "*/session-state/*/events.jsonl")
    for runtime, (folder, pattern) in folders.items():
        paths = sorted(fixture_path("generated", folder).glob(pattern))
        assert paths, runtime
        for path in paths:
            head = [o for _, objs in decoded_records(path)[:32] for o in objs]
            claimed = [name for name in names() if adapter(name).claims(head)]
            assert claimed == [runtime], (path.name, claimed)
            assert detect(head) is adapter(runtime)


def test_the_public_build_stays_a_function(tmp_path: Path) -> None:
    traces = fixture_path("generated", "codex")
    first = traceidx.build([traces], tmp_path / "ds", jobs=1)
    second = traceidx.build([traces], tmp_path / "ds", jobs=1)
    assert first.exit_code == second.exit_code == 0
    assert callable(traceidx.build) and callable(traceidx.connect)
    con = traceidx.connect(tmp_path / "ds")
    try:
        assert con.sql("SELECT count(*) FROM sessions").fetchall() == [(14,)]
    finally:
        con.close()
    assert traceidx.read_sessions(tmp_path / "ds").height == 14
    assert traceidx.report("usage", tmp_path / "ds").height >= 1
    with pytest.raises(AttributeError):
        _ = traceidx.no_such_name  # type: ignore[attr-defined]


def test_importing_traceidx_loads_no_data_library() -> None:
    code = (
        "import sys, traceidx; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'pyarrow', 'duckdb', 'polars', 'msgspec', 'numpy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
