"""Plugin results: ``Code`` and ``Status``, as upstream's ``fwk.Status``."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Code", "Status", "SUCCESS", "SKIP"]


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """Upstream's spelling, as it appears in explain output and logs."""
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """A code, the reasons behind it, and the plugin that gave it.

    ``None`` stands for success wherever a ``Status`` is returned, as a nil
    ``*Status`` does upstream.
    """

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(self, code: Code, *reasons: str, plugin: str = "", error: BaseException | None = None) -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin
        self.error = error

    @classmethod
    def as_error(cls, error: BaseException, plugin: str = "") -> "Status":
        return cls(Code.ERROR, str(error), plugin=plugin, error=error)

    def with_plugin(self, plugin: str) -> "Status":
        return Status(self.code, *self.reasons, plugin=plugin, error=self.error)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Status) and (self.code, self.reasons, self.plugin) == (other.code, other.reasons, other.plugin)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons, self.plugin))

    def __repr__(self) -> str:
        plugin = f" by {self.plugin}" if self.plugin else ""
        return f"Status({self.code.label}{plugin}: {self.message!r})"


SUCCESS = Status(Code.SUCCESS)
SKIP = Status(Code.SKIP)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


__all__ += ["is_success"]
