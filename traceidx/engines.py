"""Where the per-source work runs: the local process pool (the default) or Ray tasks.

Both engines call the same worker (`traceidx.worker.process_batch`) on the same batches and
hand the results back in batch order, so the rows a build publishes do not depend on the
engine or on how many workers it had. Publication stays with the driver, one atomic commit.

Ray (``pip install 'traceidx[ray]'``) runs the batches as tasks on the cluster named by
``--ray-address`` or ``RAY_ADDRESS``, or on a Ray started on this machine for the build
(``--jobs`` CPUs, shut down when the build ends). Nothing reaches the network: Ray's usage
statistics are off unless ``RAY_USAGE_STATS_ENABLED`` says otherwise. The workers spool
their rows to the dataset's staging folder, so on a cluster of several machines that folder
must be on storage every node mounts.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Literal

from traceidx.errors import UsageError
from traceidx.sync import Decision
from traceidx.worker import Batch, Task, plan_batches, process_batch, tune_process
from traceidx.worker import Work as SourceWork

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
        with ProcessPoolExecutor(max_workers=workers, initializer=tune_process) as pool:
            yield from _in_order(
                batches, 2 * jobs, lambda b: pool.submit(process_batch, b, task), Future.result
            )


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


def _ray_batch(batch: Work, task: Task) -> Batch:
    """One batch in a Ray worker, tuned as a pool worker is."""
    tune_process()
    return process_batch(batch, task)


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
        yield from _in_order(batches, window, lambda b: remote.remote(b, task), ray.get)
    finally:
        if started:
            ray.shutdown()
