"""BFCL requests: the rules, on texts of our own, and the bodies, against digests of bfcl's own (bfcl §2.4)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from json_narrow import as_list, as_object
from pytest_tooleval.suites.bfcl.data import language_of
from pytest_tooleval.suites.bfcl.requests import (
    UPSTREAM_SAMPLING,
    UPSTREAM_TEMPERATURE,
    fc_name_map,
    fc_request,
    prompt_request,
    upstream_sampling,
)
from pytest_tooleval.suites.bfcl.templates import Templates
from pytest_tooleval.suites.bfcl.upstream import WHEEL_ENV, load_templates

DIGESTS = json.loads(Path(__file__).with_name("request_digests.json").read_text(encoding="utf-8"))
SAMPLES = DIGESTS["samples"]

# Texts of our own in bfcl's shape: the rules are tested without the wheel.
OWN = Templates(
    system_before="SYSTEM-HEAD<",
    system_after=">SYSTEM-TAIL",
    doc_format="json",
    language_hints={"python": " [py]", "java": " [java]", "javascript": " [js]"},
    java_notes={"any": (" [any java]",), "typed": (" [java ", "]"), "items": (" [items ", "]")},
    javascript_notes={
        "any": (" [any js]",),
        "typed": (" [js ", "]"),
        "items": (" [items ", "]"),
        "schema": (" [schema ", "]"),
    },
    float_note=" [float]",
    openapi_types={
        "integer": "integer",
        "float": "number",
        "string": "string",
        "dict": "object",
        "tuple": "array",
        "array": "array",
        "any": "string",
        "boolean": "boolean",
    },
    held_out_fc="[more]",
    held_out_prompting=("", "\n[more]"),
)


def entry(functions: list[dict[str, Any]], messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": "x_0", "question": [messages or [{"role": "user", "content": "hi"}]], "function": functions}


def doc(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Does it.",
        "parameters": {"type": "dict", "properties": properties, "required": list(properties)},
    }


# ------------------------------------------------------------------------------------------ the rules


def test_prompt_mode_puts_the_docs_as_json_in_a_new_system_message() -> None:
    sample = entry([doc("math.add", {"a": {"type": "integer", "description": "A."}})])
    request = prompt_request(OWN, "simple_python", sample)
    system = as_object(as_list(request.messages)[0])
    assert system["role"] == "system" and as_list(request.messages)[1:] == sample["question"][0]
    docs = json.loads(system["content"].removeprefix("SYSTEM-HEAD<").removesuffix(">SYSTEM-TAIL"))
    assert docs[0]["description"] == "Does it. [py]"
    assert docs[0]["name"] == "math.add"  # prompt mode keeps the dot
    assert "\n    {" in system["content"]  # indented by four, as bfcl's json.dumps(indent=4)
    assert request.tools is None


def test_prompt_mode_puts_its_system_prompt_before_the_questions_own() -> None:
    sample = entry([], [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}])
    request = prompt_request(OWN, "live_irrelevance", sample)
    assert len(as_list(request.messages)) == 2
    assert as_object(as_list(request.messages)[0])["content"] == "SYSTEM-HEAD<[]>SYSTEM-TAIL\n\nBe terse."


def test_docs_are_ascii_escaped_as_bfcl_sends_them() -> None:
    sample = entry([doc("f", {"city": {"type": "string", "description": "Ciudad, p. ej. Bogotá"}})])
    content = as_object(as_list(prompt_request(OWN, "live_simple", sample).messages)[0])["content"]
    assert "Bogot\\u00e1" in content and "Bogotá" not in content


def test_java_parameters_become_described_strings() -> None:
    sample = entry(
        [
            doc(
                "Cls.m",
                {
                    "xs": {"type": "ArrayList", "description": "Xs.", "items": {"type": "String"}},
                    "o": {"type": "any", "description": "O."},
                    "n": {"type": "long", "description": "N."},
                },
            )
        ]
    )
    for request in (prompt_request(OWN, "simple_java", sample), fc_request(OWN, "simple_java", sample)):
        if request.tools is None:
            content = as_object(as_list(request.messages)[0])["content"]
            function = json.loads(content[len("SYSTEM-HEAD<") : -len(">SYSTEM-TAIL")])[0]
        else:
            function = as_object(request.tools[0]["function"])
        properties = function["parameters"]["properties"]
        assert function["description"] == "Does it. [java]"
        assert properties["xs"] == {"type": "string", "description": "Xs. [java ArrayList] [items String]"}
        assert properties["o"] == {"type": "string", "description": "O. [any java]"}
        assert properties["n"] == {"type": "string", "description": "N. [java long]"}


def test_javascript_dicts_carry_their_schema_in_the_description() -> None:
    schema = {"k": {"type": "integer", "description": "K."}}
    sample = entry(
        [
            doc(
                "f",
                {
                    "d": {"type": "dict", "description": "D.", "properties": schema},
                    "xs": {"type": "array", "description": "Xs.", "items": {"type": "integer"}},
                },
            )
        ]
    )
    tool = fc_request(OWN, "simple_javascript", sample).tools
    assert tool is not None
    properties = as_object(tool[0]["function"])["parameters"]["properties"]
    assert properties["d"] == {"type": "string", "description": f"D. [js dict] [schema {json.dumps(schema)}]"}
    assert properties["xs"] == {"type": "string", "description": "Xs. [js array] [items integer]"}


def test_fc_mode_renames_and_maps_types_as_deep_as_bfcl_goes() -> None:
    sample = entry(
        [
            doc(
                "geo.distance",
                {
                    "ratio": {"type": "float", "description": "R."},
                    "point": {"type": "tuple", "description": "P.", "items": {"type": "float"}},
                    "grid": {
                        "type": "array",
                        "description": "G.",
                        "items": {"type": "array", "items": {"type": "integer"}},
                    },
                    "rows": {
                        "type": "array",
                        "description": "Rs.",
                        "items": {"type": "dict", "properties": {"v": {"type": "float", "description": "V."}}},
                    },
                    "opts": {
                        "type": "dict",
                        "description": "O.",
                        "properties": {"deep": {"type": "any", "description": "D."}},
                    },
                    "odd": {"type": "Quaternion", "description": "Q."},
                    "bare": {"description": "No type."},
                },
            )
        ]
    )
    request = fc_request(OWN, "simple_python", sample)
    assert request.messages == sample["question"][0]
    assert request.tools is not None
    tool = request.tools[0]
    assert tool["type"] == "function"
    function = as_object(tool["function"])
    assert function["name"] == "geo_distance"
    assert function["parameters"]["type"] == "object"
    properties = function["parameters"]["properties"]
    assert properties["ratio"] == {"type": "number", "format": "float", "description": "R. [float]"}
    assert properties["point"]["type"] == "array" and properties["point"]["items"] == {"type": "number"}
    assert properties["grid"]["items"] == {"type": "array", "items": {"type": "integer"}}
    assert properties["rows"]["items"]["type"] == "object"
    assert properties["rows"]["items"]["properties"]["v"]["format"] == "float"
    assert properties["opts"]["properties"]["deep"]["type"] == "string"
    assert properties["odd"]["type"] == "string"  # a type bfcl does not know is sent as a string
    assert properties["bare"]["type"] == "string"


def test_fc_mode_without_functions_sends_no_tools() -> None:
    assert fc_request(OWN, "live_irrelevance", entry([])).tools is None


def test_the_entry_is_left_as_it_was() -> None:
    sample = entry(
        [doc("a.b", {"x": {"type": "float", "description": "X."}})],
        [{"role": "system", "content": "S."}, {"role": "user", "content": "U."}],
    )
    before = copy.deepcopy(sample)
    prompt_request(OWN, "simple_python", sample)
    fc_request(OWN, "simple_python", sample)
    assert sample == before


def test_the_reverse_name_map_gives_back_the_dotted_names() -> None:
    sample = entry([doc("a.b.c", {}), doc("plain", {})])
    assert fc_name_map(sample) == {"a_b_c": "a.b.c", "plain": "plain"}


def test_templates_survive_their_file_and_hash_by_content() -> None:
    again = Templates.from_content(json.loads(json.dumps(OWN.content())))
    assert again == OWN and hash(again) == hash(OWN) and again.sha256() == OWN.sha256()


def test_category_languages_and_sampling() -> None:
    assert [language_of(name) for name in ("simple_java", "simple_javascript", "live_simple", "multiple")] == [
        "java",
        "javascript",
        "python",
        "python",
    ]
    assert UPSTREAM_TEMPERATURE == 0.001
    assert upstream_sampling() == UPSTREAM_SAMPLING == {"temperature": 0.001, "store": False}
    assert upstream_sampling() is not UPSTREAM_SAMPLING


# ------------------------------------------------------------------------------------------ bfcl's own bodies


@pytest.fixture(scope="module")
def wheel_templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    wheel = os.environ.get(WHEEL_ENV)
    if not wheel:
        pytest.skip(
            f"needs the upstream bfcl-eval 2026.3.23 wheel for its request texts: set {WHEEL_ENV} "
            "(pip download --no-deps bfcl-eval==2026.3.23)"
        )
    return load_templates(tmp_path_factory.mktemp("cache"), True, wheel=Path(wheel))


_entries: dict[tuple[Path, str], dict[str, dict[str, Any]]] = {}


def question(folder: Path, category: str, sample_id: str) -> dict[str, Any]:
    key = (folder, category)
    if key not in _entries:
        lines = (folder / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
        _entries[key] = {row["id"]: row for row in map(json.loads, lines)}
    return _entries[key][sample_id]


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("sample", SAMPLES, ids=[f"{row['id']}-{row['mode']}" for row in SAMPLES])
def test_our_body_matches_bfcls_own(sample: dict[str, Any], bfcl_dir: Path, wheel_templates: Templates) -> None:
    compose = prompt_request if sample["mode"] == "prompt" else fc_request
    request = compose(wheel_templates, sample["category"], question(bfcl_dir, sample["category"], sample["id"]))
    ours = {"messages": request.messages, "tools": request.tools, "sampling": upstream_sampling()}
    differ = [part for part in ("messages", "tools", "sampling") if digest(ours[part]) != sample[part]]
    shown = "\n".join(
        f"--- our {part} of {sample['id']} ({sample['mode']} mode), whose digest differs from "
        f"bfcl's:\n{json.dumps(ours[part], indent=1, ensure_ascii=False)[:6000]}"
        for part in differ
    )
    assert not differ, shown


def test_every_category_and_mode_is_compared() -> None:
    covered = {(row["category"], row["mode"]) for row in SAMPLES}
    categories = {row["category"] for row in SAMPLES}
    assert len(categories) == 13
    assert covered == {(category, mode) for category in categories for mode in ("prompt", "fc")}
