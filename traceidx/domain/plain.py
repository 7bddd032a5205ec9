"""Value classes made once per line or per item: equality and repr from their field names.

mypyc compiles a dataclass's methods but leaves the ``__init__`` that `dataclasses` writes an
interpreted function, about five times the cost of a compiled one. A class made for every
line or item (a framed line, a record's facts, a draft item) therefore writes its own
``__init__`` and takes equality and repr from `Plain`.
"""

from __future__ import annotations

from typing import ClassVar

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # as a draft item does (adapters/base.py)
class Plain:
    """Base of the value classes: `FIELDS` names their fields, in order."""

    FIELDS: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.FIELDS
        )

    def __repr__(self) -> str:
        members = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__name__}({members})"
