"""A pod's effective requests, as upstream's ``resourcehelper.PodRequests`` and the
scheduler's ``calculateResource`` compute them, and the node's resource vector."""

from __future__ import annotations

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.objects.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_extended_resource,
    is_scalar_resource,
)

from ..helpers import container, node, pod

MI = 1024**2
GI = 1024**3


def requests_of(raw):
    req = parse_pod(raw).requests
    r = req.requests
    return {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral": r.ephemeral_storage, **r.scalar}


def c(cpu=None, memory=None, restart=None, **extra):
    requests = {k.replace("_", "-"): v for k, v in extra.items()}
    return container(cpu=cpu, memory=memory, requests=requests, restart_policy=restart)


@pytest.mark.parametrize(
    "containers, init, expected",
    [
        pytest.param([c("100m", "200Mi")], None, {"cpu": 100, "memory": 200 * MI}, id="one container"),
        pytest.param([c("1", "1Gi"), c("500m", "1Gi")], None, {"cpu": 1500, "memory": 2 * GI}, id="containers add up"),
        pytest.param([c()], None, {"cpu": 0, "memory": 0}, id="no requests"),
        pytest.param(
            [c("2", "1G"), c("1", "1G")],
            [c("2", "1G"), c("2", "3G")],
            {"cpu": 3000, "memory": 3 * 10**9},
            id="init containers take the max per resource",
        ),
        pytest.param([c("1")], [c("4")], {"cpu": 4000, "memory": 0}, id="a big init container dominates"),
        pytest.param(
            [c("1")],
            [c("1", restart="Always"), c("5"), c("1", restart="Always")],
            # sidecars run beside the app: 1 + 1 + 1 = 3; while init #2 runs, sidecar #1 is up: 5 + 1 = 6
            {"cpu": 6000, "memory": 0},
            id="restartable sidecars count while later init containers run",
        ),
        pytest.param(
            [c("1")],
            [c("4"), c("1", restart="Always")],
            # init #1 runs before the sidecar starts: 4; the running pod: 1 + 1 = 2
            {"cpu": 4000, "memory": 0},
            id="an init container before a sidecar does not see it",
        ),
        pytest.param(
            [c("1", "1Gi")],
            [c("500m", "2Gi", restart="Always")],
            {"cpu": 1500, "memory": 3 * GI},
            id="a sidecar adds to the app containers",
        ),
        pytest.param(
            [c(**{"nvidia.com/gpu": "2"}), c(**{"nvidia.com/gpu": "1"})],
            None,
            {"cpu": 0, "memory": 0, "nvidia.com/gpu": 3},
            id="extended resources add up",
        ),
        pytest.param([c(ephemeral_storage="1Gi")], None, {"cpu": 0, "memory": 0, "ephemeral": GI}, id="ephemeral storage"),
        pytest.param([c(**{"hugepages-2Mi": "4Mi"})], None, {"cpu": 0, "memory": 0, "hugepages-2Mi": 4 * MI}, id="hugepages"),
    ],
)
def test_effective_requests_of_containers_and_init_containers(containers, init, expected):
    got = requests_of(pod("p", containers=containers, init_containers=init))
    assert {k: v for k, v in got.items() if v or k in ("cpu", "memory")} == expected


def test_overhead_is_added_on_top_of_the_containers():
    got = requests_of(pod("p", containers=[c("1", "1Gi")], init_containers=[c("3")], overhead={"cpu": "250m", "memory": "120Mi"}))
    assert (got["cpu"], got["memory"]) == (3250, GI + 120 * MI)


def test_pod_level_requests_replace_the_container_sum_for_cpu_and_memory():
    raw = pod("p", containers=[c("1", "1Gi"), c("1", "1Gi")], pod_requests={"cpu": "3"}, overhead={"cpu": "100m"})
    got = requests_of(raw)
    assert got["cpu"] == 3100  # pod level, plus overhead
    assert got["memory"] == 2 * GI  # not set at pod level: the containers' sum


def test_pod_level_requests_replace_hugepages_too():
    raw = pod("p", containers=[c(**{"hugepages-2Mi": "2Mi"}), c(**{"hugepages-2Mi": "2Mi"})], pod_requests={"hugepages-2Mi": "8Mi"})
    assert requests_of(raw)["hugepages-2Mi"] == 8 * MI


def test_pod_level_requests_leave_extended_resources_to_the_containers():
    raw = pod("p", containers=[c("1", **{"example.com/foo": "1"})], pod_requests={"cpu": "2", "example.com/foo": "5"})
    got = requests_of(raw)
    assert (got["cpu"], got["example.com/foo"]) == (2000, 1)


# -- the non-zero defaults used for scoring -------------------------------------------
def non_zero(raw):
    req = parse_pod(raw).requests
    return req.non_zero_milli_cpu, req.non_zero_memory


@pytest.mark.parametrize(
    "raw, expected",
    [
        pytest.param(pod("p"), (100, 200 * MI), id="best effort gets 100m and 200Mi"),
        pytest.param(pod("p", cpu="250m"), (250, 200 * MI), id="memory defaulted alone"),
        pytest.param(pod("p", memory="1Gi"), (100, GI), id="cpu defaulted alone"),
        pytest.param(pod("p", cpu="0", memory="0"), (0, 0), id="an explicit zero is kept"),
        pytest.param(pod("p", containers=[c(), c("1")]), (1100, 400 * MI), id="each container lacking a request gets the default"),
        pytest.param(pod("p", containers=[c("1")], init_containers=[c()]), (1000, 200 * MI), id="init containers get defaults too"),
        pytest.param(
            pod("p", containers=[c(), c(memory="100Mi")], pod_requests={"cpu": "2"}),
            (2000, 100 * MI),  # pod-level set: only a resource missing from the pod's requests is defaulted
            id="pod-level requests: memory requested by a container is not defaulted",
        ),
        pytest.param(
            pod("p", containers=[c()], pod_requests={"cpu": "2"}),
            (2000, 200 * MI),
            id="pod-level cpu only: memory falls back to 200Mi",
        ),
    ],
)
def test_non_zero_requests_default_missing_cpu_and_memory(raw, expected):
    assert non_zero(raw) == expected


def test_scoring_requests_fill_in_defaults_per_container():
    req = parse_pod(pod("p", containers=[c(), c("1", "1Gi")])).requests
    assert (req.scoring.milli_cpu, req.scoring.memory) == (1100, GI + 200 * MI)
    assert (req.requests.milli_cpu, req.requests.memory) == (1000, GI)


def test_defaults_are_upstreams_constants():
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 200 * MI


# -- resource names ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, extended, scalar",
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("ephemeral-storage", False, False),
        ("pods", False, False),
        ("nvidia.com/gpu", True, True),
        ("example.com/foo", True, True),
        ("kubernetes.io/foo", False, True),
        ("example.kubernetes.io/foo", False, True),  # a prefixed native resource
        ("requests.example.com/foo", False, False),
        ("hugepages-1Gi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("foo", False, False),
    ],
)
def test_extended_and_scalar_resource_names(name, extended, scalar):
    assert is_extended_resource(name) is extended
    assert is_scalar_resource(name) is scalar


# -- nodes ---------------------------------------------------------------------------------
def test_node_allocatable_is_read_with_extended_resources():
    n = parse_node(node("n", cpu="3500m", memory="7Gi", pods=30, ephemeral="100Gi", extended={"nvidia.com/gpu": 4}))
    a = n.allocatable
    assert (a.milli_cpu, a.memory, a.allowed_pod_number, a.ephemeral_storage, a.scalar) == (
        3500, 7 * GI, 30, 100 * GI, {"nvidia.com/gpu": 4})


def test_node_allocatable_defaults_to_capacity_when_missing():
    raw = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2", "memory": "1Gi", "pods": "10"}}}
    a = parse_node(raw).allocatable
    assert (a.milli_cpu, a.memory, a.allowed_pod_number) == (2000, GI, 10)


def test_node_allocatable_when_present_is_not_completed_from_capacity():
    # The API server copies capacity only when allocatable is absent altogether.
    raw = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2", "pods": "10"}, "allocatable": {"cpu": "1"}}}
    a = parse_node(raw).allocatable
    assert (a.milli_cpu, a.allowed_pod_number) == (1000, 0)


def test_a_bad_node_quantity_names_its_field():
    raw = node("n")
    raw["status"]["allocatable"]["memory"] = "8 GiB"
    with pytest.raises(ObjectError) as err:
        parse_node(raw)
    assert err.value.field == "status.allocatable.memory"


def test_requests_must_be_a_map():
    raw = pod("p")
    raw["spec"]["containers"][0]["resources"] = {"requests": ["cpu"]}
    with pytest.raises(ObjectError) as err:
        parse_pod(raw)
    assert err.value.field == "spec.containers[0].resources.requests"
