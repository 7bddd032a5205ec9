"""Execute the notebooks top to bottom; with --save, store their outputs (charts included).

Usage: python notebooks/execute.py [--save] [NOTEBOOK ...]

Each notebook builds its own demo dataset in a temporary folder and asserts on what it shows,
so a run that finishes without an error is a passing run. `make notebooks` refreshes the
saved outputs that readers see without running anything.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def execute(path: Path, *, save: bool = False, timeout: int = 600) -> nbformat.NotebookNode:
    """Run one notebook in a fresh kernel; returns the executed notebook."""
    book = nbformat.read(path, as_version=4)
    client = NotebookClient(
        book, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    )
    client.execute()
    if save:
        for cell in book.cells:
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(book, path)
    return book


def images(book: nbformat.NotebookNode) -> int:
    """How many image outputs (charts) an executed notebook holds."""
    return sum(
        1
        for cell in book.cells
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--save", action="store_true", help="write the outputs back")
    args = parser.parse_args()
    for path in args.notebooks or sorted(HERE.glob("*.ipynb")):
        book = execute(path, save=args.save)
        print(f"{path.name}: ok, {images(book)} charts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
