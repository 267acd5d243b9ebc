"""The deployment kubesched ships (deploy/, Dockerfile): manifests a cluster accepts,
RBAC no wider than kube-scheduler's, a configuration kubesched itself accepts, probes
that reach the endpoints the arguments configure, and a locked-down non-root image.

Both variants are checked alike: ``kubesched`` replaces kube-scheduler (profile
default-scheduler, kube-scheduler's Lease), ``second-scheduler`` runs beside it (its
own profile and Lease)."""

from __future__ import annotations

import importlib
import itertools
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import httpx
import kubernetes.client
import pytest
import yaml

from kubesched.cluster.kube.pod_group_status import pod_group_status_path
from kubesched.cluster.kube.pod_groups import POD_GROUPS
from kubesched.framework.config import SchedulerConfig, parse_config
from kubesched.plugins.registry import in_tree_registry

from ..apiserver.server import APIServer

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VARIANTS = ("kubesched", "second-scheduler")
UPSTREAM_SCHEDULER = "default-scheduler"
UPSTREAM_LEASE = ("kube-system", "kube-scheduler")
RBAC = "rbac.authorization.k8s.io/v1"
KINDS = {
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("policy/v1", "PodDisruptionBudget"),
    (RBAC, "ClusterRoleBinding"),
    (RBAC, "RoleBinding"),
    (RBAC, "Role"),
    (RBAC, "ClusterRole"),
}
NAMESPACED = {"ServiceAccount", "ConfigMap", "Deployment", "PodDisruptionBudget", "RoleBinding", "Role"}
CLI_DEFAULTS = {"--port": "10251", "--bind-address": "0.0.0.0"}  # `kubesched run` defaults


# -- upstream's bootstrap roles ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Rule:
    groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    names: tuple[str, ...] = ()  # resourceNames; empty grants every name

    def allows(self, group: str, resource: str, verb: str, name: str | None) -> bool:
        """As RBAC authorizes: a rule with resourceNames never covers an unnamed request."""
        if group not in self.groups or resource not in self.resources or verb not in self.verbs:
            return False
        return not self.names or (name is not None and name in self.names)


READ = ("get", "list", "watch")
READ_UPDATE = ("get", "list", "watch", "update", "patch")

# What system:kube-scheduler gains with GenericWorkload (policy.go): PodGroups to read, their
# status to write. No Workloads.
GENERIC_WORKLOAD_RULES = (
    Rule(("scheduling.k8s.io",), ("podgroups",), READ),
    Rule(("scheduling.k8s.io",), ("podgroups/status",), ("patch", "update")),
)

# system:kube-scheduler and system:volume-scheduler as upstream's policy.go builds them
# (kubeSchedulerRules and the volume-scheduler role; feature-gated rules of released
# versions included), read from plugin/pkg/auth/authorizer/rbac/bootstrappolicy.
BOOTSTRAP_CLUSTER_ROLES: dict[str, tuple[Rule, ...]] = {
    "system:kube-scheduler": (
        Rule(("", "events.k8s.io"), ("events",), ("create", "patch", "update")),
        Rule(("coordination.k8s.io",), ("leases",), ("create",)),
        Rule(("coordination.k8s.io",), ("leases",), ("get", "update"), ("kube-scheduler",)),
        Rule(("",), ("nodes",), READ),
        Rule(("",), ("pods",), ("get", "list", "watch", "delete")),
        Rule(("",), ("bindings", "pods/binding"), ("create",)),
        Rule(("",), ("pods/status",), ("patch", "update")),
        Rule(("",), ("replicationcontrollers", "services"), READ),
        Rule(("apps", "extensions"), ("replicasets",), READ),
        Rule(("apps",), ("statefulsets",), READ),
        Rule(("policy",), ("poddisruptionbudgets",), READ),
        Rule(("",), ("persistentvolumeclaims", "persistentvolumes"), READ),
        Rule(("authentication.k8s.io",), ("tokenreviews",), ("create",)),
        Rule(("authorization.k8s.io",), ("subjectaccessreviews",), ("create",)),
        Rule(("storage.k8s.io",), ("csinodes",), READ),
        Rule(("",), ("namespaces",), READ),
        Rule(("storage.k8s.io",), ("csidrivers",), READ),
        Rule(("storage.k8s.io",), ("csistoragecapacities",), READ),
        # Dynamic resource allocation (DynamicResourceAllocation, locked on since v1.35).
        Rule(("resource.k8s.io",), ("deviceclasses",), READ),
        Rule(("resource.k8s.io",), ("resourceclaims",), READ_UPDATE),
        Rule(("resource.k8s.io",), ("resourceclaims/status",), READ_UPDATE),
        Rule(("",), ("pods/finalizers",), ("update",)),
        Rule(("resource.k8s.io",), ("resourceslices",), READ),
        Rule(("resource.k8s.io",), ("resourceclaims",), ("create", "delete")),  # DRAExtendedResource (beta, on)
        # DRAResourceClaimGranularStatusAuthorization (beta, on in v1.36): allocating and reserving.
        Rule(("resource.k8s.io",), ("resourceclaims/binding",), ("update", "patch")),
        # GenericWorkload (alpha, off by default): only on an API server running with it, the
        # only kind that serves scheduling.k8s.io/v1alpha2 at all.
        *GENERIC_WORKLOAD_RULES,
    ),
    "system:volume-scheduler": (
        Rule(("",), ("persistentvolumes",), ("get", "list", "patch", "update", "watch")),
        Rule(("storage.k8s.io",), ("storageclasses",), READ),
        Rule(("",), ("persistentvolumeclaims",), ("get", "list", "patch", "update", "watch")),
    ),
}
# Upstream's namespaced bootstrap Role (kube-system) kube-scheduler's delegated HTTPS
# authentication reads its ConfigMap through.
AUTH_READER = "extension-apiserver-authentication-reader"
BOOTSTRAP_ROLES: dict[str, tuple[Rule, ...]] = {
    AUTH_READER: (Rule(("",), ("configmaps",), ("get", "list", "watch"), ("extension-apiserver-authentication",)),),
}
# What leader election does to its Lease (client-go's LeaseLock: Get, Create, Update).
LEASE_VERBS = ("get", "create", "update")


# -- reading the variants -------------------------------------------------------------------------------
def kustomization(variant: str) -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / variant / "kustomization.yaml").read_text())


def manifests(variant: str) -> list[dict[str, Any]]:
    """Every object the kustomization lists, in order."""
    docs: list[dict[str, Any]] = []
    for name in kustomization(variant)["resources"]:
        docs.extend(d for d in yaml.safe_load_all((DEPLOY / variant / name).read_text()) if d is not None)
    return docs


def of_kind(variant: str, kind: str) -> list[dict[str, Any]]:
    return [d for d in manifests(variant) if d["kind"] == kind]


def the(variant: str, kind: str) -> dict[str, Any]:
    found = of_kind(variant, kind)
    assert len(found) == 1, f"{variant}: expected one {kind}, found {len(found)}"
    return found[0]


def container(variant: str) -> dict[str, Any]:
    containers = the(variant, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def flags(args: Iterable[str]) -> dict[str, str]:
    """``--name=value`` and ``--name value`` pairs of a container's args, over the CLI defaults."""
    found = dict(CLI_DEFAULTS)
    args = list(args)
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        if "=" in arg:
            key, value = arg.split("=", 1)
            found[key] = value
        elif i + 1 < len(args) and not args[i + 1].startswith("-"):
            found[arg] = args[i + 1]
        else:
            found[arg] = "true"
    return found


def scheduler_config(variant: str) -> SchedulerConfig:
    """The ConfigMap file --config points at, parsed by kubesched's own parser."""
    path = Path(flags(container(variant)["args"])["--config"])
    mount = next(m for m in container(variant)["volumeMounts"] if path.is_relative_to(m["mountPath"]))
    volume = next(v for v in the(variant, "Deployment")["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"])
    cm = next(c for c in of_kind(variant, "ConfigMap") if c["metadata"]["name"] == volume["configMap"]["name"])
    raw = cm["data"][str(path.relative_to(mount["mountPath"]))]
    return parse_config(yaml.safe_load(raw), in_tree_registry(), source=f"{variant} ConfigMap")


def bindings(variant: str) -> list[dict[str, Any]]:
    return of_kind(variant, "ClusterRoleBinding") + of_kind(variant, "RoleBinding")


def rules_of(doc: Mapping[str, Any]) -> list[Rule]:
    return [
        Rule(tuple(r.get("apiGroups", ())), tuple(r.get("resources", ())), tuple(r["verbs"]), tuple(r.get("resourceNames", ())))
        for r in doc.get("rules") or ()
    ]


def own_roles(variant: str) -> dict[tuple[str, str], list[Rule]]:
    """Roles and ClusterRoles the variant defines, by (kind, name)."""
    return {(d["kind"], d["metadata"]["name"]): rules_of(d) for d in of_kind(variant, "Role") + of_kind(variant, "ClusterRole")}


def granted(variant: str, namespace: str) -> list[Rule]:
    """Every rule bound to the variant's ServiceAccount that applies in ``namespace``."""
    own = own_roles(variant)
    rules: list[Rule] = []
    for b in bindings(variant):
        if b["kind"] == "RoleBinding" and b["metadata"]["namespace"] != namespace:
            continue
        ref = b["roleRef"]
        rules.extend(own.get((ref["kind"], ref["name"]), ()))
        table = BOOTSTRAP_CLUSTER_ROLES if ref["kind"] == "ClusterRole" else BOOTSTRAP_ROLES
        rules.extend(table.get(ref["name"], ()))
    return rules


def expand(rule: Rule) -> Iterable[tuple[str, str, str, str | None]]:
    return itertools.product(rule.groups, rule.resources, rule.verbs, rule.names or (None,))


# -- the manifests --------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_manifest_is_a_known_kind_and_api_version(variant):
    assert manifests(variant)
    for doc in manifests(variant):
        assert (doc["apiVersion"], doc["kind"]) in KINDS, doc["metadata"]["name"]


def unknown_fields(value: object, type_name: str, path: str) -> list[str]:
    """Fields the Kubernetes API does not define (or of the wrong primitive type), found by
    walking ``value`` along the official client's models (their attribute maps mirror the
    API's OpenAPI schema)."""
    if type_name.startswith("List["):
        inner = type_name[len("List["):-1]
        return [p for i, v in enumerate(value) for p in unknown_fields(v, inner, f"{path}[{i}]")]  # type: ignore[arg-type]
    if type_name.startswith("Dict["):
        inner = type_name[len("Dict["):-1].split(", ", 1)[1]
        return [p for k, v in value.items() for p in unknown_fields(v, inner, f"{path}.{k}")]  # type: ignore[union-attr]
    model = getattr(kubernetes.client, type_name, None)
    if model is None:  # a primitive
        expected = {"bool": (bool,), "int": (int,), "str": (str, int, float)}.get(type_name)
        ok = expected is None or (isinstance(value, expected) and not (type_name == "int" and isinstance(value, bool)))
        return [] if ok else [f"{path}: not a {type_name}"]
    if not isinstance(value, dict):
        return [f"{path}: not an object"]
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    problems = []
    for key, item in value.items():
        if key not in by_json:
            problems.append(f"{path}.{key}: unknown field")
        else:
            problems.extend(unknown_fields(item, model.openapi_types[by_json[key]], f"{path}.{key}"))
    return problems


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_field_is_one_the_kubernetes_api_defines(variant):
    for doc in manifests(variant):
        assert unknown_fields(doc, f"V1{doc['kind']}", f"{doc['kind']}/{doc['metadata']['name']}") == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kustomization_lists_every_manifest_of_its_directory(variant):
    files = {p.name for p in (DEPLOY / variant).glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(kustomization(variant)["resources"]) == sorted(files)


@pytest.mark.parametrize("variant", VARIANTS)
def test_namespaced_objects_live_in_kube_system(variant):
    assert kustomization(variant)["namespace"] == "kube-system"
    for doc in manifests(variant):
        if doc["kind"] in NAMESPACED:
            assert doc["metadata"].get("namespace") == "kube-system", doc["metadata"]["name"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_deployment_runs_as_the_variants_service_account(variant):
    pod = the(variant, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == the(variant, "ServiceAccount")["metadata"]["name"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_binding_grants_to_the_variants_service_account_only(variant):
    sa = the(variant, "ServiceAccount")["metadata"]
    for b in bindings(variant):
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}], b["metadata"]["name"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_bindings_reference_bootstrap_roles_or_roles_of_our_own(variant):
    own = own_roles(variant)
    for b in bindings(variant):
        ref = b["roleRef"]
        assert ref["apiGroup"] == "rbac.authorization.k8s.io"
        bootstrap = BOOTSTRAP_CLUSTER_ROLES if ref["kind"] == "ClusterRole" else BOOTSTRAP_ROLES
        assert ref["name"] in bootstrap or (ref["kind"], ref["name"]) in own, ref
        if b["kind"] == "ClusterRoleBinding":
            assert ref["kind"] == "ClusterRole", "a ClusterRoleBinding cannot reference a Role"


@pytest.mark.parametrize("variant", VARIANTS)
def test_both_upstream_scheduler_roles_are_bound(variant):
    bound = {b["roleRef"]["name"] for b in of_kind(variant, "ClusterRoleBinding")}
    assert {"system:kube-scheduler", "system:volume-scheduler"} <= bound


@pytest.mark.parametrize("variant", VARIANTS)
def test_roles_of_our_own_grant_nothing_beyond_upstreams_scheduler_roles_and_the_lease(variant):
    upstream = [r for rules in BOOTSTRAP_CLUSTER_ROLES.values() for r in rules]
    lease = scheduler_config(variant).leader_election
    allowed = [*upstream, Rule(("coordination.k8s.io",), ("leases",), LEASE_VERBS, (lease.resource_name,))]
    for (kind, name), rules in own_roles(variant).items():
        for rule in rules:
            for request in expand(rule):
                assert any(a.allows(*request) for a in allowed), f"{kind} {name} grants {request}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_workload_aware_scheduling_needs_nothing_beyond_system_kube_scheduler_with_generic_workload(variant):
    """What `kubesched run` asks for PodGroups with GenericWorkload on (the informer's list and
    watch and the startup check's list of every namespace's podgroups, the condition's patch of
    podgroups/status) is all in the bootstrap role's GenericWorkload rules, bound already."""
    group = POD_GROUPS.path.split("/")[2]
    resource = POD_GROUPS.path.rsplit("/", 1)[1]
    status = pod_group_status_path("ns", "name").split("/")
    asked = [(group, resource, "list"), (group, resource, "watch"), (group, f"{status[-3]}/{status[-1]}", "patch")]
    rules = granted(variant, "default")
    for request in asked:
        assert any(r.allows(*request, None) for r in rules), request
        assert any(r.allows(*request, None) for r in GENERIC_WORKLOAD_RULES), request


@pytest.mark.parametrize("variant", VARIANTS)
def test_lease_rights_of_our_own_are_a_role_in_the_lease_namespace(variant):
    """Not a ClusterRole: the right to renew the Lease holds in its namespace only."""
    lease = scheduler_config(variant).leader_election
    for doc in of_kind(variant, "Role") + of_kind(variant, "ClusterRole"):
        if any("leases" in r.resources for r in rules_of(doc)):
            assert (doc["kind"], doc["metadata"].get("namespace")) == ("Role", lease.resource_namespace)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_service_account_may_take_and_renew_the_configured_lease(variant):
    lease = scheduler_config(variant).leader_election
    rules = granted(variant, lease.resource_namespace)
    for verb in LEASE_VERBS:
        name = None if verb == "create" else lease.resource_name  # create requests carry no name
        assert any(r.allows("coordination.k8s.io", "leases", verb, name) for r in rules), verb


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_authentication_reader_is_bound_only_with_authenticated_https(variant):
    """kube-scheduler reads extension-apiserver-authentication to authenticate clients of
    its HTTPS port; plain HTTP endpoints authenticate nobody and need no such right."""
    bound = {b["roleRef"]["name"] for b in of_kind(variant, "RoleBinding")}
    assert (AUTH_READER in bound) == ("--secure-port" in flags(container(variant)["args"]))


# -- the configuration ----------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_config_map_holds_a_configuration_kubesched_accepts(variant):
    assert scheduler_config(variant).profiles


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_config_uses_in_cluster_credentials(variant):
    assert scheduler_config(variant).kubeconfig == ""
    assert "--kubeconfig" not in flags(container(variant)["args"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_client_rate_limits_are_raised_above_upstreams_defaults(variant):
    config = scheduler_config(variant)
    assert config.qps > 50 and config.burst > 100 and config.burst >= config.qps


@pytest.mark.parametrize("variant", VARIANTS)
def test_leader_election_uses_leases_in_kube_system(variant):
    lease = scheduler_config(variant).leader_election
    assert (lease.resource_lock, lease.resource_namespace) == ("leases", "kube-system")


@pytest.mark.parametrize("variant", VARIANTS)
def test_flags_do_not_override_the_configured_lease_or_profile(variant):
    """One source of truth: the test of each variant's Lease reads the config file."""
    assert not {f for f in flags(container(variant)["args"]) if f.startswith("--leader-elect-resource")}


def test_the_cluster_scheduler_serves_default_scheduler_on_kube_schedulers_lease():
    config = scheduler_config("kubesched")
    lease = config.leader_election
    assert [p.scheduler_name for p in config.profiles] == [UPSTREAM_SCHEDULER]
    assert (lease.resource_namespace, lease.resource_name) == UPSTREAM_LEASE


def test_the_second_scheduler_has_its_own_profile_name_and_lease():
    config = scheduler_config("second-scheduler")
    lease = config.leader_election
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]
    assert (lease.resource_namespace, lease.resource_name) != UPSTREAM_LEASE


# -- the Deployment -------------------------------------------------------------------------------------
def http_port(variant: str) -> int:
    return int(flags(container(variant)["args"])["--port"])


def probe_port(variant: str, probe: str) -> int:
    port = container(variant)[probe]["httpGet"]["port"]
    if isinstance(port, str):
        port = next(p["containerPort"] for p in container(variant)["ports"] if p.get("name") == port)
    return port


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("probe", "path"), [("livenessProbe", "/livez"), ("readinessProbe", "/readyz")])
def test_probes_ask_the_endpoint_on_the_port_the_args_configure(variant, probe, path):
    get = container(variant)[probe]["httpGet"]
    assert get["path"] == path and get.get("scheme", "HTTP") == "HTTP"
    assert probe_port(variant, probe) == http_port(variant)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_http_port_is_declared_on_the_container(variant):
    assert http_port(variant) in [p["containerPort"] for p in container(variant)["ports"]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_endpoints_listen_where_the_kubelet_probes(variant):
    """The kubelet probes the pod IP: a loopback bind address would fail every probe."""
    assert flags(container(variant)["args"])["--bind-address"] in ("0.0.0.0", "::")


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_container_runs_kubesched_run_with_the_config_file(variant):
    c = container(variant)
    assert c["image"] in {i["name"] for i in kustomization(variant)["images"]}
    assert c["args"][0] == "run" and "--config" in flags(c["args"])


def run_command() -> click.Command:
    """``kubesched run`` as the CLI defines it (skipped while the live mode is not importable)."""
    try:
        main = importlib.import_module("kubesched.cli.main")
    except ImportError as err:
        pytest.skip(f"kubesched run is not importable yet: {err}")
    command = main.cli.get_command(click.Context(main.cli), "run")
    if command is None:
        pytest.skip("kubesched has no run command yet")
    return command


def parses(args: list[str]) -> None:
    """Parse and convert every option as `kubesched run` would, without running it."""
    assert args[0] == "run"
    run_command().make_context("kubesched run", list(args[1:]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_container_args_are_valid_kubesched_run_options(variant):
    parses(container(variant)["args"])


def test_the_images_default_command_is_valid_kubesched_run_options():
    parses(json.loads(dict(dockerfile_stages()[-1].instructions)["CMD"]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_container_is_locked_down(variant):
    sc = container(variant)["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_pod_runs_as_the_images_non_root_user(variant):
    pod = the(variant, "Deployment")["spec"]["template"]["spec"]["securityContext"]
    user = final_stage_user()
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] == user[0] != 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_container_has_cpu_and_memory_requests_and_limits(variant):
    resources = container(variant)["resources"]
    for bound in ("requests", "limits"):
        assert set(resources[bound]) == {"cpu", "memory"}, bound


@pytest.mark.parametrize("variant", VARIANTS)
def test_several_replicas_only_with_leader_election(variant):
    replicas = the(variant, "Deployment")["spec"]["replicas"]
    assert replicas == 1 or scheduler_config(variant).leader_election.leader_elect


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_rollout_never_stops_a_replica_before_its_successor_runs(variant):
    """The new pod needs a running scheduler to be placed (for the cluster scheduler, one of
    the old replicas)."""
    update = the(variant, "Deployment")["spec"]["strategy"]["rollingUpdate"]
    assert update["maxUnavailable"] == 0 and update["maxSurge"] >= 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_disruption_budget_keeps_one_replica_through_drains(variant):
    deployment = the(variant, "Deployment")["spec"]
    spec = the(variant, "PodDisruptionBudget")["spec"]
    labels = deployment["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert spec.get("maxUnavailable", deployment["replicas"]) < deployment["replicas"] or spec.get("minAvailable", 0) >= 1


def test_the_cluster_scheduler_is_system_cluster_critical():
    assert the("kubesched", "Deployment")["spec"]["template"]["spec"]["priorityClassName"] == "system-cluster-critical"


def test_the_second_scheduler_is_placed_by_the_cluster_scheduler():
    """A second scheduler's own pods must not wait for the second scheduler."""
    pod = the("second-scheduler", "Deployment")["spec"]["template"]["spec"]
    assert pod.get("schedulerName", UPSTREAM_SCHEDULER) == UPSTREAM_SCHEDULER


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with its built-in kustomize) is not installed")
def test_kustomize_renders_the_variant(variant):
    out = subprocess.run(["kubectl", "kustomize", str(DEPLOY / variant)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rendered = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert sorted((d["kind"], d["metadata"]["name"]) for d in rendered) == sorted(
        (d["kind"], d["metadata"]["name"]) for d in manifests(variant)
    )


# -- running it ----------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cluster_for(profiles: Iterable[str]) -> list[dict[str, Any]]:
    """One node and one pending pod per scheduler name (``pod-<name>``)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{name}", "namespace": "default"},
             "spec": {"schedulerName": name, "containers": [{"name": "c", "image": "pause"}]}} for name in profiles]
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("default", "kube-system")]
    return [*namespaces, node, *pods]


def wait_for(condition: Any, what: str, timeout: float = 60.0) -> None:
    """Poll until ``condition()`` is true; the timeout only guards against a hang."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_variant_schedules_its_pods_and_answers_its_probes(variant, tmp_path):
    """``kubesched run`` with the Deployment's arguments and the ConfigMap's file (against
    the test API server, `--master` standing in for in-cluster configuration) places the
    pod of its profile, leaves kube-scheduler's, and answers both probes."""
    mine = scheduler_config(variant).profiles[0].scheduler_name
    names = [mine] if mine == UPSTREAM_SCHEDULER else [mine, UPSTREAM_SCHEDULER]
    config_file = tmp_path / "config.yaml"
    cm = the(variant, "ConfigMap")
    config_file.write_text(next(iter(cm["data"].values())))
    port = free_port()
    args = [a for a in container(variant)["args"] if not a.startswith(("--config", "--port"))]
    args += [f"--config={config_file}", f"--port={port}"]
    server = APIServer().start()
    proc = None
    try:
        server.load(cluster_for(names))
        proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", *args, "--master", server.url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with httpx.Client(timeout=10.0) as http:
            def node_of(name: str) -> str | None:
                return http.get(f"{server.url}/api/v1/namespaces/default/pods/pod-{name}").json()["spec"].get("nodeName")

            def answers(path: str) -> bool:
                try:
                    return http.get(f"http://127.0.0.1:{port}{path}").status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(lambda: proc.poll() is not None or node_of(mine) is not None, f"pod-{mine} to be bound")
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert node_of(mine) == "n1"
            assert all(node_of(n) is None for n in names if n != mine)
            for probe in ("livenessProbe", "readinessProbe"):
                path = container(variant)[probe]["httpGet"]["path"]
                wait_for(lambda: answers(path), f"{path} to answer 200")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        server.stop()


# -- the image ------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]]  # (INSTRUCTION, arguments)


def dockerfile_stages() -> list[Stage]:
    """The Dockerfile's stages, continuation lines joined, global ARG defaults substituted."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "ARG" and not stages and "=" in rest:
            key, value = rest.split("=", 1)
            args[key.strip()] = value.strip()
        elif instruction == "FROM":
            rest = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], m[0]), rest)
            words = rest.split()
            words = [w for w in words if not w.startswith("--platform")]
            stages.append(Stage(words[0], words[2] if len(words) > 2 else "", []))
        elif stages:
            stages[-1].instructions.append((instruction, rest.strip()))
    return stages


def final_stage_user() -> tuple[int, int | None]:
    users = [rest for ins, rest in dockerfile_stages()[-1].instructions if ins == "USER"]
    assert users, "the final stage sets no USER (it would run as root)"
    user, _, group = users[-1].partition(":")
    assert user.isdigit() and (not group or group.isdigit()), "USER must be numeric for runAsNonRoot"
    return int(user), int(group) if group else None


def test_the_image_is_built_in_several_stages():
    stages = dockerfile_stages()
    assert len(stages) >= 2
    final = stages[-1].instructions
    assert any(ins in ("COPY", "RUN") and "from=build" in rest.replace(" ", "").lower() for ins, rest in final)


def test_the_final_stage_uses_the_slim_python_311_base():
    assert dockerfile_stages()[-1].base.startswith("python:3.11-slim")


def test_the_final_stage_runs_as_a_numeric_non_root_user():
    assert final_stage_user()[0] != 0


def test_the_final_stage_installs_no_compilers():
    for ins, rest in dockerfile_stages()[-1].instructions:
        if ins == "RUN":
            assert not re.search(r"\b(gcc|g\+\+|clang|build-essential|make|cmake|rustc|cargo)\b", rest), rest


def test_the_entrypoint_is_the_packages_console_script():
    final = dict(dockerfile_stages()[-1].instructions)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert final["ENTRYPOINT"] == '["kubesched"]' and "kubesched" in scripts


def test_the_build_context_keeps_what_the_wheel_needs():
    ignore = (ROOT / ".dockerignore").read_text().split()
    readme = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["readme"]
    assert "*" in ignore
    assert {"!pyproject.toml", f"!{readme}", "!kubesched/"} <= set(ignore)
