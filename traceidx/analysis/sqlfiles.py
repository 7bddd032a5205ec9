"""The shipped SQL: view definitions (``views/``) and report queries (``reports/``).

The SQL lives at the top of the source tree (``sql/``); a wheel carries it as ``traceidx/sql``
(pyproject.toml maps it there). An installed traceidx reads the wheel's copy, a checkout (or
an editable install of one) the tree's own.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path


@cache
def root() -> Traversable:
    """The folder holding ``views/`` and ``reports/``."""
    packaged = resources.files("traceidx").joinpath("sql")
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "sql"
    if not checkout.is_dir():
        raise FileNotFoundError(f"traceidx's SQL is missing: neither {packaged} nor {checkout}")
    return checkout


def text(kind: str, name: str) -> str:
    """The text of ``<kind>/<name>.sql`` (`kind`: views or reports)."""
    return root().joinpath(kind, f"{name}.sql").read_text("utf-8")


def names(kind: str) -> list[str]:
    """The names of the SQL files of a kind, sorted."""
    return sorted(
        p.name[: -len(".sql")] for p in root().joinpath(kind).iterdir() if p.name.endswith(".sql")
    )
