"""HTTP scheduler extenders (upstream's extender.go and their calls in schedule_one.go), against
a real HTTP server: Filter after the plugins (failed nodes in the FitError message), node-cache
capable extenders, Prioritize (weights, x10 scaling, errors ignored), Bind instead of the Bind
plugins, managedResources, ignorable failures, the preemption call's wire format."""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster, Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import ConfigError
from kubesched.framework.extender_config import ExtenderConfig, ExtenderTLSConfig
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE
from kubesched.scheduler.extender import EXTENDER_NAME, HTTPExtender, Victims
from kubesched.scheduler.extender_client import ExtenderError
from kubesched.scheduler.explain import attempt_record
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Attempt

from ..extender_server import ExtenderServer, Reply, closed_port_url
from ..helpers import Cluster, config, make_pod, node, parse, pod

GPU = "example.com/gpu"


def ext(url: str, **fields) -> dict:
    return {"urlPrefix": url, **fields}


def simulate(nodes: list[dict], pods: list[dict], extenders: list[dict], profile: dict | None = None):
    snap = snapshot_from_objects([("test", o) for o in nodes + pods], keep_raw_objects=True)
    attempts: list[Attempt] = []
    sim = Simulation(snap, parse(config(profile, extenders=extenders)), tie_break="name", on_attempt=attempts.append)
    return sim, sim.run(), attempts


def names(body: dict) -> list[str]:
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def keep(*kept: str, failed: dict | None = None, unresolvable: dict | None = None):
    """A non-cache-capable filter keeping ``kept`` of the nodes it is sent."""
    def handler(body: dict) -> dict:
        items = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in kept]
        return {"Nodes": {"items": items}, "FailedNodes": failed or {}, "FailedAndUnresolvableNodes": unresolvable or {}}
    return handler


# -- Filter ------------------------------------------------------------------------------------------------
def test_filter_runs_after_the_plugins_and_its_failed_nodes_enter_the_fit_error():
    nodes = [node("n0", cpu="4"), node("n1", cpu="4"), node("n2", cpu="4"), node("small", cpu="1")]
    handler = keep(failed={"n0": "no gpu here", "n1": "no gpu here", "n2": "shadowed"},
                   unresolvable={"n2": "rack full"})
    with ExtenderServer({"filter": handler}) as server:
        sim, result, attempts = simulate(nodes, [pod("p", cpu="2")], [ext(server.url, filterVerb="filter")])
    outcome = result.outcomes["default/p"]
    assert outcome.node is None
    # the plugins rejected "small"; the extender saw the three others, and n2's unresolvable status wins;
    # preemption skips the unresolvable nodes ("small" cannot hold 2 cpu even empty) and finds no victim on n0, n1
    assert outcome.message == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 rack full, 2 no gpu here. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert sim.cluster.conditions["default/p"][0] == "Unschedulable"
    (body,) = server.bodies("filter")
    assert names(body) == ["n0", "n1", "n2"]
    assert body["NodeNames"] is None
    assert body["Pod"]["metadata"]["name"] == "p" and body["Pod"]["spec"]["containers"][0]["resources"]
    assert body["Nodes"]["items"][0]["status"]["allocatable"]["cpu"] == "4"  # the whole node document
    assert server.headers[0]["Content-Type"] == "application/json"
    record = attempt_record(attempts[0], sim.scheduler.cache.table.order.tolist())
    assert record["filtered"]["n0"] == {"plugin": "", "code": "Unschedulable", "reasons": ["no gpu here"]}
    assert record["filtered"]["n2"] == {"plugin": "", "code": "UnschedulableAndUnresolvable", "reasons": ["rack full"]}
    assert record["filtered"]["small"]["plugin"] == "NodeResourcesFit"
    queued = sim.scheduler.queue.pending_pods()
    infos = [i for group in queued.values() for i in group]
    assert EXTENDER_NAME in infos[0].unschedulable_plugins


def test_a_pod_extenders_rejected_is_retried_on_any_cluster_event():
    with ExtenderServer({"filter": keep()}) as server:
        sched, client, p = scheduler([ext(server.url, filterVerb="filter")])
        sched.schedule_one()
    # no failure messages; nodes without a status are unresolvable, so preemption does not try them
    assert client.conditions[p.key] == (
        "Unschedulable", "0/2 nodes are available: no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert sched.queue.where(p.uid) == UNSCHEDULABLE
    sched.on_node_update(None, parse_node(node("n0", labels={"any": "change"})))
    assert sched.queue.where(p.uid) in (ACTIVE, BACKOFF)


def test_a_node_the_extender_keeps_gets_the_pod():
    nodes = [node(f"n{i}") for i in range(3)]
    with ExtenderServer({"filter": keep("n2", failed={"n0": "nope", "n1": "nope"})}) as server:
        _, result, attempts = simulate(nodes, [pod("p")], [ext(server.url, filterVerb="filter")])
    assert result.placements == [("default/p", "n2")]
    assert attempts[0].result is not None and attempts[0].result.evaluated_nodes == 3


def test_a_node_cache_capable_extender_is_sent_and_answers_node_names():
    nodes = [node(f"n{i}") for i in range(3)]
    with ExtenderServer({"filter": lambda body: {"NodeNames": ["n1"], "FailedNodes": {"n0": "x", "n2": "x"}}}) as server:
        _, result, _ = simulate(nodes, [pod("p")], [ext(server.url, filterVerb="filter", nodeCacheCapable=True)])
    assert result.placements == [("default/p", "n1")]
    (body,) = server.bodies("filter")
    assert body["NodeNames"] == ["n0", "n1", "n2"] and body["Nodes"] is None


def test_answers_are_read_as_go_reads_them_case_insensitively():
    nodes = [node(f"n{i}") for i in range(3)]
    answer = {"nodenames": ["n0"], "failedNodes": {"n1": "a", "n2": "a"}, "unknownField": 1}
    with ExtenderServer({"filter": lambda body: answer}) as server:
        _, result, _ = simulate(nodes, [pod("p")], [ext(server.url, filterVerb="filter", nodeCacheCapable=True)])
    assert result.placements == [("default/p", "n0")]


def test_an_extender_claiming_a_node_it_was_not_sent_fails_the_attempt():
    nodes = [node("n0"), node("n1")]
    with ExtenderServer({"filter": lambda body: {"NodeNames": ["elsewhere"]}}) as server:
        sim, result, _ = simulate(nodes, [pod("p")], [ext(server.url, filterVerb="filter", nodeCacheCapable=True)])
    assert result.outcomes["default/p"].node is None
    assert sim.cluster.conditions["default/p"] == (
        "SchedulerError", f'extender "{server.url}" claims a filtered node "elsewhere" which is not found in the input node list')


def test_an_error_in_the_filter_result_fails_the_attempt():
    with ExtenderServer({"filter": lambda body: {"Error": "extender is confused"}}) as server:
        sim, _, _ = simulate([node("n0")], [pod("p")], [ext(server.url, filterVerb="filter")])
    assert sim.cluster.conditions["default/p"] == ("SchedulerError", "extender is confused")


# -- failures: ignorable or not ------------------------------------------------------------------------------
FAILURES = {
    "connection refused": None,
    "500": lambda body: Reply(status=500),
    "timeout": lambda body: Reply(keep("n0")(body), delay=1.0),
    "not JSON": lambda body: Reply(raw=b"<html>"),
}


@pytest.mark.parametrize("failure", list(FAILURES))
def test_an_ignorable_extender_that_fails_is_skipped(failure):
    nodes = [node("n0"), node("n1")]
    with ExtenderServer({"filter": FAILURES[failure]} if FAILURES[failure] else {}) as server:
        url = closed_port_url() if failure == "connection refused" else server.url
        extender = ext(url, filterVerb="filter", ignorable=True, httpTimeout="0.2s")
        _, result, _ = simulate(nodes, [pod("p")], [extender])
    assert result.placements == [("default/p", "n0")]


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_non_ignorable_extender_that_fails_fails_the_attempt_and_the_pod_backs_off(failure):
    with ExtenderServer({"filter": FAILURES[failure]} if FAILURES[failure] else {}) as server:
        url = closed_port_url() if failure == "connection refused" else server.url
        sched, client, p = scheduler([ext(url, filterVerb="filter", httpTimeout="0.2s")])
        sched.schedule_one()
    reason, message = client.conditions[p.key]
    assert reason == "SchedulerError"
    expected = {
        "connection refused": f'Post "{url}/filter": ',
        "500": f"failed filter with extender at URL {url}/filter, code 500",
        "timeout": f'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
        "not JSON": f"decoding the filter response of {url}/filter: ",
    }[failure]
    assert message.startswith(expected)
    assert sched.queue.where(p.uid) == BACKOFF
    assert not client.bindings


def test_an_ignorable_extender_goes_after_the_others():
    calls: list[str] = []

    def record(name):
        def handler(body):
            calls.append(name)
            return {"Nodes": body["Nodes"]}
        return handler

    with ExtenderServer({"a": record("a"), "b": record("b")}) as server:
        simulate([node("n0")], [pod("p")], [ext(server.url, filterVerb="a", ignorable=True), ext(server.url, filterVerb="b")])
    assert calls == ["b", "a"]


# -- Prioritize ----------------------------------------------------------------------------------------------
def scores_of(priorities: dict[str, int]):
    return lambda body: [{"Host": h, "Score": s} for h, s in priorities.items()]


def test_extender_scores_times_weight_times_ten_are_added_to_the_plugin_totals():
    nodes = [node(f"n{i}") for i in range(3)]  # identical: the plugins score them alike
    handlers = {"a": scores_of({"n1": 5, "n2": 3, "unknown": 10}), "b": scores_of({"n2": 1})}
    with ExtenderServer(handlers) as server:
        a, b = server.url, server.url + "/"  # two names; the trailing slash is trimmed from the URL, as upstream
        extenders = [ext(a, prioritizeVerb="a", weight=1), ext(b, prioritizeVerb="b", weight=2)]
        _, result, attempts = simulate(nodes, [pod("p")], extenders)
    scores = attempts[0].result.scores
    assert scores.by_plugin[a].tolist() == [0, 50, 30]  # score * weight * 10; "unknown" dropped
    assert scores.by_plugin[b].tolist() == [0, 0, 20]
    plugins = scores.total - scores.by_plugin[a] - scores.by_plugin[b]
    assert len(set(plugins.tolist())) == 1
    assert (scores.total - plugins).tolist() == [0, 50, 50]
    assert result.placements == [("default/p", "n1")]  # n1 and n2 tie; by name


def test_the_weight_changes_the_chosen_node():
    nodes = [node(f"n{i}") for i in range(3)]
    handlers = {"a": scores_of({"n1": 5}), "b": scores_of({"n2": 3})}
    with ExtenderServer(handlers) as server:
        extenders = [ext(server.url, prioritizeVerb="a", weight=1), ext(server.url + "/", prioritizeVerb="b", weight=2)]
        _, result, attempts = simulate(nodes, [pod("p")], extenders)
    assert attempts[0].result.scores.by_plugin[server.url].tolist() == [0, 50, 0]
    assert attempts[0].result.scores.by_plugin[server.url + "/"].tolist() == [0, 0, 60]
    assert result.placements == [("default/p", "n2")]


def test_a_prioritize_error_gives_no_score_and_does_not_fail_the_attempt():
    nodes = [node(f"n{i}") for i in range(3)]
    with ExtenderServer({"bad": lambda body: Reply(status=500), "good": scores_of({"n2": 1})}) as server:
        extenders = [ext(server.url, prioritizeVerb="bad", weight=5), ext(server.url + "/", prioritizeVerb="good", weight=1)]
        _, result, _ = simulate(nodes, [pod("p")], extenders)
    assert result.placements == [("default/p", "n2")]
    assert server.verbs() == ["bad", "good"]


def test_a_single_feasible_node_is_chosen_without_asking_the_prioritizers():
    with ExtenderServer({"prioritize": scores_of({})}) as server:
        _, result, _ = simulate([node("n0")], [pod("p")], [ext(server.url, prioritizeVerb="prioritize", weight=1)])
    assert result.placements == [("default/p", "n0")]
    assert server.requests == []


# -- Bind ----------------------------------------------------------------------------------------------------
def scheduler(extenders: list[dict], nodes: int = 2, **pod_fields):
    clock = VirtualClock()
    client = SimulatedCluster(clock)
    sched = new_scheduler(parse(config(extenders=extenders)), client, clock, tie_break="name")
    for i in range(nodes):
        sched.on_node_add(parse_node(node(f"n{i}"), keep_raw=True))
    p = parse_pod(pod("p", **pod_fields))
    sched.on_pod_add(p)
    return sched, client, p


def test_the_binder_extender_binds_instead_of_the_bind_plugins():
    with ExtenderServer({"bind": lambda body: {}}) as server:
        snap_nodes = [node("n0"), node("n1")]
        snap = snapshot_from_objects([("t", o) for o in snap_nodes + [pod("p", uid="uid-p")]], keep_raw_objects=True)
        sim = Simulation(snap, parse(config(extenders=[ext(server.url, bindVerb="bind")])), tie_break="name")

        def refuse(p, n):
            raise AssertionError("DefaultBinder must not bind")
        sim.cluster.bind_hook = refuse
        result = sim.run()
    assert server.bodies("bind") == [{"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "n0"}]
    assert result.placements == [("default/p", "n0")]
    assert result.outcomes["default/p"].node == "n0"
    assert sim.cluster.events[-1][2:] == ("Scheduled", "Successfully assigned default/p to n0")


def test_a_failed_extender_binding_sends_the_pod_back_to_the_queue():
    with ExtenderServer({"bind": lambda body: {"Error": "the API server said no"}}) as server:
        sched, client, p = scheduler([ext(server.url, bindVerb="bind")])
        sched.schedule_one()
    assert client.conditions[p.key] == ("SchedulerError", "the API server said no")
    assert sched.queue.where(p.uid) == BACKOFF
    assert not sched.cache.is_assumed(p) and sched.cache.get_pod(p.uid) is None
    assert not client.bindings


def test_an_ignorable_binder_that_fails_leaves_the_binding_to_the_bind_plugins():
    with ExtenderServer({"bind": lambda body: Reply(status=503)}) as server:
        sched, client, p = scheduler([ext(server.url, bindVerb="bind", ignorable=True)])
        sched.schedule_one()
    assert server.verbs() == ["bind"]
    assert [(b.key, n) for b, n in client.bindings] == [(p.key, "n0")]


# -- managedResources ----------------------------------------------------------------------------------------
def test_an_extender_is_asked_only_about_pods_requesting_a_resource_it_manages():
    nodes = [node("n0", extended={GPU: 2}), node("n1", extended={GPU: 2})]
    pods = [pod("plain", created="2024-01-01T00:00:00Z"),
            pod("gpu", requests={GPU: "1"}, created="2024-01-01T00:00:01Z")]
    managed = [{"name": GPU}]
    with ExtenderServer({"filter": keep("n1"), "bind": lambda body: {}}) as server:
        _, result, _ = simulate(nodes, pods, [ext(server.url, filterVerb="filter", bindVerb="bind", managedResources=managed)])
    assert [b["Pod"]["metadata"]["name"] for b in server.bodies("filter")] == ["gpu"]
    assert [b["PodName"] for b in server.bodies("bind")] == ["gpu"]
    assert dict(result.placements) == {"default/plain": "n0", "default/gpu": "n1"}


def test_a_limit_or_an_init_container_makes_the_pod_interesting():
    assert HTTPExtender(ExtenderConfig("http://x")).is_interested(make_pod("p"))  # manages nothing: every pod
    extender = HTTPExtender(parse(config(extenders=[ext("http://x", managedResources=[{"name": GPU}])])).extenders[0])
    limits = {"name": "c", "image": "i", "resources": {"limits": {GPU: "1"}}}
    assert extender.is_interested(parse_pod(pod("a", containers=[limits])))
    assert extender.is_interested(parse_pod(pod("b", init_containers=[limits])))
    assert not extender.is_interested(make_pod("c", cpu="1"))
    assert extender.is_interested(make_pod("d", requests={GPU: "1"}).copy_with(raw=None))  # compacted


def test_resources_ignored_by_the_scheduler_are_not_checked_by_node_resources_fit():
    nodes = [node("n0")]  # no GPU at all
    managed = [{"name": GPU, "ignoredByScheduler": True}]
    with ExtenderServer({"filter": lambda body: {"Nodes": body["Nodes"]}}) as server:
        _, result, _ = simulate(nodes, [pod("p", requests={GPU: "1"})], [ext(server.url, filterVerb="filter", managedResources=managed)])
    assert result.placements == [("default/p", "n0")]
    _, result, _ = simulate(nodes, [pod("p", requests={GPU: "1"})], [])
    assert result.outcomes["default/p"].message == (
        f"0/1 nodes are available: 1 Insufficient {GPU}. no new claims to deallocate, preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.")  # it asks for more than the node has


def test_ignored_resources_need_node_resources_fit_in_every_profile():
    profile = {"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}
    cfg = parse(config(profile, extenders=[ext("http://x", managedResources=[{"name": GPU, "ignoredByScheduler": True}])]))
    with pytest.raises(ConfigError) as err:
        new_scheduler(cfg, SimulatedCluster(VirtualClock()), VirtualClock())
    assert err.value.problems == [("profiles[0].pluginConfig", "can't find NodeResourcesFitArgs in plugin config")]


# -- preemption (the client call; the PostFilter is not implemented yet) ------------------------------------
def test_process_preemption_sends_victims_and_finds_the_extenders_victims_on_their_nodes():
    cluster = Cluster([node("n0"), node("n1")], [pod("v0", node_name="n0", uid="u0"), pod("v1", node_name="n1", uid="u1")])
    snapshot = cluster.snapshot
    victims = {"n0": Victims([snapshot.get("n0").pods["u0"]], 1), "n1": Victims([snapshot.get("n1").pods["u1"]])}
    answer = {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0}}}
    preemptor = make_pod("p", priority=10)
    with ExtenderServer({"preempt": lambda body: answer}) as server:
        full = HTTPExtender(ExtenderConfig(server.url, preempt_verb="preempt"))
        kept = full.process_preemption(preemptor, victims, snapshot)
        cached = HTTPExtender(ExtenderConfig(server.url, preempt_verb="preempt", node_cache_capable=True))
        cached.process_preemption(preemptor, victims, snapshot)
        bad = {"NodeNameToMetaVictims": {"n0": {"Pods": [{"UID": "u1"}]}}}
        server.handlers["preempt"] = lambda body: bad
        with pytest.raises(ExtenderError, match=r"claims to preempt pod \(UID: &\{u1\}\) on node: n0"):
            full.process_preemption(preemptor, victims, snapshot)
    assert list(kept) == ["n1"] and [p.uid for p in kept["n1"].pods] == ["u1"]
    first, second, _ = server.bodies("preempt")
    assert first["Pod"]["metadata"]["name"] == "p" and first["NodeNameToMetaVictims"] is None
    assert first["NodeNameToVictims"]["n0"]["NumPDBViolations"] == 1
    assert first["NodeNameToVictims"]["n0"]["Pods"][0]["metadata"]["uid"] == "u0"
    assert second["NodeNameToVictims"] is None
    assert second["NodeNameToMetaVictims"] == {"n0": {"Pods": [{"UID": "u0"}], "NumPDBViolations": 1},
                                               "n1": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0}}
    with pytest.raises(ExtenderError, match="preempt verb is not defined"):
        HTTPExtender(ExtenderConfig(server.url)).process_preemption(preemptor, victims, snapshot)


# -- TLS -----------------------------------------------------------------------------------------------------
def test_insecure_with_a_ca_is_refused_when_the_scheduler_is_built():
    tls = {"insecure": True, "caData": base64.b64encode(b"not a cert").decode()}
    cfg = parse(config(extenders=[ext("https://x", tlsConfig=tls)]))
    with pytest.raises(ConfigError) as err:
        new_scheduler(cfg, SimulatedCluster(VirtualClock()), VirtualClock())
    assert err.value.problems == [("extenders[0].tlsConfig",
                                   "specifying a root certificates file with the insecure flag is not allowed")]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=extender.test",
                    "-addext", "subjectAltName=DNS:extender.test", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def tls_server(certificate) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*certificate)
    return ctx


def test_https_with_the_servers_ca_and_server_name(certificate):
    ca = base64.b64encode(certificate[0].read_bytes()).decode()
    with ExtenderServer({"filter": keep("n1")}, tls=tls_server(certificate)) as server:
        verified = ext(server.url, filterVerb="filter", tlsConfig={"caData": ca, "serverName": "extender.test"})
        _, result, _ = simulate([node("n0"), node("n1")], [pod("p")], [verified])
        assert result.placements == [("default/p", "n1")]
        wrong_name = ext(server.url, filterVerb="filter", tlsConfig={"caData": ca, "serverName": "other.test"})
        sim, result, _ = simulate([node("n0"), node("n1")], [pod("p")], [wrong_name])
        assert sim.cluster.conditions["default/p"][0] == "SchedulerError"
        assert "certificate" in sim.cluster.conditions["default/p"][1].lower()


def test_enable_https_without_a_ca_skips_verification(certificate):
    with ExtenderServer({"filter": keep("n1")}, tls=tls_server(certificate)) as server:
        _, result, _ = simulate([node("n0"), node("n1")], [pod("p")], [ext(server.url, filterVerb="filter", enableHTTPS=True)])
    assert result.placements == [("default/p", "n1")]


def test_client_certificates_load_from_data():
    extender = HTTPExtender(ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(insecure=True)))
    assert extender.name == "https://x"
    with pytest.raises(ExtenderError, match="TLS configuration"):
        HTTPExtender(ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(cert_data=b"junk", key_data=b"junk")))



# -- the command line ----------------------------------------------------------------------------------------
def test_kubesched_simulate_sends_whole_nodes_to_the_extenders(tmp_path):
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                        "items": [node("n0"), node("n1", labels={"disk": "ssd"}), pod("p")]}))
    with ExtenderServer({"filter": keep("n1")}) as server:
        cfg = tmp_path / "config.yaml"
        cfg.write_text(yaml.safe_dump(config(extenders=[ext(server.url, filterVerb="filter")])))
        out = tmp_path / "placements.json"
        result = CliRunner().invoke(cli, ["simulate", str(snapshot), "--config", str(cfg), "--output", str(out)],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "n1" in out.read_text()
    (body,) = server.bodies("filter")
    assert body["Nodes"]["items"][1]["metadata"]["labels"]["disk"] == "ssd"
    assert body["Nodes"]["items"][1]["status"]["allocatable"]["cpu"] == "4"
