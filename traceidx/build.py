"""The build job: discover, ingest (in parallel), encode and publish a dataset generation.

Each candidate file is ingested independently (one process per core for larger runs); the
results are encoded and published atomically under the dataset lock. A source that fails
(I/O) is reported and the rest is still published; the exit status says so.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from traceidx.dataset import locked, publish
from traceidx.discover import Candidate, default_roots, discover
from traceidx.encode import encode
from traceidx.ingest import Settings, SourceResult, ingest

Progress = Callable[[int, int, SourceResult], None]


@dataclass(slots=True)
class BuildReport:
    """What a build did."""

    dataset: Path
    generation: int
    results: list[SourceResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def count(self, state: str) -> int:
        return sum(1 for r in self.results if r.state == state)

    @property
    def exit_code(self) -> int:
        """0 when every source was indexed or deliberately skipped, 1 when one failed."""
        return 1 if self.count("failed") or self.problems else 0

    def totals(self) -> dict[str, int]:
        indexed = [r for r in self.results if r.state == "indexed" and r.projection]
        return {
            "sources": len(self.results),
            "indexed": len(indexed),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "records": sum(len(r.records) for r in indexed),
            "sessions": len({r.projection.session.session_id for r in indexed if r.projection}),
            "loops": sum(len(r.projection.loops) for r in indexed if r.projection),
            "items": sum(len(r.projection.items) for r in indexed if r.projection),
            "bytes": sum(r.indexed_bytes for r in indexed),
        }

    def skip_reasons(self) -> Counter[str]:
        return Counter(r.reason or "" for r in self.results if r.state == "skipped")


def _source_entry(result: SourceResult) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "state": result.state,
        "runtime": result.runtime,
        "size": result.size,
        "mtime_ns": result.mtime_ns,
        "indexed_bytes": result.indexed_bytes,
        "tail_bytes": result.tail_bytes,
        "records": len(result.records),
    }
    if result.reason:
        entry["reason"] = result.reason
    if result.malformed:
        entry["malformed"] = result.malformed
    if result.oversized:
        entry["oversized"] = result.oversized
    if result.unknown_types:
        entry["unknown_types"] = result.unknown_types
    return entry


def _ingest_all(
    candidates: list[Candidate], settings: Settings, jobs: int
) -> Iterator[SourceResult]:
    locators = [c.locator for c in candidates]
    if jobs <= 1 or len(locators) < 8:
        for locator in locators:
            yield ingest(locator, settings)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(ingest, locators, [settings] * len(locators), chunksize=4)


def build(
    paths: list[Path] | None,
    dataset: Path,
    *,
    settings: Settings | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> BuildReport:
    """Build a new dataset generation from `paths` (or the default roots)."""
    settings = settings or Settings()
    if paths is None:
        paths = [
            root
            for name, roots in default_roots().items()
            if settings.runtimes is None or name in settings.runtimes
            for root in roots
            if root.exists()
        ]
    with locked(dataset):
        candidates, superseded, problems = discover(paths)
        report = BuildReport(dataset, 0, problems=problems)
        for old in superseded:
            report.results.append(
                SourceResult(old.locator, "skipped", reason=f"superseded by {old.by}: {old.why}")
            )
        for done, result in enumerate(
            _ingest_all(candidates, settings, jobs or os.cpu_count() or 1), 1
        ):
            report.results.append(result)
            if progress is not None:
                progress(done, len(candidates), result)
        manifest = publish(
            dataset,
            encode(report.results),
            {r.locator: _source_entry(r) for r in report.results},
            {
                "text_limit": settings.text_limit,
                "max_record_bytes": settings.max_record_bytes,
                "fingerprint": "blake2b-128",
                "token_estimator": "ascii4_unicode1_v1",
            },
        )
        report.generation = manifest["generation"]
    return report
