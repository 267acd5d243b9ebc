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
from collections.abc import Awaitable, Callable, Mapping

import orjson
from aiohttp import web
from prometheus_client import generate_latest

from kubesched.scheduler.metrics import CONTENT_TYPE, SchedulerMetrics

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
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.port = 0

    def _shutdown_check(self) -> bool | str:
        return "process is shutting down" if self._shutting_down else True

    def begin_shutdown(self) -> None:
        """Fail ``/readyz`` from now on (load balancers stop sending traffic)."""
        self._shutting_down = True

    def app(self) -> web.Application:
        app = web.Application()
        for endpoint in self._endpoints:
            app.router.add_get(f"/{endpoint}", self._root_handler(endpoint))
            app.router.add_get(f"/{endpoint}/{{check}}", self._single_handler(endpoint))
        app.router.add_get("/metrics", self._serve_metrics)
        if self._resources is not None:
            app.router.add_get("/metrics/resources", self._serve_resources)
        if self._zpages is not None:
            app.router.add_get("/configz", self._serve_configz)
            app.router.add_get("/flagz", self._serve_flagz)
            app.router.add_get("/statusz", self._serve_statusz)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        return app

    async def start(self, host: str, port: int, ssl: ssl_module.SSLContext | None = None) -> None:
        """Listen on host:port (0 picks a free port, then read ``.port``)."""
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, host, port, ssl_context=ssl)
        await self._site.start()
        addresses = self._runner.addresses
        self.port = int(addresses[0][1]) if addresses else port

    async def stop(self) -> None:
        self.begin_shutdown()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- handlers ------------------------------------------------------------------
    def _root_handler(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            return self._answer(endpoint, request)

        return handle

    def _single_handler(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            check = self._endpoints[endpoint].get(request.match_info["check"])
            if check is None:
                return await self._not_found(request)
            reason = _run(check)
            if reason is None:
                return _text(200, "ok")
            return _error(f"internal server error: {reason}")

        return handle

    def _answer(self, endpoint: str, request: web.Request) -> web.Response:
        excluded = set(request.query.getall("exclude", []))
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

    async def _serve_metrics(self, request: web.Request) -> web.Response:
        """Every family; with ``name[]`` parameters only the families named (as the Prometheus
        Python client's own handler: a scraper of a few series needn't pay for all of them)."""
        names = request.query.getall("name[]", [])
        body = generate_latest(self._metrics.registry.restricted_registry(names)) if names \
            else self._metrics.exposition()
        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def _serve_resources(self, request: web.Request) -> web.Response:
        assert self._resources is not None
        response = web.Response(body=self._resources())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def _serve_configz(self, request: web.Request) -> web.Response:
        assert self._zpages is not None
        body = orjson.dumps({"componentconfig": self._zpages.componentconfig()})
        return web.Response(body=body, content_type="application/json")

    async def _serve_flagz(self, request: web.Request) -> web.Response:
        assert self._zpages is not None
        return _text(200, flagz_text(self._zpages.component, self._zpages.flags))

    async def _serve_statusz(self, request: web.Request) -> web.Response:
        pages = self._zpages
        assert pages is not None
        paths = sorted(r.resource.canonical for r in request.app.router.routes()
                       if r.resource is not None and "{" not in r.resource.canonical)
        return _text(200, statusz_text(pages.component, pages.started, time.time(), pages.binary_version, paths))

    async def _not_found(self, request: web.Request) -> web.Response:
        return _text(404, "404 page not found\n")


def _text(status: int, body: str) -> web.Response:
    response = web.Response(status=status, text=body)
    response.headers["Content-Type"] = _TEXT
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _error(message: str) -> web.Response:
    """Go's http.Error: the message and a newline, 500, text/plain."""
    return _text(500, message + "\n")
