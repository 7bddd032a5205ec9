"""Where the per-source work runs: the local process pool (the default) or Ray tasks.

Both engines call the same worker (`traceidx.pipeline.worker.process_batch`) on the same batches and
hand the results back in batch order, so the rows a build publishes do not depend on the
engine or on how many workers it had. Publication stays with the driver, one atomic commit.

Ray (``pip install 'traceidx[ray]'``) runs the batches as tasks on the cluster named by
``--ray-address`` or ``RAY_ADDRESS``, or on a Ray started on this machine for the build
(``--jobs`` CPUs, shut down when the build ends). Nothing reaches the network: Ray's usage
statistics are off unless ``RAY_USAGE_STATS_ENABLED`` says otherwise. On a Ray of one
node the workers spool their rows to the build's staging folder, as pool workers do; on a
cluster of several, each task spools to a folder of its own node and returns the files'
bytes through Ray's object store, and the driver writes them to its staging folder, so no
folder need be shared between machines.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from traceidx.errors import PublishError, UsageError, write_failure
from traceidx.pipeline.sync import Decision
from traceidx.pipeline.worker import (
    Batch,
    SourceOutcome,
    SourceWork,
    Task,
    plan_batches,
    process_batch,
    tune_process,
)
from traceidx.tables.schema import skip_pandas_probe

Engine = Literal["local", "ray"]
ENGINES: tuple[Engine, ...] = ("local", "ray")

Work = list[SourceWork]


def run_batches(
    decisions: list[Decision],
    task: Task,
    jobs: int,
    checkpoints: dict[str, str],
    engine: Engine = "local",
    address: str | None = None,
) -> Iterator[Batch]:
    """Batch results in batch order; at most two batches per worker are in flight, so a
    slow consumer never lets finished results pile up in memory."""
    batches = plan_batches(decisions, checkpoints)
    if engine == "ray":
        yield from _on_ray(batches, task, jobs, address)
    elif jobs <= 1 or len(batches) < 2:
        for batch in batches:
            yield process_batch(batch, task)
    else:
        workers = min(jobs, len(batches))
        with ProcessPoolExecutor(max_workers=workers, initializer=_pool_worker) as pool:
            yield from _in_order(
                batches, 2 * jobs, lambda b: pool.submit(process_batch, b, task), Future.result
            )


def _pool_worker() -> None:
    """Set up a pool worker process (it only ever builds): tuned, and pyarrow never imports
    pandas in it (`traceidx.tables.schema.skip_pandas_probe`)."""
    tune_process()
    skip_pandas_probe()


def _in_order(
    batches: list[Work], window: int, submit: Callable[[Work], Any], get: Callable[[Any], Batch]
) -> Iterator[Batch]:
    """Submit batches, at most `window` in flight, and yield their results (`get` of what
    `submit` returned) in order."""
    pending: deque[Any] = deque()
    todo = iter(batches)
    for batch in itertools.islice(todo, window):
        pending.append(submit(batch))
    while pending:
        handle = pending.popleft()
        result = get(handle)
        for batch in itertools.islice(todo, 1):
            pending.append(submit(batch))
        yield result


#: a batch done by a Ray task: its results, and the files it spooled (name -> bytes) when
#: they were written on the task's own node
Shipped = tuple[Batch, dict[str, bytes]]


def _ray_batch(batch: Work, task: Task, ship: bool) -> Shipped:
    """One batch in a Ray worker, tuned as a pool worker is. With `ship`, its rows are
    spooled to a folder of this node and returned as bytes (the folder is removed)."""
    tune_process()
    if not ship:
        return process_batch(batch, task), {}
    with tempfile.TemporaryDirectory(prefix="traceidx-batch-") as folder:
        done = process_batch(batch, replace(task, spool_folder=Path(folder)))
        return done, {path.name: path.read_bytes() for path in Path(folder).iterdir()}


def _landed(shipped: Shipped, folder: Path) -> Batch:
    """A Ray task's batch with the files it returned written to the driver's staging folder,
    and its outcomes pointing at them there."""
    done, files = shipped
    if not files:
        return done
    for name, data in files.items():
        try:
            (folder / name).write_bytes(data)
        except OSError as exc:
            raise PublishError(write_failure(exc, folder / name)) from exc

    def here(path: str) -> str:
        return str(folder / Path(path).name)

    def landed(outcome: SourceOutcome) -> SourceOutcome:
        staged = outcome.staged
        if staged is None or staged.checkpoint is None:
            return outcome
        return replace(outcome, staged=replace(staged, checkpoint=here(staged.checkpoint)))

    spooled = [(g, t, replace(rows, path=here(rows.path))) for g, t, rows in done.spooled]
    return replace(done, outcomes=[landed(o) for o in done.outcomes], spooled=spooled)


def _on_ray(batches: list[Work], task: Task, jobs: int, address: str | None) -> Iterator[Batch]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            "--engine ray needs Ray: pip install 'traceidx[ray]' (or use the local engine)"
        ) from exc
    address = address or os.environ.get("RAY_ADDRESS") or None
    started = not ray.is_initialized()
    if started:
        if address is None:
            ray.init(
                num_cpus=jobs,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(num_cpus=1)(_ray_batch)
        cpus = ray.cluster_resources().get("CPU", jobs)  # type: ignore[no-untyped-call]
        window = 2 * max(1, int(cpus))
        # several nodes: a task's staging files come back through the object store
        nodes = [node for node in ray.nodes() if node.get("Alive")]  # type: ignore[no-untyped-call]
        ship = len(nodes) > 1
        assert task.spool_folder is not None
        folder = task.spool_folder
        yield from _in_order(
            batches,
            window,
            lambda b: remote.remote(b, task, ship),
            lambda handle: _landed(ray.get(handle), folder),
        )
    finally:
        if started:
            ray.shutdown()
