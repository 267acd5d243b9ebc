"""yaml_stream: Lists are parsed item by item (in batches, by worker processes when large)
and give exactly what parsing the whole stream gives; errors keep the stream's lines."""

from __future__ import annotations

import pytest

from kubesched.cluster import yaml_parallel
from kubesched.cluster.yaml_documents import YAMLError, yaml_documents
from kubesched.cluster.yaml_lists import YAMLList, yaml_stream


def flattened(text: str) -> list[object]:
    out: list[object] = []
    for document in yaml_stream(text.encode()):
        if isinstance(document, YAMLList):
            assert isinstance(document.header, dict)
            out.append({**document.header, "items": list(document.items())})
        else:
            out.append(document)
    return out


CASES = {
    "a kubectl List": "apiVersion: v1\nitems:\n- kind: Pod\n  a: 1\n- kind: Node\n  b: |\n    x\n    - y\nkind: List\nmetadata: {}\n",
    "indented items": "apiVersion: v1\nitems:\n  - kind: Pod\n    a: 1\n\n  # c\n  - kind: Node\nkind: List\n",
    "several documents": "---\nkind: Pod\n---\nitems:\n- a\n- b\nkind: List\n---\n",
    "items that is not a sequence": "kind: Pod\nitems: 3\n",
    "a bare dash": "items:\n- a: 1\n  b: 2\n-\n  c: 3\n",
    "an empty List": "items: []\nkind: List\n",
    "a comment first": "# hi\nkind: Pod\n",
    "a key that is not an item": "items:\n- a\n-b: 1\n",
}


@pytest.mark.parametrize("case", CASES)
def test_documents_are_those_of_the_whole_stream(case: str) -> None:
    assert flattened(CASES[case]) == yaml_documents(CASES[case].encode())


@pytest.mark.parametrize("text", [
    "items:\n- a: 1\n  b: [\nkind: List\n",
    "items:\n  - a: 1\n  b: 2\n",
    "a: 1\n---\nitems:\n- x: 1\n   y: 2\n",
    "items:\n- a: 1\nkind: x\n- b: 2\n",
])
def test_an_error_is_reported_with_the_lines_of_the_whole_stream(text: str) -> None:
    with pytest.raises(YAMLError) as whole:
        yaml_documents(text.encode())
    with pytest.raises(YAMLError) as streamed:
        flattened(text)
    assert str(streamed.value) == str(whole.value)


def big_list(items: int, odd: dict[int, str]) -> str:
    lines = ["apiVersion: v1", "items:"]
    for i in range(items):
        value = odd.get(i, f"'{i}'")
        lines += ["- kind: Pod", "  metadata:", f"    name: pod-{i}", f"  value: {value}"]
    return "\n".join(lines + ["kind: List", ""])


@pytest.mark.parametrize("odd", [
    {},
    {5: ".inf", 3000: "1e999", 4100: "{a: 1e999}"},  # JSON cannot carry these: parsed by the loader itself
    {7: "'56e5871485'", 8: "sha256:abc1e123"},  # strings that merely look like numbers
])
def test_worker_processes_parse_a_large_list_exactly(monkeypatch: pytest.MonkeyPatch, odd: dict[int, str]) -> None:
    monkeypatch.setattr(yaml_parallel, "MIN_TEXT", 0)
    text = big_list(5000, odd)
    assert yaml_parallel.parallel_workers(len(text)) >= 1
    assert flattened(text) == yaml_documents(text.encode())


@pytest.mark.parametrize(("text", "exact"), [
    ("- a: '1'\n", True),
    ("- a: null\n  b: '2'\n", True),
    ("- a: .inf\n", False),
    ("- a: 1e999\n  b: null\n", False),
    ("- a: ~\n", False),  # a null written otherwise: the loader parses it, to be sure
    ("- a: nullable\n", False),
    ("- a: '56e5871485'\n", True),
])
def test_a_batch_is_handed_over_as_json_only_when_json_holds_it_exactly(text: str, exact: bool) -> None:
    yaml_parallel._text = text.encode()
    try:
        assert (yaml_parallel.batch_as_json(0, len(text)) is not None) == exact
    finally:
        yaml_parallel._text = b""
