"""API failures as one exception type, classified the way apimachinery's ``errors`` package does.

The API server reports failures as a ``Status`` object (``reason`` such as ``NotFound``,
``Conflict``, ``Expired``); callers branch on the reason and the HTTP code, never on the
message. A transport failure (refused connection, reset, timeout) has no HTTP code and is
reported with ``status`` 0 so that the retry and reconnect logic sees every failure the same
way.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

__all__ = ["ApiError", "REASON_CONNECTION_REFUSED", "REASON_TIMEOUT", "REASON_TRANSPORT", "api_error_from_response",
           "api_error_from_status", "transport_error"]

# Reasons used for failures that did not come from the server (status 0).
REASON_CONNECTION_REFUSED = "ConnectionRefused"
REASON_TRANSPORT = "TransportError"
REASON_TIMEOUT = "Timeout"

# apimachinery's reason for each code when the body is not a Status (NewGenericServerResponse).
_REASON_BY_CODE: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """One failed API call: the server's ``Status`` or a transport failure (``status == 0``)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        retry_after: float | None = None,
        details: Mapping[str, object] | None = None,
    ) -> None:
        # A transport failure's message is already the whole story, worded as client-go's.
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.details: dict[str, object] = dict(details or {})

    def is_not_found(self) -> bool:
        return self.reason == "NotFound" or (self.status == 404 and self.reason in ("", "Unknown"))

    def is_conflict(self) -> bool:
        return self.reason == "Conflict" or self.status == 409

    def is_already_exists(self) -> bool:
        return self.reason == "AlreadyExists"

    def is_gone(self) -> bool:
        """410: ``Gone`` or ``Expired`` -- the resourceVersion is too old; relist."""
        return self.status == 410 or self.reason in ("Gone", "Expired")

    is_expired = is_gone

    def is_too_many_requests(self) -> bool:
        return self.status == 429 or self.reason == "TooManyRequests"

    def is_forbidden(self) -> bool:
        return self.status == 403 or self.reason == "Forbidden"

    def is_unauthorized(self) -> bool:
        return self.status == 401 or self.reason == "Unauthorized"

    def is_internal_error(self) -> bool:
        return self.reason == "InternalError" or (self.status == 500 and self.reason in ("", "Unknown"))

    def is_invalid(self) -> bool:
        return self.status == 422 or self.reason == "Invalid"

    def is_too_large_resource_version(self) -> bool:
        """The requested resourceVersion is newer than the server's (a lagging watch cache)."""
        causes = self.details.get("causes")
        return isinstance(causes, list) and any(
            isinstance(c, Mapping) and c.get("reason") == "ResourceVersionTooLarge" for c in causes
        )

    def is_transport(self) -> bool:
        """No HTTP answer at all: the server is unreachable or the connection broke."""
        return self.status == 0

    def is_connection_refused(self) -> bool:
        return self.status == 0 and self.reason == REASON_CONNECTION_REFUSED


def api_error_from_status(status: Mapping[str, object], *, http_status: int = 0,
                          retry_after: float | None = None) -> ApiError:
    """An ``ApiError`` from a decoded ``Status`` (a response body or a watch ERROR event)."""
    code = status.get("code")
    code_int = code if isinstance(code, int) and code > 0 else http_status
    reason = status.get("reason")
    reason_str = reason if isinstance(reason, str) and reason else _REASON_BY_CODE.get(code_int, "Unknown")
    message = status.get("message")
    details = status.get("details")
    details_map = details if isinstance(details, Mapping) else {}
    if retry_after is None:
        seconds = details_map.get("retryAfterSeconds")
        if isinstance(seconds, int) and seconds > 0:
            retry_after = float(seconds)
    return ApiError(code_int, reason_str, message if isinstance(message, str) else "",
                    retry_after=retry_after, details=details_map)


def api_error_from_response(http_status: int, body: bytes, retry_after: float | None) -> ApiError:
    """Decode a failed response: a ``Status`` body when there is one, the code's reason otherwise."""
    try:
        decoded = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        return api_error_from_status(decoded, http_status=http_status, retry_after=retry_after)
    text = body[:512].decode("utf-8", "replace").strip()
    reason = _REASON_BY_CODE.get(http_status, "Unknown")
    message = text or f"the server responded with the status code {http_status} but did not return more information"
    return ApiError(http_status, reason, message, retry_after=retry_after)


def transport_error(reason: str, message: str) -> ApiError:
    """No answer: ``reason`` one of the ``REASON_*`` above, ``message`` client-go's text of the
    failure (``transport_errors.describe``), which is also the error's text."""
    return ApiError(0, reason, message)
