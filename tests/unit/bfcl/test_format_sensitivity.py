"""The format-sensitivity category against bfcl-eval's own code (docs/bfcl.md#format-sensitivity): the 5,200
entries and their request bodies (fs_record_requests.py), the verdicts on 10,646 synthetic answers
(tests/format_sensitivity_cases.py, fs_record_verdicts.py), the oracle, and the figures and leaderboard file
(fs_record_figures.py)."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import format_sensitivity_cases as fs_cases
from pytest_tooleval.errors import DataError
from pytest_tooleval.suites.bfcl.ast_rules import UNSUPPORTED
from pytest_tooleval.suites.bfcl.decode import MAX_ANSWER_CHARS
from pytest_tooleval.suites.bfcl.errors import DecodeError
from pytest_tooleval.suites.bfcl.format_sensitivity.check import check_output
from pytest_tooleval.suites.bfcl.format_sensitivity.configs import CONFIGS, DEFAULT, Config, parse_config
from pytest_tooleval.suites.bfcl.format_sensitivity.decode import decode_output, object_list
from pytest_tooleval.suites.bfcl.format_sensitivity.docs import function_docs
from pytest_tooleval.suites.bfcl.format_sensitivity.entries import Entry, load_entries, parse_entry_id
from pytest_tooleval.suites.bfcl.format_sensitivity.figures import (
    csv_text,
    leaderboard_rows,
    sensitivity,
    spread,
)
from pytest_tooleval.suites.bfcl.format_sensitivity.oracle import oracle_output
from pytest_tooleval.suites.bfcl.format_sensitivity.prompts import FormatPrompts, lift_format_prompts
from pytest_tooleval.suites.bfcl.format_sensitivity.request import entry_request
from pytest_tooleval.suites.bfcl.templates import Templates
from pytest_tooleval.suites.bfcl.upstream import load_format_prompts, load_pin, load_templates

HERE = Path(__file__).parent
REQUESTS = json.loads((HERE / "fs_request_digests.json").read_text(encoding="utf-8"))
VERDICTS = json.loads((HERE / "fs_verdicts.json").read_text(encoding="utf-8"))
FIGURES = json.loads((HERE / "fs_figures.json").read_text(encoding="utf-8"))


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


@pytest.fixture(scope="module")
def entries(bfcl_dir: Path) -> list[Entry]:
    return load_entries(bfcl_dir)


@pytest.fixture(scope="module")
def wheel_texts(bfcl_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Templates, FormatPrompts]:
    cache = tmp_path_factory.mktemp("cache")
    return load_templates(cache, True, wheel=bfcl_wheel), load_format_prompts(cache, True, wheel=bfcl_wheel)


# -- configurations and entries ----------------------------------------------------------------------------------


def test_the_configurations_are_bfcls_in_its_order() -> None:
    assert [config.name for config in CONFIGS] == REQUESTS["configs"]
    assert all(parse_config(config.name) == config for config in CONFIGS)
    assert DEFAULT in CONFIGS and len(set(CONFIGS)) == 26
    for wrong in (
        "",
        "ret_fmt=yaml&tool_call_tag=True&func_doc_fmt=json&prompt_fmt=plaintext&style=classic",
        CONFIGS[0].name + "&x=1",
        CONFIGS[0].name.replace("True", "true"),
    ):
        with pytest.raises(ValueError, match="not a format-sensitivity configuration"):
            parse_config(wrong)


def test_the_entries_are_bfcls_ids_order_and_answers(entries: list[Entry]) -> None:
    assert len(entries) == 5_200
    assert digest([entry.id for entry in entries]) == REQUESTS["ids_digest"]
    assert [entry.sample.id for entry in entries[::26]] == REQUESTS["questions"]
    # bfcl pairs each entry with a possible answer by position: ours, joined by id, is the one it pairs
    assert [entry.sample.id for entry in entries[::26]] == REQUESTS["answer_questions"]
    assert all(entry.sample.ground_truth for entry in entries)
    index, config, question = parse_entry_id(entries[1_234].id)
    assert (index, config, question) == (1_234, entries[1_234].config, entries[1_234].sample.id)
    for wrong in ("simple_python_0", f"format_sensitivity_x:{DEFAULT.name}:a", f"format_sensitivity_1:{DEFAULT.name}"):
        with pytest.raises(ValueError):
            parse_entry_id(wrong)


def test_a_listed_question_missing_from_its_file_is_a_data_error(bfcl_dir: Path, tmp_path: Path) -> None:
    for name in ("BFCL_v4_simple_python.json", "possible_answer"):
        (tmp_path / name).symlink_to(bfcl_dir / name)
    (tmp_path / "BFCL_v4_format_sensitivity.json").write_text(json.dumps({"simple_python": ["simple_python_9999"]}))
    with pytest.raises(DataError, match="simple_python_9999"):
        load_entries(tmp_path)
    (tmp_path / "BFCL_v4_format_sensitivity.json").write_text(json.dumps({"simple_python": ["simple_python_3"]}))
    assert [entry.id.split(":")[0] for entry in load_entries(tmp_path)][-1] == "format_sensitivity_25"


# -- the request -------------------------------------------------------------------------------------------------


def test_the_lifted_texts_are_the_pinned_ones_and_come_back_from_the_cache(
    bfcl_wheel: Path, tmp_path: Path, wheel_texts: tuple[Templates, FormatPrompts]
) -> None:
    prompts = wheel_texts[1]
    assert prompts.sha256() == load_pin().format_prompts_sha256
    load_format_prompts(tmp_path, True, wheel=bfcl_wheel)  # writes the cache file
    assert load_format_prompts(tmp_path, True) == prompts  # offline, from it alone
    assert FormatPrompts.from_content(prompts.content()) == prompts
    with pytest.raises(DataError, match="malformed"):
        FormatPrompts.from_content({**prompts.content(), "layouts": {"plaintext": "{persona}"}})
    with pytest.raises(DataError, match="not found"):
        lift_format_prompts({"bfcl_eval/constants/default_prompts.py": "OUTPUT_FORMAT_MAPPING = 1\n"})


def test_every_request_body_is_the_one_bfcl_sends(
    entries: list[Entry], wheel_texts: tuple[Templates, FormatPrompts]
) -> None:
    templates, prompts = wheel_texts
    assert REQUESTS["sampling"] == [{"store": False, "temperature": 0.001}]
    for entry, recorded in zip(entries, REQUESTS["messages"], strict=True):
        messages = entry_request(templates, prompts, entry).messages
        assert digest(messages) == recorded, (
            f"{entry.id}: our messages differ from bfcl's:\n{json.dumps(messages, indent=1, ensure_ascii=False)[:8000]}"
        )


OWN_PROMPTS = FormatPrompts.from_content(
    {
        "call_formats": {fmt: f"<{fmt}>" for fmt in ("python", "json", "verbose_xml", "concise_xml")},
        "type_notes": {"python": "", "json": "", "verbose_xml": "[types]", "concise_xml": "[types]"},
        "styles": {
            style: {
                "persona": f"[{style}]",
                "task": "[task]",
                "tool_call_no_tag": "[no tag {output_format}|{param_types}]",
                "tool_call_with_tag": "[tag {output_format}|{param_types}]",
                "multiturn_behavior": "[turns]",
                "available_tools": "[tools in {format}:\n{functions}]",
            }
            for style in ("classic", "experimental")
        },
        "layouts": {
            "plaintext": "{persona}{task}|{tool_call_format}|{multiturn_behavior}|{available_tools}",
            "markdown": "# {persona}\n{task}\n{tool_call_format}\n{multiturn_behavior}\n{available_tools}",
        },
    }
)
DOC: dict[str, Any] = {
    "name": "shop.buy",
    "description": "Buy {things}.",
    "parameters": {
        "type": "dict",
        "properties": {
            "item": {"type": "string", "description": "What.", "enum": ["a", "b"]},
            "sizes": {"type": "array", "items": {"type": "integer"}, "description": "How big.", "default": [1, 2]},
            "where": {
                "type": "dict",
                "description": "Place.",
                "properties": {"city": {"type": "string", "description": "City."}},
            },
        },
        "required": ["item"],
    },
}


def test_the_system_prompt_takes_the_configurations_texts_and_the_docs_as_a_value() -> None:
    prompt = OWN_PROMPTS.system_prompt(Config("verbose_xml", True, "json"), [DOC])
    assert prompt.startswith("[classic][task]|[tag <verbose_xml>|[types]]|[turns]|[tools in json:\n[\n    {")
    assert "Buy {things}." in prompt  # braces in the docs are not read as fields
    markdown = OWN_PROMPTS.system_prompt(
        Config("python", False, "python", layout="markdown", style="experimental"), [DOC]
    )
    assert markdown.startswith("# [experimental]\n[task]\n[no tag <python>|]\n[turns]\n[tools in python:\n# Function:")


def test_the_docs_in_xml_and_python_are_in_bfcls_layout() -> None:
    xml = function_docs([DOC, {**DOC, "name": "b", "parameters": {"properties": {}}}], "xml")
    assert xml.split("\n")[:8] == [
        '<function name="shop.buy">',
        "  <desc>Buy {things}.</desc>",
        "  <params>",
        '    <param name="item" type="string" required="true">',
        "      <desc>What. Enum values: ['a', 'b'].</desc>",
        "    </param>",
        '    <param name="sizes" type="array[integer]" required="false" default="[1 2]">',  # every comma dropped
        "      <desc>How big.</desc>",
    ]
    assert '        <param name="city" type="string" required="true">' in xml  # no inner required list: all
    assert xml.endswith(
        '</function>\n\n<function name="b">\n  <desc>Buy {things}.</desc>\n  <params>\n  </params>\n</function>\n'
    )
    python = function_docs([DOC, DOC], "python")
    assert python.startswith(
        '# Function: shop.buy\n    """\n    Buy {things}.\n\n    Args:\n'
        "        item (str): What. Enum values: ['a', 'b'].\n"
        "        sizes (list[int], default=[1, 2]): How big.\n"
        "        where (dict): Place.\n            city (str): City.\n" + '    """\n' + "\n" * 5 + "#"
    )
    assert python.endswith('    """\n\n\n\n')


def test_the_request_hints_each_description_twice_and_keeps_a_system_text(
    entries: list[Entry], wheel_texts: tuple[Templates, FormatPrompts]
) -> None:
    templates = wheel_texts[0]
    entry = entries[0]
    question: dict[str, Any] = {
        **entry.sample.entry,
        "question": [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]],
    }
    own = Entry(entry.index, DEFAULT, type(entry.sample)(entry.sample.category, 0, question, entry.sample.ground_truth))
    messages = entry_request(templates, OWN_PROMPTS, own).messages
    assert isinstance(messages, list) and len(messages) == 2
    system = messages[0]
    assert isinstance(system, dict) and str(system["content"]).endswith("]\n\nBe brief.")
    hint = templates.language_hints["python"]
    assert str(system["content"]).count(hint + hint) == len(entry.sample.functions)
    assert entry.sample.entry["question"] != question["question"]  # the sample is left as it was


# -- decoding and checking ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cases(bfcl_dir: Path) -> list[tuple[str, int, Any]]:
    return fs_cases.cases(bfcl_dir)


def test_every_verdict_is_upstreams(bfcl_dir: Path, entries: list[Entry], cases: list[tuple[str, int, Any]]) -> None:
    assert [entry.id for entry in fs_cases.entries(bfcl_dir)] == [entry.id for entry in entries]
    assert len(cases) == VERDICTS["cases"] and fs_cases.outputs_digest(cases) == VERDICTS["answers_digest"], (
        "format_sensitivity_cases.py changed: record again (fs_record_verdicts.py)"
    )
    seen: Counter[tuple[str, str]] = Counter()
    for (key, index, answer), code in zip(cases, VERDICTS["verdicts"], strict=True):
        recorded = VERDICTS["labels"][ord(code) - ord("A")]
        expected = UNSUPPORTED if recorded.startswith("crash:") else recorded
        verdict = check_output(entries[index], answer)
        ours = "valid" if verdict.valid else verdict.error_type
        assert ours == expected, f"{key} ({entries[index].id}): ours {ours}, bfcl's {recorded}; answer {answer!r:.600}"
        seen[(entries[index].config.return_format, expected.split(":")[0])] += 1
    # every return format meets answers that are right, that do not decode, and that the checker rejects
    for fmt in ("python", "json", "verbose_xml", "concise_xml"):
        assert seen[(fmt, "valid")] > 500 and seen[(fmt, "ast_decoder")] > 100, seen
        assert (
            sum(count for (form, kind), count in seen.items() if form == fmt and kind not in ("valid", "ast_decoder"))
            > 200
        ), seen


def test_the_json_scan_finds_what_bfcls_pattern_finds() -> None:
    pattern = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice("[]{},  \nx\u2003") for _ in range(rng.randrange(16)))
        found = pattern.search(text)
        assert object_list(text) == (found.group(0) if found else None), repr(text)
    # the pattern backtracks through 2**n splits of this; the scan reads it once
    assert object_list("[{}" + ", {}" * 100_000 + " x") is None
    assert object_list("x [ {a}, {b} ] [{c}]") == "[ {a}, {b} ]"


def test_answers_that_are_no_text_or_too_long_do_not_decode() -> None:
    for answer in (None, 5, ["[f()]"], "[f(a='" + "x" * MAX_ANSWER_CHARS + "')]"):
        with pytest.raises(DecodeError):
            decode_output(answer, DEFAULT)
    assert decode_output("<TOOLCALL>\n[f(a=1)]\n</TOOLCALL>", Config("python", True, "xml")) == [{"f": {"a": 1}}]
    assert decode_output(
        'x <functions><function name="f"><param name="a" type="tuple">(1, "b")</param></function></functions>',
        Config("concise_xml", False, "xml"),
    ) == [{"f": {"a": (1, "b")}}]


# -- the oracle --------------------------------------------------------------------------------------------------


def test_the_oracle_writes_the_gold_answers_whose_upstream_verdicts_are_recorded(
    entries: list[Entry], cases: list[tuple[str, int, Any]]
) -> None:
    gold = {
        index: (answer, code)
        for (key, index, answer), code in zip(cases, VERDICTS["verdicts"], strict=True)
        if key.startswith("gold/")
    }
    failing = set()
    for entry in entries:
        answer, code = gold[entry.index]
        assert oracle_output(entry) == answer, entry.id
        if VERDICTS["labels"][ord(code) - ord("A")] != "valid":
            failing.add((entry.sample.id, entry.config.return_format))
            assert not check_output(entry, answer).valid
    # bfcl's JSON pattern ends at the first list of objects it meets: arguments holding one never decode whole
    assert failing == {("simple_python_96", "json")}


# -- the figures -------------------------------------------------------------------------------------------------


def test_the_figures_are_bfcls() -> None:
    sets = fs_cases.score_sets()
    assert [name for name, _ in sets] == list(FIGURES["headers"])
    figures = []
    for name, results in sets:
        ours = sensitivity(results)
        header = FIGURES["headers"][name]
        assert (ours.accuracy, ours.correct, ours.total) == (
            header["accuracy"],
            header["correct_count"],
            header["total_count"],
        ), name
        assert (ours.max_delta, ours.variance, ours.std) == (
            header["accuracy_max_delta"],
            header["accuracy_variance"],
            header["accuracy_std"],
        ), name
        recorded = {key: value for key, value in header.items() if "=" in key}
        assert list(ours.configs) == list(recorded), name  # bfcl's order: first appearance
        assert {
            key: {"accuracy": score.accuracy, "correct_count": score.correct, "total_count": score.total}
            for key, score in ours.configs.items()
        } == recorded, name
        figures.append(ours)
    models = FIGURES["models"]
    rows = leaderboard_rows([*zip(models, figures, strict=False), (models[-1], None)])
    assert csv_text(rows) == FIGURES["csv"]


def test_the_spread_is_the_sample_standard_deviation() -> None:
    assert spread([0.5]) == (0.0, 0.0, 0.0)
    assert spread([0.5, 1.0]) == (50.0, 1250.0, 35.36)  # a population deviation would be 25.0
    with pytest.raises(ValueError, match="no format-sensitivity entry"):
        sensitivity([])
