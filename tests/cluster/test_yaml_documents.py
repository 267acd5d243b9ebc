"""YAML streams as kubesched reads cluster dumps: documents, errors, and the schema's choices."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.cluster.yaml_documents import YAMLError, yaml_documents

ROOT = Path(__file__).resolve().parents[2]


def test_a_single_document_is_one_document() -> None:
    assert yaml_documents(b"kind: Node\nmetadata: {name: n1}\n") == [{"kind": "Node", "metadata": {"name": "n1"}}]


def test_a_leading_separator_and_comments_still_make_one_document() -> None:
    assert yaml_documents(b"# dump\n---\nkind: Pod\n") == [{"kind": "Pod"}]


def test_separated_documents_are_each_a_document() -> None:
    assert yaml_documents(b"kind: Node\n---\nkind: Pod\n") == [{"kind": "Node"}, {"kind": "Pod"}]


def test_a_document_that_is_a_list_stays_one_document() -> None:
    assert yaml_documents(b"- kind: Node\n- kind: Pod\n") == [[{"kind": "Node"}, {"kind": "Pod"}]]


def test_empty_documents_are_none() -> None:
    assert yaml_documents(b"kind: Node\n---\n") == [{"kind": "Node"}, None]


def test_timestamps_stay_strings_as_in_json() -> None:
    doc = yaml_documents(b"metadata:\n  creationTimestamp: 2026-11-01T08:00:00Z\n")[0]
    assert doc == {"metadata": {"creationTimestamp": "2026-11-01T08:00:00Z"}}


def test_a_syntax_error_names_line_and_column_in_one_line() -> None:
    with pytest.raises(YAMLError) as err:
        yaml_documents(b"kind: Node\nmetadata: [1, 2\n")
    message = str(err.value)
    assert message.startswith("invalid YAML at line 2, column ")
    assert "\n" not in message


def test_duplicate_keys_are_an_error_as_kubectl_makes_them() -> None:
    with pytest.raises(YAMLError, match="duplicate"):
        yaml_documents(b"kind: Node\nkind: Pod\n")


def test_text_that_is_not_utf8_is_one_line() -> None:
    with pytest.raises(YAMLError, match="not UTF-8"):
        yaml_documents(b"kind: \xff\n")


@pytest.mark.parametrize(("text", "value"), [
    (b"v: yes\n", "yes"),          # YAML 1.1 (PyYAML) reads true; kubectl would have quoted it
    (b'v: "0755"\n', "0755"),
    (b"v: ~\n", None),
    (b"v: 1.5\n", 1.5),
    (b"v: true\n", True),
    (b"v: !!str 123\n", "123"),
])
def test_scalars_follow_the_yaml_1_2_core_schema(text: bytes, value: object) -> None:
    assert yaml_documents(text) == [{"v": value}]


def test_the_demo_cluster_reads_as_pyyaml_reads_it() -> None:
    text = (ROOT / "examples" / "demo-cluster.yaml").read_bytes()
    expected = yaml.safe_load(text.replace(b"creationTimestamp: ", b"creationTimestamp: !!str "))
    assert yaml_documents(text) == [expected]
