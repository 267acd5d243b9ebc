"""Problems with a trace: every one names the file, the line and the column (or field)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TraceError", "TraceProblem", "ReplayError"]


@dataclass(frozen=True, slots=True)
class TraceProblem:
    file: str
    line: int  # 0: the file as a whole
    column: str  # a CSV column, or a Kubernetes object and field
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.column}: {self.message}" if self.column else f"{where}: {self.message}"


class TraceError(ValueError):
    """A trace that cannot be replayed; ``problems`` lists each bad cell or object."""

    def __init__(self, problems: list[TraceProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ReplayError(ValueError):
    """A replay asked for something that cannot run (an unknown policy, a bad level)."""
