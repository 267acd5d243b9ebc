"""What upstream's signatures mean for a whole run: pods that differ only where upstream's
signers do not look (a host port's IP or protocol, a request written as 0) are twins and
take each other's next node as a hint; pods that differ where they look are not."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.batching import HINT_NONE, HINT_USED

from ..helpers import Cluster, framework, make_pod, node, pod

LIST_DEFAULTING = {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}


class Run:
    """Pods of 2 cpus on empty nodes of 2 cpus, one cycle after another, each bound where it goes:
    the node a pod took rejects the next one, so a twin gets the next node of the heap."""

    def __init__(self, nodes: int = 6) -> None:
        self.cluster = Cluster([node(f"n{i}", cpu="2") for i in range(nodes)])
        self.fwk = framework(self.cluster, LIST_DEFAULTING)
        self.algo = Algorithm()
        self.algo.now = self.cluster.clock.now
        self.cycle = 0

    def schedule(self, name: str, **kw: object) -> str:
        self.cycle += 1
        result = self.algo.schedule_pod(self.fwk, CycleState(), make_pod(name, cpu="2", **kw), self.cluster.snapshot,
                                        self.cycle)
        self.cluster.add_pod(pod(name, cpu="2", node_name=result.suggested_host, **kw))
        return result.suggested_host

    @property
    def hint(self) -> str:
        return self.algo.last_walk.hint


def port(number: int, **extra: str) -> dict[str, object]:
    return {"containerPort": number, "hostPort": number, **extra}


def test_pods_differing_only_in_the_host_ip_of_a_port_batch_together():
    run = Run()
    run.schedule("a", host_ports=[port(8080)])
    run.schedule("b", host_ports=[port(8080, hostIP="10.0.0.1")])
    assert run.hint == HINT_USED


def test_pods_differing_only_in_the_protocol_of_a_port_batch_together():
    run = Run()
    run.schedule("a", host_ports=[port(8080, protocol="TCP")])
    run.schedule("b", host_ports=[port(8080, protocol="UDP")])
    assert run.hint == HINT_USED


def test_pods_asking_for_other_host_ports_do_not_batch():
    run = Run()
    run.schedule("a", host_ports=[port(8080)])
    run.schedule("b", host_ports=[port(9090)])
    assert run.hint == HINT_NONE


def test_a_pod_asking_for_0_memory_batches_with_one_not_asking():
    # scoring counts 200Mi for the second, yet upstream signs the requests only
    run = Run()
    run.schedule("a", memory="0")
    run.schedule("b")
    assert run.hint == HINT_USED


def test_pods_with_other_toleration_seconds_do_not_batch():
    run = Run()
    run.schedule("a", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}])
    run.schedule("b", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}])
    assert run.hint == HINT_NONE


def test_a_hint_taken_for_a_twin_still_passes_its_filters():
    # b's port is on another IP than a's: the node a took has room for b's port, but not for
    # its cpu; the hint is the next node of a's heap, where b fits
    run = Run(nodes=3)
    first = run.schedule("a", host_ports=[port(8080)])
    second = run.schedule("b", host_ports=[port(8080, hostIP="10.0.0.1")])
    assert run.hint == HINT_USED and second != first
