"""The docs describe the product as it is: a short README whose links resolve, a page per
runtime, and every runtime's trace roots and override variables where a user looks for them."""

from __future__ import annotations

import re

import pytest

from tests.support.files import ROOT
from traceidx.runtimes import RUNTIMES

ROOT = ROOT
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(
    not README.is_file() or not (ROOT / "docs").is_dir(), reason="needs the source tree"
)


def test_the_readme_is_short() -> None:
    assert len(README.read_text("utf-8").splitlines()) <= 200


def test_every_relative_link_resolves() -> None:
    for page in [README, *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_every_runtime_has_its_page_and_its_roots_in_the_readme(runtime: str) -> None:
    assert (ROOT / "docs" / "runtimes" / f"{runtime}.md").is_file()
    text = README.read_text("utf-8")
    for home in RUNTIMES[runtime].homes:
        assert f"`{home.variable}`" in text, home.variable


def test_the_readme_table_of_roots_is_the_registry_s() -> None:
    from traceidx.cli.reference import readme

    text = README.read_text("utf-8")
    assert text == readme(text), "regenerate: python -m traceidx.cli.reference"


def test_the_reference_is_what_the_parser_and_the_views_say() -> None:
    from traceidx.cli.reference import markdown

    committed = (ROOT / "docs" / "reference.md").read_text("utf-8")
    assert committed == markdown(), "regenerate: python -m traceidx.cli.reference docs/reference.md"


def test_make_demo_installs_what_the_demo_needs_and_make_test_the_dev_tools() -> None:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make here")
    demo = subprocess.run(
        ["make", "-n", "-B", "demo"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in demo.splitlines() if "pip install" in line and " -e " in line]
    assert installs and all("'.[html]'" in line for line in installs), installs
    assert "[dev]" not in demo
    test = subprocess.run(
        ["make", "-n", "-B", "setup"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "'.[dev]'" in test
