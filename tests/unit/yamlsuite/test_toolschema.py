"""A tool's schema checked at load: references resolved locally (never fetched), loops refused, patterns that can
run; and the scorer's validator, which follows the same rules."""

from __future__ import annotations

import http.server
import threading
from typing import Any

import pytest

from pytest_tooleval.suites.yamlsuite.scoring import Call, check
from pytest_tooleval.suites.yamlsuite.spec import Expectation, ExpectedCall, ToolSpec
from pytest_tooleval.suites.yamlsuite.toolschema import problem


def tool(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


SOUND = {
    "a local definition": tool({"x": {"$ref": "#/$defs/word"}}, **{"$defs": {"word": {"type": "string"}}}),
    "a tree through items": tool(
        {"x": {"$ref": "#/$defs/tree"}},
        **{
            "$defs": {
                "tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}
            }
        },
    ),
    "the whole schema, one level in": tool({"child": {"$ref": "#"}}),
    "an anchor": tool({"x": {"$ref": "#word"}}, **{"$defs": {"w": {"$anchor": "word", "type": "string"}}}),
    "under an $id": {
        "$id": "https://example.com/note.json",
        **tool({"x": {"$ref": "#/$defs/w"}}),
        "$defs": {"w": {"type": "string"}},
    },
    "a meta-schema jsonschema ships": tool({"x": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}),
    "a chain that ends": tool(
        {"x": {"$ref": "#/$defs/a"}}, **{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}}
    ),
    "patterns RE2 runs": tool(
        {"x": {"type": "string", "pattern": r"^\d{4}-\d{2}$"}}, patternProperties={r"^x_\w+$": {}}
    ),
}


@pytest.mark.parametrize("schema", SOUND.values(), ids=SOUND.keys())
def test_a_sound_schema_passes(schema: dict[str, Any]) -> None:
    assert problem(schema) is None


FAULTY = {
    "two definitions": (
        tool({"x": {"$ref": "#/$defs/a"}}, **{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
        ("$defs", "a", "$ref"),
        "the references loop (#/$defs/a -> #/$defs/b) without going into "
        "the arguments: validating a call would never end",
    ),
    "itself, in allOf": (tool({}, allOf=[{"$ref": "#"}]), ("allOf", 0, "$ref"), "the references loop (#) "),
    "itself, in an anyOf branch": (
        tool({"x": {"anyOf": [{"type": "string"}, {"$ref": "#/properties/x"}]}}),
        ("properties", "x", "anyOf", 1, "$ref"),
        "the references loop (#/properties/x) ",
    ),
    "through not and then": (
        tool(
            {"x": {"$ref": "#/$defs/a"}},
            **{"$defs": {"a": {"not": {"$ref": "#/$defs/b"}}, "b": {"if": {}, "then": {"$ref": "#/$defs/a"}}}},
        ),
        ("$defs", "a", "not", "$ref"),
        "the references loop (#/$defs/a -> #/$defs/b) ",
    ),
    "a remote reference": (
        tool({"x": {"$ref": "http://127.0.0.1:9/text.json"}}),
        ("properties", "x", "$ref"),
        "$ref 'http://127.0.0.1:9/text.json' is not in the tool's schema: references are resolved "
        "within the file and never fetched",
    ),
    "a file beside it": (
        tool({"x": {"$ref": "text.json#/x"}}),
        ("properties", "x", "$ref"),
        "$ref 'text.json#/x' is not in the tool's schema",
    ),
    "relative to a remote $id": (
        {"$id": "https://example.com/t/note.json", **tool({"x": {"$ref": "text.json"}})},
        ("properties", "x", "$ref"),
        "$ref 'text.json' is not in the tool's schema",
    ),
    "a missing definition": (
        tool({"x": {"$ref": "#/$defs/nope"}}),
        ("properties", "x", "$ref"),
        "$ref '#/$defs/nope' points to nothing in the tool's schema",
    ),
    "a missing anchor": (
        tool({"x": {"$dynamicRef": "#meta"}}),
        ("properties", "x", "$dynamicRef"),
        "$dynamicRef '#meta' points to nothing in the tool's schema",
    ),
    "not a schema": (
        tool({"x": {"$ref": "#/required"}}, required=["x"]),
        ("properties", "x", "$ref"),
        "$ref '#/required' points to a value that is not a schema",
    ),
    "a backreference": (
        tool({"x": {"type": "string", "pattern": r"(a)\1"}}),
        ("properties", "x", "pattern"),
        "not a valid regular expression (RE2 cannot run it: invalid escape sequence: \\1;",
    ),
    "a lookahead key": (
        tool({}, patternProperties={"^(?=x)": {}}),
        ("patternProperties", "^(?=x)"),
        "not a valid regular expression (RE2 cannot run it: invalid perl operator: (?=;",
    ),
    "unevaluated beside patterns": (
        tool({}, patternProperties={"^x": {}}, unevaluatedProperties=False),
        ("unevaluatedProperties",),
        "unevaluatedProperties together with patternProperties is not supported",
    ),
}


@pytest.mark.parametrize(("schema", "place", "message"), FAULTY.values(), ids=FAULTY.keys())
def test_a_faulty_schema_is_named_at_its_place(schema: dict[str, Any], place: tuple[Any, ...], message: str) -> None:
    found = problem(schema)
    assert found is not None
    assert found[0] == place and found[1].startswith(message), found


def test_a_long_chain_and_a_deep_schema_cost_no_recursion() -> None:
    count = 20_000  # far past Python's recursion limit
    chain = {f"d{number}": {"$ref": f"#/$defs/d{number + 1}"} for number in range(count)}
    chain[f"d{count}"] = {"$ref": "#/$defs/d0"}
    found = problem(tool({"x": {"$ref": "#/$defs/d0"}}, **{"$defs": chain}))
    assert found is not None and found[1].startswith("the references loop (#/$defs/d")
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(count):
        deep = {"type": "object", "properties": {"x": deep}}
    assert problem(deep) is None


def test_the_scorer_never_fetches_a_reference() -> None:
    """Should a remote reference get past the loader, validating a call fails it as unresolvable: the server the
    reference names (which would make the call pass) sees no request."""
    requests = []

    class Schema(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Schema) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/text.json"
        remote = ToolSpec("note", "", tool({"text": {"$ref": url}}))
        problems = check(
            Expectation(calls=(ExpectedCall("note", {}, partial=True),)),
            [Call("note", {"text": "hi"})],
            "",
            {"note": remote},
        )
        server.shutdown()
    assert requests == []
    [line] = problems
    assert line.startswith("call 1 (note): its arguments could not be checked against the tool's schema: "), line
