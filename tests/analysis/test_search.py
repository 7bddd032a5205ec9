"""traceidx search, as a user runs it: a phrase planted in a trace of every runtime is found,
in its runtime's session, with a record id `inspect` accepts; bad searches are refused."""

from __future__ import annotations

import fnmatch
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.support.files import FIXTURES, traceidx_cli
from traceidx.runtimes import RUNTIMES, names

FOLDERS = tuple(folder for name in names() for folder in RUNTIMES[name].fixtures)


def _phrase(runtime: str) -> str:
    return f"quokka marmalade {runtime} zeppelin"


def _plant(folder: Path, runtime: str, phrase: str | None = None) -> str:
    """Replace the final answer of one session in the copied folder by `phrase` (default: the
    runtime's phrase); the session's native id."""
    phrase = phrase or _phrase(runtime)
    truth = json.loads((folder / "expect.json").read_text("utf-8"))
    for session in truth["sessions"]:
        for loop in session["loops"]:
            answer = loop["final_answer"]
            if not answer or len(answer) < 12:
                continue
            encoded = json.dumps(answer, ensure_ascii=False)[1:-1]
            databases = _databases(folder, runtime)
            if databases:  # the runtime's database: every text its declared tables hold
                if sum(_replace_rows(db, runtime, encoded, phrase) for db in databases):
                    return str(session["native_session_id"])
                continue
            if sum(_replace(path, encoded, phrase) for path in _trace(folder, session)):
                return str(session["native_session_id"])
    raise AssertionError(f"{runtime}: no final answer to plant the phrase in")


def _databases(folder: Path, runtime: str) -> list[Path]:
    """The runtime's databases in a folder (as its registry entry names them)."""
    declared = RUNTIMES[runtime].database
    if declared is None:
        return []
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return [p for p in files if any(fnmatch.fnmatch(p.name, n) for n in declared.names)]


def _replace_rows(database: Path, runtime: str, old: str, new: str) -> int:
    """Replace `old` by `new` in every text column of the runtime's declared tables; the rows
    changed."""
    declared = RUNTIMES[runtime].database
    assert declared is not None
    changed = 0
    with sqlite3.connect(database) as con:
        for table in declared.tables:
            columns = con.execute(f"PRAGMA table_info({table.name})").fetchall()
            for column in (c[1] for c in columns if str(c[2]).upper() in ("TEXT", "")):
                changed += con.execute(
                    f"UPDATE {table.name} SET {column} = replace({column}, ?, ?) "
                    f"WHERE instr({column}, ?) > 0",
                    (old, new, old),
                ).rowcount
    return changed


def _replace(path: Path, old: str, new: str) -> bool:
    """Replace `old` by `new` in a trace file (a zstd one decoded and encoded again)."""
    zstd = path.name.endswith(".zstd")
    data = path.read_bytes()
    if zstd:
        with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as r:
            data = r.read()
    text = data.decode("utf-8")
    if old not in text:
        return False
    planted = text.replace(old, new).encode("utf-8")
    path.write_bytes(zstandard.ZstdCompressor().compress(planted) if zstd else planted)
    return True


def _trace(folder: Path, session: dict[str, Any]) -> list[Path]:
    """The files of a session's trace: its file, or every file of the session folder it is
    (Mistral Vibe's; the answer is planted wherever the folder states it)."""
    name = session["file"]
    for candidate in (folder / name, folder / Path(name).name):
        if candidate.is_file():
            return [candidate]
        if candidate.is_dir():
            return sorted(p for p in candidate.rglob("*") if p.is_file())
    return []


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("search")
    sessions = {}
    for folder in FOLDERS:
        copy = root / "traces" / folder
        shutil.copytree(FIXTURES / "generated" / folder, copy)
        truth = json.loads((copy / "expect.json").read_text("utf-8"))
        if truth["runtime"] not in sessions:  # one session per runtime (its first folder)
            sessions[truth["runtime"]] = _plant(copy, truth["runtime"])
    dataset = root / "dataset"
    done = traceidx_cli("build", "--dataset", str(dataset), str(root / "traces"))
    assert done.returncode == 0, done.stderr
    return dataset, sessions


def _search(dataset: Path, *args: str) -> list[dict[str, Any]]:
    done = traceidx_cli("search", "--dataset", str(dataset), "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


@pytest.mark.parametrize("runtime", names())
def test_a_planted_phrase_is_found_in_its_session(
    planted: tuple[Path, dict[str, str]], runtime: str
) -> None:
    dataset, sessions = planted
    rows = _search(dataset, *_phrase(runtime).upper().split())  # words, any case
    assert rows and {r["runtime"] for r in rows} == {runtime}
    assert {r["session"] for r in rows} == {sessions[runtime]}
    assert all("quokka marmalade" in r["snippet"] for r in rows)
    inspected = traceidx_cli("inspect", "--dataset", str(dataset), str(rows[0]["record_id"]))
    assert inspected.returncode == 0, inspected.stderr
    regex = _search(dataset, "--regex", f"quokka\\s+marmalade {runtime}\\b", "--runtime", runtime)
    assert [r["record_id"] for r in regex] == [r["record_id"] for r in rows]


def test_filters_and_the_table(planted: tuple[Path, dict[str, str]]) -> None:
    dataset, _ = planted
    every = _search(dataset, "quokka", "marmalade", "--limit", "100")
    assert {r["runtime"] for r in every} == set(names())
    times = [r["occurred_at"] for r in every if r["occurred_at"]]
    assert times == sorted(times, reverse=True)  # newest first
    assert _search(dataset, "quokka", "--runtime", "pi", "--role", "human") == []
    assert len(_search(dataset, "quokka", "--limit", "2")) == 2
    assert _search(dataset, "quokka", "--until", "2000-01-01") == []
    table = traceidx_cli("search", "--dataset", str(dataset), "quokka", "marmalade", "pi")
    assert table.returncode == 0 and "quokka marmalade pi zeppelin" in table.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--regex", "a(b"), "--regex"),
        (("  ",), "give the words"),
        (("x", "--since", "May"), "--since"),
    ],
)
def test_a_bad_search_is_refused_in_one_line(
    planted: tuple[Path, dict[str, str]], args: tuple[str, ...], says: str
) -> None:
    dataset, _ = planted
    done = traceidx_cli("search", "--dataset", str(dataset), *args)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.splitlines()) == 1


#: a prompt in many scripts: whole words in spaced scripts, substrings in unspaced ones
SCRIPTS = (
    "Der Plan ist übersichtlich; le café est prêt; Москва слезам не верит; "
    "η Αθήνα είναι όμορφη; 明日東京タワーに行きます; 我们在北京开会; ภาษาไทยง่ายมาก"
)


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("scripts")
    copy = root / "traces" / "pi"
    shutil.copytree(FIXTURES / "generated" / "pi", copy)
    session = _plant(copy, "pi", SCRIPTS)
    dataset = root / "dataset"
    done = traceidx_cli("build", "--dataset", str(dataset), str(root / "traces"))
    assert done.returncode == 0, done.stderr
    return dataset, session


@pytest.mark.parametrize(
    ("words", "shows"),
    [
        (("übersichtlich",), "übersichtlich"),  # Latin with accents, any case
        (("ÜBERSICHTLICH",), "übersichtlich"),
        (("café",), "le café est prêt"),
        (("CAFÉ", "prêt"), "le café est prêt"),
        (("москва",), "Москва слезам"),  # Cyrillic
        (("ΑΘΉΝΑ",), "η Αθήνα είναι"),  # Greek
        (("東京",), "明日東京タワー"),  # Japanese: a substring
        (("タワー",), "東京タワーに"),
        (("北京",), "我们在北京开会"),  # Chinese
        (("ไทย",), "ภาษาไทยง่ายมาก"),  # Thai
    ],
)
def test_words_of_every_script_are_found(
    scripts: tuple[Path, str], words: tuple[str, ...], shows: str
) -> None:
    dataset, session = scripts
    rows = [r for r in _search(dataset, *words, "--limit", "100") if r["session"] == session]
    assert len(rows) == 1 and shows in rows[0]["snippet"], rows


@pytest.mark.parametrize("part", ["übersicht", "caf", "Моск", "Αθήν", "sichtlich"])
def test_part_of_a_word_of_a_spaced_script_is_not_a_word(
    scripts: tuple[Path, str], part: str
) -> None:
    dataset, session = scripts
    assert _search(dataset, part) == []
    inside = _search(dataset, "--regex", f"(?i){part}")  # there, inside a longer word
    assert [r["session"] for r in inside] == [session]
