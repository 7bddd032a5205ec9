"""A command's own process settings: made before Arrow loads, never over the user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from traceidx.cli.process import SETTINGS, configure

_PROBE = """
import json, sys
from traceidx.cli.process import configure
made = configure()
import numpy, pyarrow as pa
print(json.dumps({"made": made, "arrow": pa.default_memory_pool().backend_name}))
"""


def _probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(sys.platform != "linux", reason="jemalloc is chosen on Linux only")
def test_a_command_gives_arrow_jemalloc_and_openblas_one_thread() -> None:
    result = _probe()
    assert result["made"] == {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc", "OPENBLAS_NUM_THREADS": "1"}
    assert result["arrow"] == "jemalloc"


def test_the_users_own_settings_win() -> None:
    result = _probe(ARROW_DEFAULT_MEMORY_POOL="system", OPENBLAS_NUM_THREADS="2")
    assert result["made"] == {} and result["arrow"] == "system"


def test_too_late_once_arrow_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow  # noqa: F401  (loaded, as in this test process)

    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert configure() == {}
    assert not any(name in os.environ for name in SETTINGS)
