"""run's pod informer: the echo of a binding made from the pending pod, unless bound pods keep their documents."""

from __future__ import annotations

from kubesched.cluster.kube.driver import LiveScheduler
from kubesched.framework.config import default_config
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import in_tree_registry
from tests.objects.test_bound_pod_of import bound_document, pending_document


def live(keep_raw: bool) -> LiveScheduler:
    registry = in_tree_registry()
    scheduler = LiveScheduler(default_config(registry), None, None, registry=registry)  # type: ignore[arg-type]
    scheduler._keep_raw = keep_raw
    return scheduler


def test_the_echo_of_a_binding_is_the_bound_pod_without_its_document() -> None:
    pending_doc = pending_document()
    pending = parse_pod(pending_doc, keep_raw=True)
    echo = live(keep_raw=False)._parse_pod_change(pending, bound_document(pending_doc))
    assert echo.node_name == "node-3" and echo.raw is None and echo.uid == pending.uid


def test_bound_pods_that_keep_their_documents_get_the_echo_s_document() -> None:
    pending_doc = pending_document()
    bound_doc = bound_document(pending_doc)
    echo = live(keep_raw=True)._parse_pod_change(parse_pod(pending_doc, keep_raw=True), bound_doc)
    assert echo.node_name == "node-3"
    assert echo.raw is not None and echo.raw["status"]["conditions"] == bound_doc["status"]["conditions"]


def test_any_other_change_is_parsed_and_its_limits_noted() -> None:
    pending_doc = pending_document()
    changed = bound_document(pending_doc)
    changed["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1"}
    scheduler = live(keep_raw=False)
    echo = scheduler._parse_pod_change(parse_pod(pending_doc, keep_raw=True), changed)
    assert echo.node_name == "node-3"
    assert echo.uid in scheduler.pod_limits
