"""kube-scheduler's health and metrics endpoints: ``/healthz``, ``/livez``, ``/readyz``,
``/metrics`` and ``/metrics/resources``, and the z-pages ``/configz``, ``/flagz`` and
``/statusz`` (cmd/kube-scheduler/app/server.go, apiserver pkg/server/healthz; see zpages.py).

The probes answer as component-base's healthz handler does, so kubelet probes and
scripts written against kube-scheduler work unchanged:

* 200 ``ok`` when every check passes; ``?verbose`` lists each check (``[+]name ok``)
  and ends with ``<endpoint> check passed``;
* 500 listing every check, failures as ``[-]name failed: reason withheld`` (the reason
  goes to the log only: the endpoint is public), ending with ``<endpoint> check failed``;
* ``?exclude=name`` skips a check; ``/<endpoint>/<name>`` runs one check and shows its
  reason.

Which checks run where is kube-scheduler's: ``/healthz`` runs the given checks (the
leader election watchdog when electing), ``/livez`` only ``ping``, ``/readyz`` the given
checks, ``shutdown`` (failing once ``stop`` began) and the readiness-only ones (the
integrator's ``sched-handler-sync``). An endpoint without checks runs ``ping``.
Upstream serves these on the HTTPS port 10259; we serve plain HTTP unless given an
SSL context.
"""

from __future__ import annotations

import logging
import ssl as ssl_module
import time
from collections.abc import Callable, Mapping

import orjson
from prometheus_client import generate_latest

from kubesched.scheduler.metrics import CONTENT_TYPE, SchedulerMetrics

from .http_server import HttpServer, Reply, Request
from .zpages import ZPages, flagz_text, statusz_text

__all__ = ["Check", "Endpoints", "SHUTDOWN_CHECK"]

log = logging.getLogger(__name__)

#: A check answers True when healthy, otherwise False or a reason.
Check = Callable[[], bool | str]

SHUTDOWN_CHECK = "shutdown"
_TEXT = "text/plain; charset=utf-8"


def _ping() -> bool | str:
    return True


def _run(check: Check) -> str | None:
    """None when the check passes, else why it failed."""
    try:
        result = check()
    except Exception as error:  # noqa: BLE001 - a crashing check is a failing check
        return f"{type(error).__name__}: {error}"
    if result is True:
        return None
    return result if isinstance(result, str) and result else "check failed"


class Endpoints:
    """The probe and metrics HTTP server."""

    def __init__(self, metrics: SchedulerMetrics, *, checks: Mapping[str, Check] | None = None,
                 ready_checks: Mapping[str, Check] | None = None,
                 live_checks: Mapping[str, Check] | None = None, resources: Callable[[], bytes] | None = None,
                 zpages: ZPages | None = None) -> None:
        """``checks`` run in /healthz and /readyz (kube-scheduler: the leaderElection
        watchdog); ``ready_checks`` only in /readyz (``sched-handler-sync``);
        ``live_checks`` is a synonym of ``checks`` (the name the run app passes);
        ``resources`` answers /metrics/resources; ``zpages`` serves /configz, /flagz, /statusz."""
        self._metrics = metrics
        self._resources = resources
        self._zpages = zpages
        self._shutting_down = False
        healthz = {**(checks or {}), **(live_checks or {})}
        readyz = {**healthz, SHUTDOWN_CHECK: self._shutdown_check, **(ready_checks or {})}
        self._endpoints: dict[str, dict[str, Check]] = {
            "healthz": healthz or {"ping": _ping},
            "livez": {"ping": _ping},
            "readyz": readyz,
        }
        self._routes: dict[str, Callable[[Request], Reply]] = {}
        for endpoint in self._endpoints:
            self._routes[f"/{endpoint}"] = self._root_handler(endpoint)
        self._routes["/metrics"] = self._serve_metrics
        if self._resources is not None:
            self._routes["/metrics/resources"] = self._serve_resources
        if self._zpages is not None:
            self._routes["/configz"] = self._serve_configz
            self._routes["/flagz"] = self._serve_flagz
            self._routes["/statusz"] = self._serve_statusz
        self._server: HttpServer | None = None
        self.port = 0

    def _shutdown_check(self) -> bool | str:
        return "process is shutting down" if self._shutting_down else True

    def begin_shutdown(self) -> None:
        """Fail ``/readyz`` from now on (load balancers stop sending traffic)."""
        self._shutting_down = True

    def handle(self, request: Request) -> Reply:
        """The answer to one request: GET (and HEAD) of a served path, else 404."""
        if request.method in ("GET", "HEAD"):
            route = self._routes.get(request.path)
            if route is not None:
                return route(request)
            endpoint, sep, check = request.path[1:].partition("/")
            if sep and check and "/" not in check and endpoint in self._endpoints:
                return self._single(endpoint, check)
        return self._not_found()

    async def start(self, host: str, port: int, ssl: ssl_module.SSLContext | None = None) -> None:
        """Listen on host:port (0 picks a free port, then read ``.port``)."""
        self._server = HttpServer(self.handle)
        self.port = await self._server.start(host, port, ssl)

    async def stop(self) -> None:
        self.begin_shutdown()
        if self._server is not None:
            await self._server.stop()
            self._server = None

    # -- handlers ------------------------------------------------------------------
    def _root_handler(self, endpoint: str) -> Callable[[Request], Reply]:
        def handle(request: Request) -> Reply:
            return self._answer(endpoint, request)

        return handle

    def _single(self, endpoint: str, name: str) -> Reply:
        check = self._endpoints[endpoint].get(name)
        if check is None:
            return self._not_found()
        reason = _run(check)
        if reason is None:
            return _text(200, "ok")
        return _error(f"internal server error: {reason}")

    def _answer(self, endpoint: str, request: Request) -> Reply:
        excluded = set(request.query.get("exclude", []))
        lines: list[str] = []
        failed: list[str] = []
        reasons: list[str] = []
        for name, check in self._endpoints[endpoint].items():
            if name in excluded:
                excluded.discard(name)
                lines.append(f"[+]{name} excluded: ok")
                continue
            reason = _run(check)
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                lines.append(f"[-]{name} failed: reason withheld")
                reasons.append(f"[-]{name} failed: {reason}")
                failed.append(name)
        if excluded:
            quoted = ",".join(f'"{name}"' for name in sorted(excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
        report = "".join(line + "\n" for line in lines)
        if failed:
            log.info("%s check failed: %s\n%s", ",".join(failed), endpoint, "\n".join(reasons))
            return _error(f"{report}{endpoint} check failed")
        if "verbose" not in request.query:
            return _text(200, "ok")
        return _text(200, f"{report}{endpoint} check passed\n")

    def _serve_metrics(self, request: Request) -> Reply:
        """Every family; with ``name[]`` parameters only the families named (as the Prometheus
        Python client's own handler: a scraper of a few series needn't pay for all of them)."""
        names = request.query.get("name[]")
        if names:
            return Reply(200, generate_latest(self._metrics.registry.restricted_registry(names)), CONTENT_TYPE)
        return Reply(200, self._metrics.exposition(), CONTENT_TYPE)

    def _serve_resources(self, request: Request) -> Reply:
        assert self._resources is not None
        return Reply(200, self._resources(), CONTENT_TYPE)

    def _serve_configz(self, request: Request) -> Reply:
        assert self._zpages is not None
        return Reply(200, orjson.dumps({"componentconfig": self._zpages.componentconfig()}),
                     "application/json")

    def _serve_flagz(self, request: Request) -> Reply:
        assert self._zpages is not None
        return _text(200, flagz_text(self._zpages.component, self._zpages.flags))

    def _serve_statusz(self, request: Request) -> Reply:
        pages = self._zpages
        assert pages is not None
        return _text(200, statusz_text(pages.component, pages.started, time.time(), pages.binary_version,
                                       sorted(self._routes)))

    def _not_found(self) -> Reply:
        return _text(404, "404 page not found\n")


def _text(status: int, body: str) -> Reply:
    return Reply(status, body.encode(), _TEXT, (("X-Content-Type-Options", "nosniff"),))


def _error(message: str) -> Reply:
    """Go's http.Error: the message and a newline, 500, text/plain."""
    return _text(500, message + "\n")
