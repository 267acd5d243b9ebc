"""NodePorts: the host ports a pod asks for must be free on the node."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.plugins import nodeports

from ..helpers import Cluster, container, filter_all, make_pod, node, pod, summarise

REJECTED = ("Unschedulable", ("node(s) didn't have free ports for the requested pod ports",))


def port(number, protocol=None, ip=None):
    out = {"containerPort": number, "hostPort": number}
    if protocol:
        out["protocol"] = protocol
    if ip:
        out["hostIP"] = ip
    return out


@pytest.mark.parametrize(
    "used, wanted, fits",
    [
        pytest.param([], [port(8080)], True, id="nothing running"),
        pytest.param([port(8080)], [port(8081)], True, id="other port"),
        pytest.param([port(8080)], [port(8080)], False, id="same port"),
        pytest.param([port(8080, "TCP")], [port(8080)], False, id="TCP is the default protocol"),
        pytest.param([port(8080, "UDP")], [port(8080, "TCP")], True, id="same port, other protocol"),
        pytest.param([port(8080, "SCTP")], [port(8080, "SCTP")], False, id="same SCTP port"),
        pytest.param([port(8080, ip="127.0.0.1")], [port(8080, ip="127.0.0.2")], True, id="same port, other host IPs"),
        pytest.param([port(8080, ip="127.0.0.1")], [port(8080, ip="127.0.0.1")], False, id="same port and host IP"),
        pytest.param([port(8080, ip="127.0.0.1")], [port(8080)], False, id="wanting 0.0.0.0 conflicts with any IP"),
        pytest.param([port(8080)], [port(8080, ip="127.0.0.1")], False, id="0.0.0.0 in use conflicts with any IP"),
        pytest.param([port(8080, ip="0.0.0.0")], [port(8080, ip="10.0.0.1")], False, id="explicit 0.0.0.0 in use"),
        pytest.param([port(8080, "UDP", "127.0.0.1")], [port(8080, "TCP", "0.0.0.0")], True, id="0.0.0.0 of another protocol"),
        pytest.param([port(80), port(443)], [port(8080), port(443)], False, id="one of several ports taken"),
    ],
)
def test_host_port_conflicts(used, wanted, fits):
    existing = pod("existing", containers=[container(ports=used)], node_name="n1")
    cluster = Cluster([node("n1")], [existing])
    got = filter_all(nodeports.new(None, None), make_pod("p", containers=[container(ports=wanted)]), cluster)
    assert summarise(got) == {"n1": None if fits else REJECTED}


def test_a_deleted_pod_frees_its_ports():
    existing = pod("existing", host_ports=[8080], node_name="n1")
    cluster = Cluster([node("n1")], [existing])
    cluster.cache.remove_pod(cluster.cache.get_pod(existing["metadata"]["uid"]))
    got = filter_all(nodeports.new(None, None), make_pod("p", host_ports=[8080]), cluster)
    assert summarise(got) == {"n1": None}


def test_ports_of_restartable_init_containers_count_and_plain_init_containers_do_not():
    sidecar = container("side", ports=[port(9000)], restart_policy="Always")
    init = container("init", ports=[port(9001)])
    existing = pod("existing", init_containers=[sidecar, init], node_name="n1")
    cluster = Cluster([node("n1")], [existing])
    plugin = nodeports.new(None, None)
    assert summarise(filter_all(plugin, make_pod("a", host_ports=[9000]), cluster)) == {"n1": REJECTED}
    assert summarise(filter_all(plugin, make_pod("b", host_ports=[9001]), cluster)) == {"n1": None}


def test_only_the_nodes_using_the_port_are_rejected():
    cluster = Cluster([node("n1"), node("n2"), node("n3")], [pod("x", host_ports=[80], node_name="n2")])
    got = filter_all(nodeports.new(None, None), make_pod("p", host_ports=[80]), cluster)
    assert summarise(got) == {"n1": None, "n2": REJECTED, "n3": None}


def test_prefilter_skips_a_pod_without_host_ports():
    cluster = Cluster([node("n1")])
    result, status = nodeports.new(None, None).pre_filter(CycleState(), make_pod("p"), cluster.snapshot)
    assert result is None and status is not None and status.is_skip()


def test_container_ports_without_a_host_port_are_ignored():
    only_container_port = container(ports=[{"containerPort": 80}])
    cluster = Cluster([node("n1")], [pod("x", containers=[only_container_port], node_name="n1")])
    got = filter_all(nodeports.new(None, None), make_pod("p", containers=[only_container_port]), cluster)
    assert summarise(got) == {"n1": None}
