"""Property: every plugin that has both forms gives the same answers over the node table
(``filter_nodes`` / ``score_nodes``) as node by node (``filter`` / ``score``), on random clusters,
including clusters whose node table reused the rows of removed nodes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.objects.node import parse_node
from kubesched.plugins import nodeaffinity, nodename, nodeports, nodeunschedulable, tainttoleration
from kubesched.plugins.noderesources import fit

from ..helpers import Cluster, batch_filter, container, expr, node, node_filter, pod, run_pre_filter, summarise

ZONES = ["a", "b", "c"]
KEYS = ["zone", "disk", "cores", "gpu"]
TAINTS = [
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "slow", "value": "yes", "effect": "PreferNoSchedule"},
]
PORTS = [80, 443, 8080]

labels = st.fixed_dictionaries(
    {},
    optional={
        "zone": st.sampled_from(ZONES),
        "disk": st.sampled_from(["ssd", "hdd"]),
        "cores": st.sampled_from(["2", "8", "32", "x"]),
        "gpu": st.just("true"),
    },
)

node_specs = st.fixed_dictionaries(
    {
        "labels": labels,
        "taints": st.lists(st.sampled_from(TAINTS), max_size=3, unique_by=lambda t: t["key"]),
        "unschedulable": st.booleans(),
        "cpu": st.sampled_from(["1", "2", "4"]),
        "memory": st.sampled_from(["1Gi", "4Gi"]),
        "pods": st.integers(0, 4),
        "gpus": st.sampled_from([None, 1, 2]),
    }
)

port_specs = st.lists(
    st.fixed_dictionaries(
        {"hostPort": st.sampled_from(PORTS), "protocol": st.sampled_from(["TCP", "UDP"]), "hostIP": st.sampled_from(["", "127.0.0.1", "10.0.0.1"])}
    ),
    max_size=2,
)

requirement = st.one_of(
    st.builds(lambda k, v: expr(k, "In", v), st.sampled_from(KEYS), st.sampled_from(ZONES + ["ssd", "hdd", "8", "true"])),
    st.builds(lambda k, v: expr(k, "NotIn", v), st.sampled_from(KEYS), st.sampled_from(ZONES + ["ssd", "8"])),
    st.builds(lambda k: expr(k, "Exists"), st.sampled_from(KEYS)),
    st.builds(lambda k: expr(k, "DoesNotExist"), st.sampled_from(KEYS)),
    st.builds(lambda op, v: expr("cores", op, v), st.sampled_from(["Gt", "Lt"]), st.sampled_from(["1", "4", "16"])),
)
name_field = st.builds(lambda op, n: expr("metadata.name", op, f"n{n}"), st.sampled_from(["In", "NotIn"]), st.integers(0, 6))
term = st.builds(
    lambda exprs, fields: {k: v for k, v in (("matchExpressions", exprs), ("matchFields", fields)) if v},
    st.lists(requirement, max_size=2),
    st.lists(name_field, max_size=1),
)

toleration = st.one_of(
    st.just({"operator": "Exists"}),
    st.builds(lambda t: {"key": t["key"], "operator": "Exists"}, st.sampled_from(TAINTS)),
    st.builds(lambda t: {"key": t["key"], "value": t["value"], "effect": t["effect"]}, st.sampled_from(TAINTS)),
    st.builds(lambda t: {"key": t["key"], "value": "other"}, st.sampled_from(TAINTS)),
    st.just({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}),
)

pod_specs = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from([None, "0", "500m", "1", "3"]),
        "memory": st.sampled_from([None, "512Mi", "2Gi", "8Gi"]),
        "gpus": st.sampled_from([None, "1", "2"]),
        "ports": port_specs,
        "tolerations": st.lists(toleration, max_size=3),
        "node_selector": st.one_of(st.none(), st.fixed_dictionaries({"zone": st.sampled_from(ZONES)})),
        "required": st.one_of(st.none(), st.lists(term, min_size=1, max_size=3)),
        "preferred": st.lists(st.tuples(st.integers(1, 100), term), max_size=3),
        "node_name": st.one_of(st.none(), st.builds(lambda i: f"n{i}", st.integers(0, 6))),
    }
)

clusters = st.fixed_dictionaries(
    {
        "nodes": st.lists(node_specs, min_size=1, max_size=7),
        "bound": st.lists(
            st.tuples(st.integers(0, 6), st.sampled_from(["0", "500m", "1"]), port_specs, st.sampled_from([None, "1"])),
            max_size=8,
        ),
        "removed": st.lists(st.integers(0, 6), max_size=3, unique=True),
        "readd": st.booleans(),
    }
)


def raw_node(i, spec):
    extended = {"nvidia.com/gpu": spec["gpus"]} if spec["gpus"] else None
    return node(
        f"n{i}", cpu=spec["cpu"], memory=spec["memory"], pods=spec["pods"], labels=spec["labels"],
        taints=spec["taints"], unschedulable=spec["unschedulable"], extended=extended,
    )


def build(c) -> Cluster:
    cluster = Cluster()
    raws = [raw_node(i, spec) for i, spec in enumerate(c["nodes"])]
    for raw in raws:
        cluster.add_node(raw)
    for j, (idx, cpu, ports, gpu) in enumerate(c["bound"]):
        if idx < len(raws):
            requests = {"nvidia.com/gpu": gpu} if gpu else None
            cont = container(cpu=cpu, requests=requests, ports=[{"containerPort": p["hostPort"], **p} for p in ports])
            cluster.add_pod(pod(f"b{j}", containers=[cont], node_name=f"n{idx}"))
    # Remove some nodes and add them back (in a new order, with no pods), so rows get reused.
    gone = [i for i in c["removed"] if i < len(raws)]
    for i in gone:
        cluster.cache.remove_node(f"n{i}")
    if c["readd"]:
        for i in reversed(gone):
            cluster.cache.add_node(parse_node(raws[i]))
    return cluster


def build_pod(p):
    requests = {"nvidia.com/gpu": p["gpus"]} if p["gpus"] else None
    cont = container(cpu=p["cpu"], memory=p["memory"], requests=requests,
                     ports=[{"containerPort": x["hostPort"], **x} for x in p["ports"]])
    affinity = {}
    if p["required"] is not None:
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": p["required"]}
    if p["preferred"]:
        affinity.setdefault("nodeAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": t} for w, t in p["preferred"]
        ]
    from kubesched.objects.pod import parse_pod

    return parse_pod(pod("incoming", containers=[cont], tolerations=p["tolerations"], node_selector=p["node_selector"],
                         affinity=affinity or None, node_name=p["node_name"]))


ADDED = nodeaffinity.parse_args(
    {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr("disk", "NotIn", "hdd")]}]},
                       "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 7, "preference": {"matchExpressions": [expr("zone", "In", "a")]}}]}}
)

FILTERS = [
    nodeunschedulable.new(None, None),
    nodename.new(None, None),
    nodeports.new(None, None),
    tainttoleration.new(None, None),
    nodeaffinity.new(nodeaffinity.parse_args(None), None),
    nodeaffinity.new(ADDED, None),
    fit.new(fit.parse_args(None), None),
    fit.new(fit.parse_args({"ignoredResourceGroups": ["nvidia.com"]}), None),
]
SCORERS = [tainttoleration.new(None, None), nodeaffinity.new(nodeaffinity.parse_args(None), None), nodeaffinity.new(ADDED, None)]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(clusters, pod_specs)
def test_batch_and_per_node_filters_agree(c, p):
    cluster = build(c)
    incoming = build_pod(p)
    for plugin in FILTERS:
        state = CycleState()
        run_pre_filter(plugin, state, incoming, cluster)
        assert summarise(batch_filter(plugin, state, incoming, cluster)) == summarise(
            node_filter(plugin, state, incoming, cluster)
        ), plugin.name


@SETTINGS
@given(clusters, pod_specs)
def test_batch_and_per_node_scores_agree(c, p):
    cluster = build(c)
    incoming = build_pod(p)
    names = cluster.names()
    rows = cluster.rows(names)
    for plugin in SCORERS:
        state = CycleState()
        plugin.pre_score(state, incoming, cluster.snapshot, rows)
        batch = [int(x) for x in plugin.score_nodes(state, incoming, cluster.snapshot, rows)]
        single = [plugin.score(state, incoming, cluster.info(n)) for n in names]
        assert batch == single, plugin.name
