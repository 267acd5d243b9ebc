"""Errors raised while reading Kubernetes objects."""

from __future__ import annotations


class ObjectError(ValueError):
    """A field of an object that the scheduler cannot read.

    ``field`` is the JSON path inside the object (``spec.containers[0].resources``);
    callers that know the file and the object add them when they report it.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def under(self, prefix: str) -> "ObjectError":
        """The same error, with its field path nested under ``prefix``."""
        field = f"{prefix}.{self.field}" if self.field and not self.field.startswith("[") else f"{prefix}{self.field}"
        return ObjectError(field, self.message)
