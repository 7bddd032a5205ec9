"""A page opened in headless Chromium (Debian's package, driven by Playwright): what it logged,
fetched and drew, its tables' cells, its embedded data, and a screenshot."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
#: an A4 page's width less Chromium's default print margins (0.4 in each side), CSS pixels
PRINT_WIDTH = 718
#: the flags the page is opened with (a fresh profile is added per run)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def ensure_chromium() -> str | None:
    """Install Debian's chromium where it is missing and we may (root); else why not."""
    if CHROMIUM.exists():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return (
            "chromium is not installed and apt-get cannot run here (not root): apt install chromium"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            return f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}"
    return (
        None if CHROMIUM.exists() else "apt-get installed chromium but /usr/bin/chromium is absent"
    )


@dataclass
class Opened:
    """What a page did and showed once every chart was embedded."""

    console_errors: list[str]
    requests: list[str]
    marks: dict[str, int]
    tables: dict[str, list[list[str]]]
    data: dict[str, list[dict[str, Any]]]
    screenshot: bytes
    #: the page's width when printed at `PRINT_WIDTH` (wider: it would be cut or shrunk)
    print_width: int


#: each chart's marks that show something: elements of its mark groups with an area (a bar of
#: zero length, or one at NaN, draws nothing and is not counted) or a length (a rule)
_MARKS = """() => Object.fromEntries([...document.querySelectorAll('.chart')].map(div =>
  [div.dataset.chart, [...div.querySelectorAll('svg g.role-mark > path, svg g.role-mark > rect, '
     + 'svg g.role-mark > line, svg g.role-mark > circle, svg g.role-mark > g')].filter(e => {
       const box = e.getBBox();
       const sized = e.tagName === 'line' ? box.width > 0 || box.height > 0
                                          : box.width > 0 && box.height > 0;
       return sized && ![box.x, box.y, box.width, box.height].some(Number.isNaN);
     }).length]))"""
_TABLES = """() => Object.fromEntries([...document.querySelectorAll('section.table')].map(s =>
  [s.dataset.table, [...s.querySelectorAll('tbody tr')].map(tr =>
     [...tr.querySelectorAll('td')].map(td => td.textContent.trim()))]))"""


def open_page(path: Path, width: int = 1100) -> Opened:
    """Open a local HTML file, wait for its charts, and report what happened."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="traceidx-chromium-") as profile,
        sync_playwright() as pw,
    ):
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=list(FLAGS),
            viewport={"width": width, "height": 900},
            offline=False,
        )
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.evaluate("() => window.traceidxCharts.then(() => true)")
            marks = page.evaluate(_MARKS)
            tables = page.evaluate(_TABLES)
            data = page.evaluate(
                "() => JSON.parse(document.getElementById('traceidx-data').textContent)"
            )
            shot = page.screenshot(full_page=True, type="png")
            page.emulate_media(media="print")
            page.set_viewport_size({"width": PRINT_WIDTH, "height": 1000})
            printed = page.evaluate("() => document.documentElement.scrollWidth")
        finally:
            context.close()
    return Opened(errors, requests, marks, tables, data, shot, printed)


def variance(png: bytes) -> float:
    """The grey-level variance of an image (0 for a blank one)."""
    import io

    from PIL import Image, ImageStat

    return float(ImageStat.Stat(Image.open(io.BytesIO(png)).convert("L")).var[0])
