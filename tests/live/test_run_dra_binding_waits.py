"""Pods waiting for their devices' binding conditions do not hold up other pods' binding.

Upstream binds each pod in its own goroutine, and PreBind's wait for binding conditions (up
to the 10-minute bindingTimeout) blocks only that goroutine. kubesched runs binding work on
a pool of threads (32 by default); a thread parked in that wait must not count toward them.
"""

from __future__ import annotations

from pathlib import Path

from tests.apiserver import APIServer
from tests.live.dra_actors import device_class, node_slice, resource_claim, with_claim
from tests.live.harness import Kubesched, events, node, node_of, pod, wait_until
from kubesched.cluster.kube.driver import LiveOptions

WAITING = 40  # more than the 32 binding workers run's default allows


def test_a_pod_binds_while_forty_pods_wait_for_binding_conditions(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1", pods=200))
    server.create(node("n2"))
    server.create(device_class())
    server.create(node_slice("n1", WAITING, binding_conditions=True))  # never attached: no driver runs
    sched = Kubesched(server, kubeconfig, options=LiveOptions()).start()
    started.append(sched)
    for i in range(WAITING):
        server.create(resource_claim(f"attach-{i}"))
        server.create(with_claim(pod(f"waits-{i}"), "gpu", claim=f"attach-{i}"))
    wait_until(lambda: sum(e.get("reason") == "BindingConditionsPending" for e in events(server)) >= WAITING,
               timeout=60, what=f"{WAITING} pods waiting in PreBind")
    server.create(node_slice("n2", 1))
    server.create(resource_claim("plain"))
    server.create(with_claim(pod("with-a-plain-device"), "gpu", claim="plain"))  # PreBind work, no wait
    server.create(pod("without-claims"))
    wait_until(lambda: node_of(server, "with-a-plain-device") == "n2" and node_of(server, "without-claims"),
               timeout=30, what="both pods bound")
    assert all(node_of(server, f"waits-{i}") is None for i in range(WAITING))
