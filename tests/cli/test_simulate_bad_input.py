"""Bad input to `simulate`: each invalid class is one line naming file, object and field, exit 2,
and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dumps import node, other, pod, typed_list, write_json, write_list
from kubesched.cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


def errors(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error: ")]


def one_error(tmp_path: Path, items: list[dict]) -> str:
    path = write_list(tmp_path / "s.yaml", items)
    result = run(str(path))
    assert result.exit_code == 2, result.output
    found = errors(result)
    assert len(found) == 1, found
    assert found[0].startswith(f"error: {path}: ")
    assert "scheduled" not in result.output
    return found[0]


def test_a_negative_pod_request_is_an_error(tmp_path: Path):
    message = one_error(tmp_path, [node("n1"), pod("p", cpu="-100m")])
    assert message.endswith("Pod default/p spec.containers[0].resources.requests[cpu]: "
                            "Invalid value: '-100m': must be greater than or equal to 0")


def test_a_negative_node_allocatable_is_an_error(tmp_path: Path):
    bad = node("n1")
    bad["status"]["allocatable"]["memory"] = "-8Gi"
    message = one_error(tmp_path, [bad, pod("p")])
    assert "Node n1 status.allocatable[memory]: Invalid value: '-8Gi': must be greater than or equal to 0" in message


def test_a_fractional_pod_count_on_a_node_is_an_error(tmp_path: Path):
    bad = node("n1")
    bad["status"]["capacity"]["pods"] = "110.5"
    assert "Node n1 status.capacity[pods]: Invalid value: '110.5': must be an integer" in one_error(tmp_path, [bad])


@pytest.mark.parametrize("name, reason", [
    ("mem", "must be a standard resource type or fully qualified"),
    ("pods", "must be a standard resource for containers"),
    ("Example.com/gpu", "prefix part must be a lowercase RFC 1123 subdomain"),
])
def test_an_invalid_container_resource_name_is_an_error(tmp_path: Path, name: str, reason: str):
    bad = pod("p")
    bad["spec"]["containers"][0]["resources"]["limits"] = {name: "1"}
    message = one_error(tmp_path, [node("n1"), bad])
    assert f"Pod default/p spec.containers[0].resources.limits[{name}]: Invalid value: '{name}': {reason}" in message


def test_an_extended_resource_name_is_accepted(tmp_path: Path):
    gpu = pod("p")
    gpu["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    result = run(str(write_list(tmp_path / "s.yaml", [node("n1"), gpu])))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("kind, version, served", [
    ("Pod", "v2", "v1"),
    ("Node", "apps/v1", "v1"),
    ("PriorityClass", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1"),
    ("PodDisruptionBudget", "policy/v1beta1", "policy/v1"),
])
def test_an_unknown_apiversion_for_a_known_kind_is_an_error(tmp_path: Path, kind: str, version: str, served: str):
    obj = pod("p") if kind == "Pod" else node("n2") if kind == "Node" else other(kind, "x", version, value=5)
    obj["apiVersion"] = version
    message = one_error(tmp_path, [node("n1"), obj])
    assert f"apiVersion: unknown apiVersion '{version}' for {kind}; the API server serves {served}" in message


def test_a_duplicate_pod_names_both_places(tmp_path: Path):
    write_list(tmp_path / "a.yaml", [node("n1"), pod("web-1")])
    write_json(tmp_path / "b.json", typed_list("Pod", [pod("web-0"), pod("web-1")]))
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert errors(result) == [f"error: {tmp_path / 'b.json'}: Pod default/web-1 (document 1, items[1]): "
                              f"duplicate: the same Pod is at {tmp_path / 'a.yaml'} (document 1, items[1])"]


def test_the_same_name_in_two_namespaces_is_not_a_duplicate(tmp_path: Path):
    items = [node("n1"), pod("web-1", namespace="a"), pod("web-1", namespace="b")]
    assert run(str(write_list(tmp_path / "s.yaml", items))).exit_code == 0


def test_a_duplicate_node_names_both_places(tmp_path: Path):
    message = one_error(tmp_path, [node("n1"), node("n1")])
    assert message.endswith("Node n1 (document 1, items[1]): duplicate: the same Node is at "
                            f"{tmp_path / 's.yaml'} (document 1, items[0])")


def test_an_object_without_a_kind_in_a_plain_list_is_an_error(tmp_path: Path):
    kindless = pod("p")
    del kindless["kind"]
    assert "(document 1, items[1]) kind: is required" in one_error(tmp_path, [node("n1"), kindless])


def test_an_empty_file_and_an_empty_directory_are_alike(tmp_path: Path):
    empty_file = tmp_path / "empty.yaml"
    empty_file.write_text("")
    empty_dir = tmp_path / "dump"
    empty_dir.mkdir()
    for path, reason in ((empty_file, "holds no Kubernetes objects"), (empty_dir, "holds no .yaml, .yml or .json file")):
        result = run(str(path))
        assert result.exit_code == 2
        assert errors(result) == [f"error: {path}: {reason}"]


def test_a_directory_of_empty_files_is_bad_input_too(tmp_path: Path):
    (tmp_path / "a.yaml").write_text("---\n")
    result = run(str(tmp_path))
    assert result.exit_code == 2 and errors(result) == [f"error: {tmp_path}: holds no Kubernetes objects"]


@pytest.mark.parametrize("option", ["--output", "--explain"])
def test_an_output_path_that_cannot_be_written_fails_before_loading(tmp_path: Path, option: str):
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [1, 2\n")  # would be an error too, if it were read
    target = tmp_path / "no-such-dir" / "out.txt"
    result = run(str(broken), option, str(target))
    assert result.exit_code == 2
    assert errors(result) == [f"error: {target}: no such directory: {target.parent}"]


def test_an_output_path_that_is_a_directory_fails_before_loading(tmp_path: Path):
    result = run(str(tmp_path / "missing.yaml"), "--output", str(tmp_path))
    assert result.exit_code == 2
    assert "is a directory" in result.output and "no such file" not in result.output


def test_bad_input_on_stdin_is_named_stdin():
    result = CliRunner().invoke(cli, ["simulate", "-"], input="a: [1, 2\n", catch_exceptions=False)
    assert result.exit_code == 2
    [line] = errors(result)
    assert line.startswith("error: <stdin>: invalid YAML at line 1")


def test_an_empty_stdin_is_bad_input():
    result = CliRunner().invoke(cli, ["simulate", "-"], input="", catch_exceptions=False)
    assert result.exit_code == 2 and errors(result) == ["error: <stdin>: holds no Kubernetes objects"]
