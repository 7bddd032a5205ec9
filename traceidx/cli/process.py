"""Process-wide settings a traceidx command makes for itself before Arrow or NumPy load.

A library does not change its caller's process; a command owns its process, so
`traceidx.cli.main.main` calls `configure` first:

* ``ARROW_DEFAULT_MEMORY_POOL=jemalloc`` (Linux, where pyarrow ships jemalloc): a build sets
  Arrow's Python-side allocator to jemalloc (`traceidx.pipeline.job.tuned`), but Arrow's C++ code
  (Parquet's page and compression buffers among it) allocates from the C++ default, which
  only this variable, read when Arrow loads, can choose. With mimalloc there, publication
  zeroed freshly faulted pages again and again: a cold build of the generated 1 GB corpus
  used 1.7% more CPU and its build process 40 MiB more memory.
* ``OPENBLAS_NUM_THREADS=1``: NumPy (which pyarrow loads) starts OpenBLAS with a thread per
  core, and each spins about 0.1 CPU-second before it sleeps; a command does no linear
  algebra.

A value the user has set wins. Library callers who want the same can set both variables
before their process imports pyarrow.

A command that builds (build, watch) also keeps pyarrow from importing pandas in its
process (`owns_arrow`): its first conversion of a Python list would, only to ask whether the
list is a pandas object, about a quarter of a CPU-second of every build when pandas is
installed (a build's workers are spared it however the build is called).
"""

from __future__ import annotations

import os
import sys

#: variable -> the value a command sets unless set already (jemalloc: only where pyarrow's
#: wheels ship it)
SETTINGS: dict[str, str] = {"OPENBLAS_NUM_THREADS": "1"}
if sys.platform == "linux":
    SETTINGS["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"


def configure() -> dict[str, str]:
    """Set every `SETTINGS` variable the user has not set; the ones set. Too late once
    pyarrow or NumPy is imported (nothing is set then)."""
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return {}
    made = {name: value for name, value in SETTINGS.items() if name not in os.environ}
    os.environ.update(made)
    return made


def owns_arrow() -> None:
    """Before a command builds: pyarrow does not import pandas to convert rows
    (`traceidx.tables.schema.skip_pandas_probe`)."""
    from traceidx.tables.schema import skip_pandas_probe

    skip_pandas_probe()
