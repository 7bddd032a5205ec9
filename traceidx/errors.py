"""Every exception traceidx raises on purpose: one flat family under `TraceidxError`.

A message is one line that says where, what, and the next step; `exit_code` is the status the
command line exits with when the error ends a command. Evidence problems (malformed lines,
unknown record types, files no adapter claims) are data, not exceptions: they never come here.
"""

from __future__ import annotations

from typing import ClassVar


class TraceidxError(Exception):
    """The base of the family: a problem a user can act on."""

    exit_code: ClassVar[int] = 1


class UsageError(TraceidxError):
    """A command, flag or parameter that does not exist or is malformed."""

    exit_code = 2


class ReportError(TraceidxError):
    """A report or a report parameter that does not exist or is malformed."""

    exit_code = 2


class DatasetError(TraceidxError):
    """The dataset on disk cannot be used: missing, unreadable or of another format."""

    exit_code = 2


class DatasetLocked(TraceidxError):
    """Another build holds the dataset's lock."""

    exit_code = 3


class GenerationTaken(TraceidxError):
    """Another builder published the generation this build was writing (a dataset on object
    storage, where a conditional write guards publication): nothing of this build is
    visible."""

    exit_code = 3


class DamagedPart(TraceidxError):
    """Published part files are missing or do not match what the manifest recorded: one line
    each (`lines`)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class PublishError(TraceidxError):
    """Writing a new generation failed (a full disk, a read-only folder): the previous
    generation stays current."""


def write_failure(exc: OSError, path: object) -> str:
    """Where writing failed and what happened, in a few words."""
    what = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"{exc.filename or path}: {what}"


class IdCollision(TraceidxError):
    """Two different facts received the same id: publishing would merge them (a bug)."""


class AdapterFailure(TraceidxError):
    """An adapter raised on a record (`cause`): a bug, reported as that source's failure."""

    def __init__(self, position: int, cause: Exception) -> None:
        super().__init__(f"on line {position + 1}")
        self.cause = cause  # kept, not only chained (a pickled exception loses `__cause__`)


class ExportError(TraceidxError):
    """An export could not be delivered (the endpoint refused it or could not be reached, the
    file could not be written); what was sent before stays sent."""

    exit_code = 1
