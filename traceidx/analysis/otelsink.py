"""Where an OpenTelemetry export goes, and what the previous one sent.

* `FileSink`: OTLP/JSON lines, one ``ExportTraceServiceRequest`` per line (the collector's file
  exporter's format), written to a partial file and renamed when complete.
* `HttpSink`: OTLP/HTTP with protobuf bodies to a traces endpoint, with the standard variables
  (`endpoint`, `headers`): ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (used as it is), else
  ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``/v1/traces`` appended); ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``
  else ``OTEL_EXPORTER_OTLP_HEADERS`` (``key=value`` pairs, comma-separated, values
  URL-encoded); ``…_COMPRESSION`` (``gzip`` or ``none``) and ``…_TIMEOUT`` (milliseconds). A
  request the endpoint refuses for a while (429, 502, 503, 504, or no connection) is retried
  with exponential back-off (``Retry-After`` honoured), up to `RETRIES` times.
* The ``--since-last`` state, ``otel-export.json`` beside the manifest: for each destination and
  scope, the manifest's sync state of every source when its last export completed; the sessions
  of sources whose state changed since (new, grown, re-projected) are what is new.
"""

from __future__ import annotations

import gzip
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.analysis.otel import Sink, to_json
from traceidx.errors import ExportError, UsageError

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

#: tries after the first for a request the endpoint refuses for a while
RETRIES = 5
#: statuses that mean "try again later" (OTLP/HTTP's retryable responses)
RETRYABLE = frozenset({429, 502, 503, 504})
#: the state file beside the manifest
STATE = "otel-export.json"


class FileSink(Sink):
    """OTLP/JSON lines into `path` (complete only once closed). Protobuf's JSON mapping runs
    in pure Python and costs several times the building of a span, so with `jobs` above 1 the
    requests are turned into JSON by that many worker processes, and written in order."""

    def __init__(self, path: Path, jobs: int = 1) -> None:
        self.path = path
        self.partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        try:
            self.out = self.partial.open("w", encoding="utf-8")
        except OSError as exc:
            raise ExportError(
                f"{path}: cannot write the export ({exc.strerror}); choose another --output"
            ) from exc
        self.requests = 0
        self.jobs = jobs
        self.pool: Any = None
        self.pending: deque[Any] = deque()
        if jobs > 1:
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import get_context

            # forkserver: the workers are not forked from a process running DuckDB's threads
            self.pool = ProcessPoolExecutor(jobs, mp_context=get_context("forkserver"))

    def send(self, request: ExportTraceServiceRequest, spans: int) -> None:
        if self.pool is None:
            self._write(to_json(request))
            return
        self.pending.append(self.pool.submit(json_line, request.SerializeToString()))
        while len(self.pending) > 2 * self.jobs:  # bounded: memory stays a few requests
            self._write(self.pending.popleft().result())

    def _write(self, line: str) -> None:
        try:
            self.out.write(line)
            self.out.write("\n")
        except OSError as exc:
            raise ExportError(
                f"{self.path}: cannot write the export ({exc.strerror}); choose another --output"
            ) from exc
        self.requests += 1

    def close(self) -> None:
        while self.pending:
            self._write(self.pending.popleft().result())
        if self.pool is not None:
            self.pool.shutdown()
        self.out.close()
        self.partial.replace(self.path)

    def abandon(self) -> None:
        """Remove the partial file of an export that failed."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
        self.out.close()
        self.partial.unlink(missing_ok=True)


def json_line(body: bytes) -> str:
    """A serialised request as one OTLP/JSON line (run in a worker process)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    return to_json(ExportTraceServiceRequest.FromString(body))


def _env(name: str) -> str | None:
    """An OTLP variable: the traces-specific one, else the general one."""
    for key in (f"OTEL_EXPORTER_OTLP_TRACES_{name}", f"OTEL_EXPORTER_OTLP_{name}"):
        value = os.environ.get(key, "").strip()
        if value:
            return value
    return None


def endpoint(given: str | None = None) -> str | None:
    """The traces URL: `given` (``/v1/traces`` appended when it has no path), else the
    variables' (see the module doc); None when neither says."""
    if given:
        parts = urllib.parse.urlsplit(given)
        return given if parts.path not in ("", "/") else given.rstrip("/") + "/v1/traces"
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + "/v1/traces" if base else None


def headers() -> dict[str, str]:
    """The headers the variables ask for (``key=value`` pairs, comma-separated)."""
    found: dict[str, str] = {}
    for pair in (_env("HEADERS") or "").split(","):
        key, equals, value = pair.partition("=")
        if equals and key.strip():
            found[urllib.parse.unquote(key.strip())] = urllib.parse.unquote(value.strip())
    return found


class HttpSink(Sink):
    """OTLP/HTTP protobuf requests to one traces URL."""

    def __init__(self, url: str, sleep: Any = time.sleep) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(
                f"OTLP endpoint {url!r} is not an http(s) URL; give e.g. "
                "--endpoint http://localhost:4318"
            )
        self.url = url
        self.headers = {**headers(), "Content-Type": "application/x-protobuf"}
        compression = (_env("COMPRESSION") or "none").lower()
        if compression not in ("gzip", "none"):
            raise UsageError(
                f"OTEL_EXPORTER_OTLP_COMPRESSION={compression!r}: traceidx sends gzip or none"
            )
        self.gzip = compression == "gzip"
        if self.gzip:
            self.headers["Content-Encoding"] = "gzip"
        timeout = _env("TIMEOUT")
        try:
            self.timeout = int(timeout) / 1000 if timeout else 10.0
        except ValueError:
            raise UsageError(
                f"OTEL_EXPORTER_OTLP_TIMEOUT={timeout!r} is not milliseconds"
            ) from None
        self.sleep = sleep
        self.requests = 0
        self.rejected = 0

    def send(self, request: ExportTraceServiceRequest, spans: int) -> None:
        body = request.SerializeToString()
        if self.gzip:
            body = gzip.compress(body)
        for attempt in range(RETRIES + 1):
            wait = self._post(body, final=attempt == RETRIES)
            if wait is None:
                self.requests += 1
                return
            self.sleep(wait if wait > 0 else min(2.0**attempt, 30.0))

    def close(self) -> None:
        """Nothing pending: each request was sent when it was built."""

    def _post(self, body: bytes, final: bool) -> float | None:
        """Post once: None when accepted, else the seconds to wait (0: back off) before the
        next try; raises when the refusal is final."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        post = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        try:
            with urllib.request.urlopen(post, timeout=self.timeout) as answer:
                reply = answer.read()
        except urllib.error.HTTPError as exc:
            if exc.code in RETRYABLE and not final:
                return _retry_after(exc.headers.get("Retry-After"))
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            raise ExportError(
                f"{self.url}: the OTLP endpoint answered {exc.code} {exc.reason}"
                f"{': ' + detail if detail else ''}; check the URL and the "
                "OTEL_EXPORTER_OTLP_HEADERS it needs"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            if not final:
                return 0.0
            reason = getattr(exc, "reason", exc)
            raise ExportError(
                f"{self.url}: cannot reach the OTLP endpoint ({reason}) after {RETRIES + 1} "
                "tries; is the collector running?"
            ) from None
        if reply:
            response = ExportTraceServiceResponse()
            try:
                response.ParseFromString(reply)
            except Exception:  # a 2xx with a body that is not the response: nothing to read
                return None
            self.rejected += response.partial_success.rejected_spans
        return None


def _retry_after(value: str | None) -> float:
    """Seconds from a Retry-After header (0: none given, back off)."""
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


# -- the --since-last state --------------------------------------------------------------------


def signatures(dataset: Path) -> tuple[dict[str, str], str]:
    """Each source's sync state in the current manifest (source id → signature) and the
    settings the facts were built with."""
    from traceidx.store.dataset import read_manifest

    manifest = read_manifest(dataset)
    if manifest is None:
        raise UsageError(f"{dataset}: no dataset here yet (run `traceidx build` first)")
    found: dict[str, str] = {}
    for entry in manifest.sources.values():
        if entry.source_id is None:
            continue
        found[str(entry.source_id)] = (
            f"{entry.state}:{entry.size}:{entry.mtime_ns}:{entry.indexed_bytes}:"
            f"{entry.digest}:{entry.records}:{entry.loops}:{entry.items}:{entry.session_id}"
        )
    settings = repr(manifest.settings)
    return found, settings


def changed_sources(
    dataset: Path, key: str, current: dict[str, str], settings: str
) -> list[int] | None:
    """The ids of the sources whose state differs from the last export under `key` (None:
    there was none, or the dataset's settings changed since: everything is new)."""
    from traceidx.analysis.summary import read_beside

    state = read_beside(dataset, STATE) or {}
    previous = state.get("exports", {}).get(key)
    if not isinstance(previous, dict) or previous.get("settings") != settings:
        return None
    sources = previous.get("sources", {})
    return [int(s) for s, signature in current.items() if sources.get(s) != signature]


def remember(dataset: Path, key: str, current: dict[str, str], settings: str) -> None:
    """Record the sources' state an export under `key` has sent."""
    from datetime import UTC, datetime

    from traceidx.analysis.summary import read_beside, write_beside

    state = read_beside(dataset, STATE) or {}
    exports = state.get("exports")
    if not isinstance(exports, dict):
        exports = {}
    exports[key] = {
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": settings,
        "sources": current,
    }
    write_beside(dataset, STATE, {"format": 1, "exports": exports})
