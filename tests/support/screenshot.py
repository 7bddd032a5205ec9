"""The README's picture of the HTML report: the demo's report, opened in headless Chromium, its
top cropped, scaled and reduced to a small palette PNG.

    python -m tests.support.screenshot docs/report.png     (or `make screenshot`)
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from tests.support.browser import ensure_chromium, open_page
from traceidx.analysis.htmlreport import write
from traceidx.analysis.query import connect
from traceidx.analysis.reports import params
from traceidx.demo import RUNTIMES, write_demo
from traceidx.pipeline.job import build

#: the part of the page shown (CSS pixels at the page's width) and the picture's width
TOP, WIDTH = 1750, 760


def screenshot(output: Path) -> Path:
    """Build the demo, write its HTML report, and save the top of it as a PNG."""
    from PIL import Image

    reason = ensure_chromium()
    if reason is not None:
        raise SystemExit(reason)
    with tempfile.TemporaryDirectory(prefix="traceidx-screenshot-") as tmp:
        root = Path(tmp)
        write_demo(root / "traces")
        build([root / "traces" / rt for rt in RUNTIMES], root / "dataset")
        page = write(
            connect(root / "dataset"),
            params(timezone="UTC", period="week"),
            root / "report.html",
        )
        shot = Image.open(io.BytesIO(open_page(page, width=1000).screenshot))
    top = shot.crop((0, 0, shot.width, min(TOP, shot.height)))
    small = top.resize((WIDTH, round(top.height * WIDTH / top.width)), Image.Resampling.LANCZOS)
    # an octree palette keeps the model colours apart (median cut merged near hues)
    palette = small.convert("RGB").quantize(colors=128, method=Image.Quantize.FASTOCTREE)
    palette.save(output, optimize=True)
    return output


if __name__ == "__main__":
    path = screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/report.png"))
    print(f"wrote {path} ({path.stat().st_size / 1000:.0f} kB)")
