"""List and watch query options: parsing and upstream's validation of their combinations.

Mirrors ValidateListOptions (apimachinery/pkg/apis/meta/internalversion/validation)
with the WatchList feature on, and SetListOptionsDefaults, which turns a watch
from resourceVersion "" or "0" into sendInitialEvents=true / NotOlderThan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tests.apiserver import errors

_TRUE = ("true", "1", "True", "TRUE", "t", "T")
_FORBIDDEN = "FieldValueForbidden"
_NOT_SUPPORTED = "FieldValueNotSupported"
_MATCH = "resourceVersionMatch"


@dataclass(frozen=True, slots=True)
class ListOptions:
    watch: bool
    resource_version: str
    match: str
    send_initial_events: bool | None
    allow_bookmarks: bool
    continue_token: str
    limit: int
    timeout_seconds: float | None


def _flag(value: str | None) -> bool:
    return value is not None and value in _TRUE


def parse_options(query: Mapping[str, str]) -> ListOptions:
    """Read the options from the query string, apply upstream's defaulting, then validate (422)."""
    try:
        limit = int(query.get("limit") or 0)
        timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
        if timeout is not None and timeout <= 0:
            timeout = None
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from exc
    send = query.get("sendInitialEvents")
    opts = ListOptions(
        watch=_flag(query.get("watch")),
        resource_version=query.get("resourceVersion", ""),
        match=query.get(_MATCH, ""),
        send_initial_events=None if send is None else _flag(send),
        allow_bookmarks=_flag(query.get("allowWatchBookmarks")),
        continue_token=query.get("continue", ""),
        limit=max(limit, 0),
        timeout_seconds=timeout,
    )
    causes = _watch_problems(opts) if opts.watch else _list_problems(opts)
    if causes:
        raise errors.invalid("meta.k8s.io", "ListOptions", "", causes)
    if opts.watch and opts.send_initial_events is None and not opts.match and opts.resource_version in ("", "0"):
        opts = ListOptions(True, opts.resource_version, "NotOlderThan", True, opts.allow_bookmarks,
                           opts.continue_token, opts.limit, opts.timeout_seconds)
    return opts


def _list_problems(opts: ListOptions) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    if opts.match:
        if not opts.resource_version:
            out.append((_FORBIDDEN, _MATCH, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if opts.continue_token:
            out.append((_FORBIDDEN, _MATCH, "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
        if opts.match not in ("Exact", "NotOlderThan"):
            out.append((_NOT_SUPPORTED, _MATCH, f'Unsupported value: "{opts.match}": supported values: '
                        f'"Exact", "NotOlderThan", ""'))
        if opts.match == "Exact" and opts.resource_version == "0":
            out.append((_FORBIDDEN, _MATCH, 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if opts.send_initial_events is not None:
        out.append((_FORBIDDEN, "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"))
    return out


def _watch_problems(opts: ListOptions) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    if opts.send_initial_events is not None and opts.match != "NotOlderThan":
        out.append((_FORBIDDEN, _MATCH, "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if opts.match:
        if opts.send_initial_events is None:
            out.append((_FORBIDDEN, _MATCH, "Forbidden: resourceVersionMatch is forbidden for watch unless "
                        "sendInitialEvents is provided"))
        if opts.match != "NotOlderThan":
            out.append((_NOT_SUPPORTED, _MATCH, f'Unsupported value: "{opts.match}": supported values: "NotOlderThan"'))
        if opts.continue_token:
            out.append((_FORBIDDEN, _MATCH, "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
    return out


def parse_revision(text: str) -> int:
    """A resourceVersion query value as a revision (400 as upstream when it is not a number)."""
    try:
        value = int(text)
    except ValueError as exc:
        raise errors.bad_request(f'invalid resource version "{text}"') from exc
    if value < 0:
        raise errors.bad_request(f'invalid resource version "{text}"')
    return value
