"""The runtime registry and the package's public face: one table, no import circle, a plain
API that stays callable and cheap to import."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import traceidx
from tests.support.files import CORPUS, FIXTURES, fixture_path
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


#: modules every stage may import: the package's own face and the shared leaves
SHARED = frozenset({"traceidx", "traceidx.errors", "traceidx.runtimes", "traceidx.storage"})
#: the package's top level holds at most this many modules (the rest are stage packages)
MOST_TOP_LEVEL = 15


def _stage(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_each_stage_imports_only_the_stages_its_package_allows() -> None:
    stages = sorted(p.parent for p in PACKAGE.glob("*/__init__.py"))
    checked = 0
    for folder in stages:
        stage = f"traceidx.{folder.name}"
        allowed = getattr(importlib.import_module(stage), "MAY_IMPORT", None)
        if folder.name in ("sql", "demo"):  # data packages, which read with the sources
            allowed = ("traceidx.sources",)
        assert isinstance(allowed, tuple), f"{stage}/__init__.py declares no MAY_IMPORT"
        for path in folder.rglob("*.py"):
            for name in _imports(path):
                target = _stage(name)
                if name in SHARED or target in SHARED or target == stage:
                    continue
                if name.removeprefix("traceidx.") == "__version__":
                    continue
                assert target in allowed, f"{_module_name(path)} imports {name}, not in {stage}"
                checked += 1
    assert checked > 100


def test_the_top_level_is_the_public_face_and_the_stages() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MOST_TOP_LEVEL, modules
    for folder in (p.parent for p in PACKAGE.glob("*/__init__.py")):
        if folder.name in ("sql", "demo"):  # data packages
            continue
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8")))
        assert doc and "import" in doc, f"{folder.name}/__init__.py says what it may import"


def test_every_registered_runtime_has_its_adapter_package() -> None:
    assert names() == sorted(RUNTIMES) == list(declared())
    for name, entry in RUNTIMES.items():
        cls = adapter(name)
        assert cls.runtime == name
        assert entry.module == f"traceidx.adapters.{name}.adapter"
        assert entry.homes and all(h.folders for h in entry.homes), name
    assert adapters() == {name: adapter(name) for name in names()}


#: the modules every runtime package has (the layout `traceidx.adapters` describes)
ADAPTER_LAYOUT = ("adapter.py", "wire.py", "state.py", "tools.py", "usage.py")


def test_every_runtime_package_has_the_same_layout() -> None:
    for name in RUNTIMES:
        folder = PACKAGE / "adapters" / name
        missing = [module for module in ADAPTER_LAYOUT if not (folder / module).is_file()]
        assert not missing, f"adapters/{name}/ lacks {', '.join(missing)}"
        # the adapter class derives from the tools class, which derives from the state class
        package = f"traceidx.adapters.{name}"
        chain = [cls.__module__ for cls in adapter(name).__mro__]
        layers = [f"{package}.{module}" for module in ("adapter", "tools", "state")]
        assert [m for m in chain if m in layers] == layers, name


#: each folder of the generated set -> the runtime that wrote its traces
GENERATED_RUNTIMES = {folder: name for name in names() for folder in RUNTIMES[name].fixtures}
#: files of a runtime home named like traces that are not (Qwen Code's per-run usage summary,
#: Kimi Code's session index)
NOT_TRACES = frozenset({"usage_record.jsonl", "session_index.jsonl"})


def database_sessions(root: Path) -> list[Path]:
    from tests.support.facts import database_sessions as sessions

    return sessions(root)


def session_folders(root: Path) -> list[Path]:
    from tests.support.facts import session_folders as folders

    return folders(root)


def _claimants(path: Path) -> list[str]:
    """The runtimes whose adapters claim a file (by its leading decoded records)."""
    from tests.support.facts import decoded_records

    head = [o for _, objs in decoded_records(path)[:32] for o in objs]
    claimed = [name for name in names() if adapter(name).claims(head)]
    found = detect(head)
    assert found is (adapter(claimed[0]) if claimed else None), path
    return claimed


@pytest.mark.parametrize("where", ["fixtures", "corpus"])
@pytest.mark.parametrize("folder", sorted(GENERATED_RUNTIMES))
def test_each_generated_trace_is_claimed_by_its_own_runtime_only(where: str, folder: str) -> None:
    """Every trace of a runtime's folder of the generated set (the committed copies always, the
    shared corpus's whole set when it is present) is claimed by its runtime's adapter and no
    other; the files beside them named like traces that are not (the generators' ``_gen/`` logs,
    Qwen Code's ``usage_record.jsonl``) by none. A session folder (Mistral Vibe's) is one trace,
    claimed by its records; the files in it are not traces, and none claims one alone."""
    from tests.support.facts import in_session_folder

    root = (FIXTURES if where == "fixtures" else CORPUS) / "generated" / folder
    if not root.is_dir():
        pytest.skip(f"corpus not available: {root}")
    from tests.support.facts import trace_files

    files = sorted(trace_files(root, logs=True))
    foreign = {"_gen", "_aux"}  # the generators' logs
    folders = [p for p in session_folders(root) if not foreign & set(p.parts)]
    traces = [
        p
        for p in files
        if not foreign & set(p.parts)
        and p.name not in NOT_TRACES
        and not in_session_folder(p, folders)
    ]
    traces += database_sessions(root)  # a database's sessions (OpenCode's)
    traces += folders  # a runtime's session folders (Mistral Vibe's)
    assert traces
    for path in traces:
        assert _claimants(path) == [GENERATED_RUNTIMES[folder]], path.relative_to(root)
    members = [p for p in files if in_session_folder(p, folders)]
    assert bool(members) == bool(folders)  # a session folder's journal is named like a trace
    for path in (p for p in files if p not in traces):
        assert _claimants(path) == [], path.relative_to(root)


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


def test_tests_import_only_their_support_and_mirror_the_package() -> None:
    """No test module imports another (shared helpers live in tests/support), only the
    benchmarks' own test imports the benchmarks, and each stage has its tests folder."""
    tests = Path(__file__).resolve().parent
    for path in tests.rglob("*.py"):
        if "fixtures" in path.relative_to(tests).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.name}: a relative import"
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("tests"):
                    assert name.startswith("tests.support"), f"{path.name} imports {name}"
                if name.startswith("benchmarks"):
                    assert path.name == "test_benchmarks.py", f"{path.name} imports {name}"
    stages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")} - {"sql", "demo"}
    assert stages <= {p.name for p in tests.iterdir() if p.is_dir()}
