"""The Ray engine and the local process pool publish the same dataset, row for row.

Ray runs for real: a Ray started on this machine for the build (two CPUs), shut down after;
and a cluster of two Ray nodes on this machine (Ray's own `cluster_utils`), whose head has no
CPU, so every task runs on the other node and returns its staging files through the object
store."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.files import FIXTURES, ROOT, traceidx_cli
from traceidx.analysis.query import connect

pytest.importorskip("ray", reason="the ray extra is not installed")

VIEWS = [p.stem for p in sorted((ROOT / "traceidx" / "sql" / "views").glob("*.sql"))]


def _build(dataset: Path, *engine: str) -> subprocess.CompletedProcess[str]:
    return traceidx_cli(
        "build", "--dataset", str(dataset), "--jobs", "2", *engine, str(FIXTURES / "generated")
    )


def _same_in_every_view(one: Path, other: Path) -> None:
    a, b = connect(one), connect(other)
    for view in VIEWS:
        query = f"SELECT * FROM {view} ORDER BY ALL"
        rows = a.execute(query).fetchall()
        assert rows == b.execute(query).fetchall(), view
        assert rows or view.startswith("shell_r"), view  # the comparison is not vacuous


def test_a_ray_build_equals_a_local_build_in_every_view(tmp_path: Path) -> None:
    local = _build(tmp_path / "local")
    assert local.returncode == 0, local.stderr
    ray = _build(tmp_path / "ray", "--engine", "ray")
    assert ray.returncode == 0, ray.stderr
    assert "Traceback" not in ray.stderr
    _same_in_every_view(tmp_path / "local", tmp_path / "ray")


def test_a_build_on_a_cluster_of_two_nodes_equals_a_local_build(tmp_path: Path) -> None:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        cluster.add_node(num_cpus=2)
        cluster.wait_for_nodes()
        ray = _build(tmp_path / "ray", "--engine", "ray", "--ray-address", cluster.address)
    finally:
        cluster.shutdown()
    assert ray.returncode == 0, ray.stderr
    local = _build(tmp_path / "local")
    assert local.returncode == 0, local.stderr
    _same_in_every_view(tmp_path / "local", tmp_path / "ray")
