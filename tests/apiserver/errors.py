"""Failures as kube-apiserver reports them: ``Status`` objects with upstream's reasons.

The wording follows k8s.io/apimachinery/pkg/api/errors so a client that matches
on reason, code or message sees what it would see from a real server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.apiserver.resources import Resource

JSONDict = dict[str, object]

OPTIMISTIC_LOCK = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


@dataclass(slots=True)
class StatusError(Exception):
    """An API error: HTTP code plus the Status body that goes with it."""

    code: int
    reason: str
    message: str
    details: JSONDict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    list_meta: JSONDict | None = None

    def status(self) -> JSONDict:
        body: JSONDict = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta or {}),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(resource: Resource | None, name: str, kind: str | None = None) -> JSONDict:
    out: JSONDict = {"name": name} if name else {}
    if resource is not None and resource.group:
        out["group"] = resource.group
    out["kind"] = kind if kind is not None else (resource.plural if resource else "")
    return out


def not_found(resource: Resource, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{resource.qualified} "{name}" not found', _details(resource, name))


def already_exists(resource: Resource, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{resource.qualified} "{name}" already exists',
                       _details(resource, name))


def conflict(resource: Resource, name: str, why: str, qualified: str | None = None) -> StatusError:
    """``Operation cannot be fulfilled on <resource> "<name>": <why>`` (errors.NewConflict)."""
    what = qualified or resource.qualified
    kind = what.split(".", 1)[0] if qualified else resource.plural
    return StatusError(409, "Conflict", f'Operation cannot be fulfilled on {what} "{name}": {why}',
                       _details(resource, name, kind))


def invalid(group: str, kind: str, name: str, causes: list[tuple[str, str, str]]) -> StatusError:
    """errors.NewInvalid: causes are (reason, field, message-without-field)."""
    texts = [f"{f}: {m}" for _, f, m in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: JSONDict = {"name": name, "kind": kind,
                         "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]}
    if group:
        details["group"] = group
    return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {joined}', details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def expired(message: str, list_meta: JSONDict | None = None) -> StatusError:
    """errors.NewResourceExpired: 410 with reason Expired."""
    return StatusError(410, "Expired", message, list_meta=list_meta)


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def too_large_resource_version(wanted: int, current: int) -> StatusError:
    """storage.NewTooLargeResourceVersionError as the handlers convert it: 504 Timeout, its
    message prefixed ``Timeout: ``, with a ``Retry-After: 1`` header (transcript 31)."""
    return StatusError(504, "Timeout", f"Timeout: Too large resource version: {wanted}, current: {current}",
                       {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                        "retryAfterSeconds": 1}, {"Retry-After": "1"})


def method_not_allowed(method: str) -> StatusError:
    return StatusError(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource")


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                       f"accepted media types include: application/json-patch+json, "
                       f"application/merge-patch+json, application/apply-patch+yaml, "
                       f"application/strategic-merge-patch+json")


def for_code(code: int, message: str, retry_after: int | None = None) -> StatusError:
    """The Status kube-apiserver would send for a bare HTTP code (used by fault injection)."""
    reasons = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
               405: "MethodNotAllowed", 409: "Conflict", 410: "Gone", 422: "Invalid",
               429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}
    details: JSONDict | None = None
    headers: dict[str, str] = {}
    if retry_after is not None:
        details = {"retryAfterSeconds": retry_after}
        headers["Retry-After"] = str(retry_after)
    return StatusError(code, reasons.get(code, "Unknown"), message, details, headers)
