"""JSONListReader: the items of a JSON List, read from a stream one at a time, are exactly
what parsing the whole document gives, however the text is laid out or cut into chunks."""

from __future__ import annotations

import io
import json

import orjson
import pytest

from kubesched.cluster.json_items import JSONListReader, ListError, NotAList

DOC = {
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {"resourceVersion": "", "x": [1, {"items": [3]}]},
    "items": [
        {"a": 'q"\\"}{[', "b": [{"c": "\\\\"}], "d": "]"},
        {"k": '\\\\\\"x]', "nested": {"items": [{"deep": True}]}},
        {},
    ],
}


def read(text: bytes, chunk: int) -> tuple[list[object], dict[str, object]]:
    reader = JSONListReader(io.BytesIO(text), chunk)
    items = list(reader.items())
    return items, reader.header()


LAYOUTS = {
    "compact": orjson.dumps(DOC),
    "indented by 2 (orjson)": orjson.dumps(DOC, option=orjson.OPT_INDENT_2),
    "indented by 4 (kubectl)": json.dumps(DOC, indent=4).encode(),
    "kind first (the API server)": json.dumps({**DOC, "kind": "PodList"}, indent=4).encode(),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
def test_items_and_header_are_those_of_the_whole_document(layout: str, chunk: int) -> None:
    text = LAYOUTS[layout]
    whole = orjson.loads(text)
    items, header = read(text, chunk)
    assert items == whole["items"]
    assert header == {**whole, "items": []}


def test_an_inner_line_at_the_items_indentation_does_not_cut_an_item() -> None:
    text = b'{"items": [\n    {"a": {"b": 1\n    },\n    "c": 2\n    },\n    {"d": 3\n    }\n], "kind": "List"}'
    for chunk in (5, 1000):
        assert read(text, chunk)[0] == [{"a": {"b": 1}, "c": 2}, {"d": 3}]


def test_the_keys_before_the_items_are_read_before_them() -> None:
    reader = JSONListReader(io.BytesIO(LAYOUTS["kind first (the API server)"]), 16)
    items = reader.items()
    next(items)
    assert reader.prefix_header()["kind"] == "PodList"


@pytest.mark.parametrize(("text", "message"), [
    (b'{"items": [1, 2]}', "expected nothing between items, found '1, 2'"),
    (b'{"items": [{}, {} {}]}', "before items[2]: expected , between items"),
    (b'{"items": [{},]}', "before items[1]: expected nothing"),
    (b'{"items": [{"a": tru}]}', "invalid JSON in items[0]"),
    (b'{"items": [{}', "the data ends inside items[1]"),
    (b'{"items": [\n  {},\n  {}\n  {}\n]}', "before items[2]: expected , between items"),
    (b'{"items": [[1]]}', "items[0] must be an object"),
])
@pytest.mark.parametrize("chunk", [3, 1000])
def test_a_list_that_is_not_valid_json_is_an_error_naming_the_item(text: bytes, message: str, chunk: int) -> None:
    with pytest.raises(ListError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read(text, chunk)


@pytest.mark.parametrize("text", [b'{"kind": "Pod", "spec": {"items": [1]}}', b'[{"a": 1}]', b'{"a": 1}', b'{"a": '])
def test_a_document_that_is_not_a_list_is_handed_back_whole(text: bytes) -> None:
    with pytest.raises(NotAList) as raised:
        read(text, 3)
    assert raised.value.text == text
