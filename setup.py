"""Build hook: compiles the per-line modules with mypyc when it can, else installs pure Python.

Every module in `COMPILED` stays an ordinary, importable Python file; mypyc turns it into a C
extension that is imported in its place (about a quarter less CPU per build). Set
``TRACEIDX_PURE=1`` to skip compilation (editable development installs do: an extension would
shadow edits to its source). If mypyc or a C compiler is missing or fails, the install goes on
without extensions and says so: the pure modules behave identically, only slower.
Extensions are all built or none.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: the per-line core a build spends its time in: the domain's value classes and rules, framing
#: and records, projection and the ingest loop. Adapters are plain Python (they are plugins:
#: a new runtime needs no compiler), and so is everything that runs once per build.
COMPILED = [
    "traceidx/domain/drafts.py",
    "traceidx/domain/ids.py",
    "traceidx/domain/plain.py",
    "traceidx/domain/rules.py",
    "traceidx/domain/schema.py",
    "traceidx/domain/shell.py",
    "traceidx/domain/text.py",
    "traceidx/domain/timestamps.py",
    "traceidx/sources/frame.py",
    "traceidx/sources/records.py",
    "traceidx/sources/sourceio.py",
    "traceidx/projection/ingest.py",
    "traceidx/projection/items.py",
    "traceidx/projection/project.py",
]


def _warn(message: str) -> None:
    print(f"traceidx: {message}; installing the pure-Python modules", file=sys.stderr)


class _OptionalBuildExt(build_ext):
    """Builds the extensions all or none: a failed compilation leaves no extension behind."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a compiler error, a missing compiler or header
            _warn(f"compiling with mypyc failed ({type(exc).__name__}: {exc})")
            for output in self.get_outputs():
                if os.path.exists(output):
                    os.remove(output)
            self.extensions = []

    def get_outputs(self) -> list[str]:
        return super().get_outputs() if self.extensions else []


#: the setup commands that build code (metadata steps need no compiling)
_BUILDS = {"build", "build_ext", "bdist_wheel", "install", "develop", "editable_wheel"}


def _extensions(folder: str) -> list[Any]:
    if os.environ.get("TRACEIDX_PURE", "") not in ("", "0") or not _BUILDS & set(sys.argv):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn("mypyc is not installed")
        return []
    try:
        return list(mypycify(COMPILED, opt_level="3", target_dir=folder))
    except BaseException as exc:  # mypyc reports type errors by exiting
        _warn(f"mypyc could not compile ({type(exc).__name__}: {exc})")
        return []


# A fresh build folder each time: objects or extensions left in `build/` by another mypy
# version, module list or an earlier pure build must never end up in this install.
_FOLDER = tempfile.mkdtemp(prefix="traceidx-build-")
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
setup(
    ext_modules=_extensions(os.path.join(_FOLDER, "mypyc")),
    cmdclass={"build_ext": _OptionalBuildExt},
    options={"build": {"build_base": _FOLDER}},
)
