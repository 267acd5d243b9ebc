"""Strict decoding of a KubeSchedulerConfiguration file as upstream's scheme decodes it:
unknown and repeated fields, fields v1 no longer has, apiVersions no longer served, values
of the wrong Go type, Go durations; files that are not UTF-8 or YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.framework.config import API_VERSION, KIND, ConfigError, load_config, parse_config
from kubesched.framework.config_go import format_duration, parse_duration
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

S = 1_000_000_000
M = 60 * S
H = 60 * M


def problems_of(doc: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        parse_config(doc, in_tree_registry(), UPSTREAM_ONLY)
    return err.value.problems


def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


# -- fields v1 does not have --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, field",
    [
        pytest.param(doc(healthzBindAddress="0.0.0.0:10251"), "healthzBindAddress", id="healthzBindAddress (dropped in v1beta3)"),
        pytest.param(doc(metricsBindAddress="0.0.0.0:10251"), "metricsBindAddress", id="metricsBindAddress (dropped in v1beta3)"),
        pytest.param(doc(percentageOfNodeToScore=10), "percentageOfNodeToScore", id="a misspelt field"),
        pytest.param(doc(leaderElection={"leaderElection": True}), "leaderElection.leaderElection", id="in leaderElection"),
        pytest.param(doc(clientConnection={"QPS": 5}), "clientConnection.QPS", id="case-sensitive"),
        pytest.param(doc(profiles=[{"schedulerName": "x", "plugin": {}}]), "profiles[0].plugin", id="in a profile"),
        pytest.param(doc(profiles=[{"plugins": {"filters": {}}}]), "profiles[0].plugins.filters", id="an extension point"),
        pytest.param(doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "wieght": 1}]}}}]),
                     "profiles[0].plugins.score.enabled[0].wieght", id="in a plugin"),
        pytest.param(doc(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "arguments": {}}]}]),
                     "profiles[0].pluginConfig[0].arguments", id="in a pluginConfig entry"),
        pytest.param(doc(debuggingConfiguration={"enableProfiling": False}), "debuggingConfiguration",
                     id="debuggingConfiguration is inline in v1"),
    ],
)
def test_unknown_fields_are_strict_decoding_errors(raw: dict[str, Any], field: str) -> None:
    assert problems_of(raw) == [(field, f'unknown field "{field}"')]


# -- apiVersion and kind ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "api_version, kind, line",
    [
        pytest.param("kubescheduler.config.k8s.io/v1beta3", KIND,
                     ("apiVersion", '"kubescheduler.config.k8s.io/v1beta3" is no longer served (removed in Kubernetes v1.29): '
                                    "kube-scheduler v1.36 reads only kubescheduler.config.k8s.io/v1"), id="v1beta3"),
        pytest.param("kubescheduler.config.k8s.io/v1beta2", KIND,
                     ("apiVersion", '"kubescheduler.config.k8s.io/v1beta2" is no longer served (removed in Kubernetes v1.28): '
                                    "kube-scheduler v1.36 reads only kubescheduler.config.k8s.io/v1"), id="v1beta2"),
        pytest.param("kubescheduler.config.k8s.io/v2", KIND,
                     ("apiVersion", 'no kind "KubeSchedulerConfiguration" is registered for version '
                                    '"kubescheduler.config.k8s.io/v2": kube-scheduler v1.36 reads only '
                                    "kubescheduler.config.k8s.io/v1"), id="unknown version"),
        pytest.param(None, KIND, ("apiVersion", "Required value: kube-scheduler v1.36 reads apiVersion "
                                                "kubescheduler.config.k8s.io/v1"), id="no apiVersion"),
        pytest.param(API_VERSION, "SchedulerConfig",
                     ("kind", 'no kind "SchedulerConfig" is registered for version "kubescheduler.config.k8s.io/v1": '
                              "want KubeSchedulerConfiguration"), id="wrong kind"),
        pytest.param(API_VERSION, None, ("kind", "Required value: want KubeSchedulerConfiguration"), id="no kind"),
    ],
)
def test_unserved_versions_and_kinds_are_one_line(api_version: str | None, kind: str | None, line: tuple[str, str]) -> None:
    raw: dict[str, Any] = {"parallelism": "many", "healthzBindAddress": "x"}  # not reported: nothing else is decoded
    if api_version is not None:
        raw["apiVersion"] = api_version
    if kind is not None:
        raw["kind"] = kind
    assert problems_of(raw) == [line]


@pytest.mark.parametrize("raw", [[1, 2], "text", None, 5])
def test_a_document_that_is_not_an_object_is_one_line(raw: Any) -> None:
    [(field, message)] = problems_of(raw)
    assert field == "" and message.startswith("not a KubeSchedulerConfiguration")


# -- Go types ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, field, message",
    [
        pytest.param(doc(parallelism="8"), "parallelism",
                     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32",
                     id="string for int32"),
        pytest.param(doc(parallelism=1.5), "parallelism",
                     "json: cannot unmarshal number 1.5 into Go struct field KubeSchedulerConfiguration.parallelism of type int32",
                     id="fraction for int32"),
        pytest.param(doc(parallelism=3_000_000_000), "parallelism",
                     "json: cannot unmarshal number 3000000000 into Go struct field KubeSchedulerConfiguration.parallelism "
                     "of type int32", id="int32 overflow"),
        pytest.param(doc(podMaxBackoffSeconds="10s"), "podMaxBackoffSeconds",
                     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.podMaxBackoffSeconds "
                     "of type int64", id="string for int64"),
        pytest.param(doc(percentageOfNodesToScore=True), "percentageOfNodesToScore",
                     "json: cannot unmarshal bool into Go struct field KubeSchedulerConfiguration.percentageOfNodesToScore "
                     "of type int32", id="bool for int32"),
        pytest.param(doc(delayCacheUntilActive="true"), "delayCacheUntilActive",
                     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.delayCacheUntilActive "
                     "of type bool", id="string for bool"),
        pytest.param(doc(enableProfiling=1), "enableProfiling",
                     "json: cannot unmarshal number into Go struct field "
                     "KubeSchedulerConfiguration.DebuggingConfiguration.enableProfiling of type bool", id="embedded struct"),
        pytest.param(doc(leaderElection={"leaderElect": "yes"}), "leaderElection.leaderElect",
                     "json: cannot unmarshal string into Go struct field "
                     "LeaderElectionConfiguration.leaderElection.leaderElect of type bool", id="nested"),
        pytest.param(doc(leaderElection=True), "leaderElection",
                     "json: cannot unmarshal bool into Go struct field KubeSchedulerConfiguration.leaderElection of type "
                     "v1alpha1.LeaderElectionConfiguration", id="not an object"),
        pytest.param(doc(clientConnection={"qps": "fast"}), "clientConnection.qps",
                     "json: cannot unmarshal string into Go struct field "
                     "ClientConnectionConfiguration.clientConnection.qps of type float32", id="string for float32"),
        pytest.param(doc(clientConnection={"burst": 2.5}), "clientConnection.burst",
                     "json: cannot unmarshal number 2.5 into Go struct field "
                     "ClientConnectionConfiguration.clientConnection.burst of type int32", id="fraction for burst"),
        pytest.param(doc(clientConnection={"kubeconfig": 5}), "clientConnection.kubeconfig",
                     "json: cannot unmarshal number into Go struct field "
                     "ClientConnectionConfiguration.clientConnection.kubeconfig of type string", id="number for string"),
        pytest.param(doc(profiles={"schedulerName": "x"}), "profiles",
                     "json: cannot unmarshal object into Go struct field KubeSchedulerConfiguration.profiles of type "
                     "[]v1.KubeSchedulerProfile", id="object for a list"),
        pytest.param(doc(profiles=[{"schedulerName": ["a"]}]), "profiles[0].schedulerName",
                     "json: cannot unmarshal array into Go struct field KubeSchedulerProfile.profiles.schedulerName of type "
                     "string", id="in a profile"),
        pytest.param(doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": "2"}]}}}]),
                     "profiles[0].plugins.score.enabled[0].weight",
                     "json: cannot unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled.weight of "
                     "type int32", id="a plugin's weight"),
    ],
)
def test_values_of_the_wrong_type(raw: dict[str, Any], field: str, message: str) -> None:
    assert problems_of(raw) == [(field, message)]


def test_integral_floats_are_integers() -> None:
    """YAML 8.0 reaches upstream's decoder as JSON 8."""
    cfg = parse_config(doc(parallelism=8.0, podMaxBackoffSeconds=2e1), in_tree_registry(), UPSTREAM_ONLY)
    assert (cfg.parallelism, cfg.pod_max_backoff_seconds) == (8, 20.0)


def test_negative_plugin_weights_are_accepted_as_upstream_does() -> None:
    cfg = parse_config(doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}]),
                       in_tree_registry(), UPSTREAM_ONLY)
    assert cfg.profiles[0].plugins["score"].enabled[0].weight == -1


@pytest.mark.parametrize(
    "profile",
    [
        pytest.param({"plugins": {"score": {"disabled": [{"name": "NoSuchPlugin"}]}}}, id="disabling an unknown plugin"),
        pytest.param({"pluginConfig": [{"name": "NoSuchPlugin", "args": {"x": 1}}]}, id="args for an unknown plugin"),
        pytest.param({"pluginConfig": [{"name": "ImageLocality", "args": {"x": 1}}]}, id="args for a plugin without args"),
    ],
)
def test_what_upstream_ignores_is_accepted(profile: dict[str, Any]) -> None:
    cfg = parse_config(doc(profiles=[profile]), in_tree_registry(), UPSTREAM_ONLY)
    assert cfg.profiles[0].scheduler_name == "default-scheduler"


def test_args_of_another_version_are_refused() -> None:
    raw = doc(profiles=[{"pluginConfig": [{"name": "NodeAffinity",
                                            "args": {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}}]}])
    assert problems_of(raw) == [("profiles[0].pluginConfig[0].args",
                                 'decoding args for plugin NodeAffinity: no kind "NodeAffinityArgs" is registered for '
                                 'version "kubescheduler.config.k8s.io/v1beta3"')]


def test_every_decoding_problem_is_reported() -> None:
    raw = doc(parallelism="x", healthzBindAddress="", leaderElection={"leaseDuration": 15, "foo": 1},
              profiles=[{"schedulerName": 1}, {"plugins": {"filter": {"enabled": [{"name": "NoSuch"}]}}}])
    assert [f for f, _ in problems_of(raw)] == [
        "healthzBindAddress", "parallelism", "leaderElection.foo", "leaderElection.leaseDuration",
        "profiles[0].schedulerName",  # a number for a string
        "profiles[0].schedulerName", "profiles[1].schedulerName",  # two profiles: names required
        "profiles[1].schedulerName",  # both "": a duplicate, as upstream reports it
        "profiles[1].plugins.filter.enabled[0]",
    ]


# -- durations --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, message",
    [
        pytest.param("15", 'time: missing unit in duration "15"', id="no unit"),
        pytest.param("15 s", 'time: unknown unit " s" in duration "15 s"', id="a space"),
        pytest.param("1d", 'time: unknown unit "d" in duration "1d"', id="days"),
        pytest.param("abc", 'time: invalid duration "abc"', id="not a duration"),
        pytest.param(None, 'time: invalid duration ""', id="null is parsed as empty"),
        pytest.param(15, "json: cannot unmarshal number into Go value of type string", id="a number"),
    ],
)
def test_leader_election_durations_are_go_durations(value: Any, message: str) -> None:
    assert problems_of(doc(leaderElection={"renewDeadline": value})) == [("leaderElection.renewDeadline", message)]


@pytest.mark.parametrize(
    "text, nanos",
    [  # from Go's time_test.go parseDurationTests
        ("0", 0), ("5s", 5 * S), ("30s", 30 * S), ("1478s", 1478 * S), ("-5s", -5 * S), ("+5s", 5 * S), ("-0", 0),
        ("+0", 0), ("5.0s", 5 * S), ("5.6s", 5 * S + 600_000_000), ("5.s", 5 * S), (".5s", S // 2), ("1.0s", S),
        ("1.00s", S), ("1.004s", S + 4_000_000), ("1.0040s", S + 4_000_000), ("100.00100s", 100 * S + 1_000_000),
        ("10ns", 10), ("11us", 11_000), ("12\u00b5s", 12_000), ("12\u03bcs", 12_000), ("13ms", 13_000_000), ("14s", 14 * S),
        ("15m", 15 * M), ("16h", 16 * H), ("3h30m", 3 * H + 30 * M), ("10.5s4m", 4 * M + 10 * S + S // 2),
        ("-2m3.4s", -(2 * M + 3 * S + 400_000_000)), ("1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4_000_000 + 5_000 + 6),
        ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425_000_000), ("52763797000ns", 52763797000),
        ("0.3333333333333333333h", 20 * M), ("9007199254740993ns", (1 << 53) + 1),
        ("9223372036854775807ns", (1 << 63) - 1), ("9223372036854775.807us", (1 << 63) - 1),
        ("9223372036s854ms775us807ns", (1 << 63) - 1), ("-9223372036854775808ns", -(1 << 63)),
        ("-9223372036854775.808us", -(1 << 63)), ("0.100000000000000000000h", 6 * M),
        ("0.830103483285477580700h", 49 * M + 48 * S + 372539827), ("1.5h", H + 30 * M), ("300ms", 300_000_000),
    ],
)
def test_parse_duration_as_go(text: str, nanos: int) -> None:
    assert parse_duration(text) == nanos


@pytest.mark.parametrize(
    "text, message",
    [
        ("", 'time: invalid duration ""'), ("3", 'time: missing unit in duration "3"'), ("-", 'time: invalid duration "-"'),
        ("s", 'time: invalid duration "s"'), (".", 'time: invalid duration "."'), ("-.", 'time: invalid duration "-."'),
        (".s", 'time: invalid duration ".s"'), ("+.s", 'time: invalid duration "+.s"'),
        ("\x85\x85", 'time: invalid duration "\\xc2\\x85\\xc2\\x85"'),
        ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_parse_duration_errors_as_go(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    "nanos, text",
    [  # Go's durationTests
        (0, "0s"), (1, "1ns"), (1100, "1.1\u00b5s"), (2_200_000, "2.2ms"), (3_300_000_000, "3.3s"), (4 * M + 5 * S, "4m5s"),
        (4 * M + 5001 * 1_000_000, "4m5.001s"), (5 * H + 6 * M + 7001 * 1_000_000, "5h6m7.001s"),
        (8 * M + 1, "8m0.000000001s"), ((1 << 63) - 1, "2562047h47m16.854775807s"), (-(1 << 63), "-2562047h47m16.854775808s"),
    ],
)
def test_format_duration_as_go(nanos: int, text: str) -> None:
    assert format_duration(nanos) == text


# -- files ----------------------------------------------------------------------------------------------------
def write(tmp_path: Path, content: str | bytes, name: str = "sched.yaml") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def lines_of(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_config(path, in_tree_registry(), UPSTREAM_ONLY)
    return err.value.lines()


HEADER = f"apiVersion: {API_VERSION}\nkind: {KIND}\n"


def test_a_file_loads(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "parallelism: 4\nleaderElection:\n  leaseDuration: 1m\n  renewDeadline: 45s\n")
    cfg = load_config(path, in_tree_registry(), UPSTREAM_ONLY)
    assert (cfg.parallelism, cfg.leader_election.lease_duration, cfg.leader_election.renew_deadline) == (4, 60.0, 45.0)


def test_a_json_file_loads(tmp_path: Path) -> None:
    path = write(tmp_path, f'{{"apiVersion": "{API_VERSION}", "kind": "{KIND}", "parallelism": 2}}', "sched.json")
    assert load_config(path, in_tree_registry(), UPSTREAM_ONLY).parallelism == 2


def test_keys_set_twice_are_strict_errors(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "parallelism: 4\nprofiles:\n- schedulerName: a\n  schedulerName: b\nparallelism: 8\n")
    assert lines_of(path) == [
        f"{path}: KubeSchedulerConfiguration profiles[0].schedulerName: line 6: key \"schedulerName\" already set in map",
        f"{path}: KubeSchedulerConfiguration parallelism: line 7: key \"parallelism\" already set in map",
    ]


@pytest.mark.parametrize(
    "content, line",
    [
        pytest.param(b"apiVersion: \xff\xfe\n", "not UTF-8 text (byte 12)", id="not UTF-8"),
        pytest.param("apiVersion: [\n", "invalid YAML at line 2, column 1: expected the node content, but found '<stream end>'",
                     id="not YAML"),
        pytest.param(HEADER + "---\n" + HEADER, "want exactly one KubeSchedulerConfiguration document, found 2",
                     id="two documents"),
        pytest.param("", "want exactly one KubeSchedulerConfiguration document, found 0", id="empty"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path: Path, content: str | bytes, line: str) -> None:
    path = write(tmp_path, content)
    assert lines_of(path) == [f"{path}: {line}"]


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    assert lines_of(tmp_path / "absent.yaml") == [f"{tmp_path / 'absent.yaml'}: No such file or directory"]


def test_problems_in_a_file_name_it(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "healthzBindAddress: 0.0.0.0:10251\n")
    assert lines_of(path) == [f'{path}: KubeSchedulerConfiguration healthzBindAddress: unknown field "healthzBindAddress"']


def test_a_key_set_twice_is_reported_with_the_other_strict_errors(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "parallelism: 4\nmetricsBindAddress: x\nparallelism: 8\n")
    assert [line.split(": KubeSchedulerConfiguration ")[1] for line in lines_of(path)] == [
        'parallelism: line 5: key "parallelism" already set in map',
        'metricsBindAddress: unknown field "metricsBindAddress"',
    ]
