"""Loading the ToolAlpaca evaluation files: counts, ids, the pin, credentials, errors naming file and position."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _toolalpaca import toy_case, toy_record

from json_narrow import as_object
from pytest_tooleval.data.download import canonical_sha256
from pytest_tooleval.errors import DataError, ToolevalUsageError
from pytest_tooleval.suites.toolalpaca import data
from pytest_tooleval.suites.toolalpaca.agent import agent_input
from pytest_tooleval.suites.toolalpaca.constants import SUBSET_FILES
from upstream_data import prepared_manifest


def test_subsets_have_upstream_counts_and_stable_ids(toolalpaca_dir: Path) -> None:
    simulated = data.load_subset(toolalpaca_dir, "simulated")
    real = data.load_subset(toolalpaca_dir, "real")
    assert (len(simulated), len(real)) == (100, 114)
    assert sum(len(case.gold) for case in simulated) == 154
    assert sum(len(case.gold) for case in real) == 143
    ids = [case.test_id for case in simulated + real]
    assert len(set(ids)) == len(ids)
    assert "simulated-AbuseIPDB-3" in ids
    assert "simulated-A_Biblia_Digital-0" in ids  # folded to ASCII so -k works without escapes
    by_id = {case.test_id: case for case in simulated + real}
    assert by_id["simulated-AbuseIPDB-3"].instruction.startswith('"Can you provide me with the total number')
    assert by_id["simulated-Amethyste-0"].api_name == "Améthyste"
    undocumented = [case.index for case in real if (case.subset, case.api.name, case.index) in data.UNDOCUMENTED_GOLD]
    assert undocumented == [5, 6, 7, 8, 9, 10]  # all AviationAPI's


def test_specs_are_resolved_and_tools_listed_in_file_order(toolalpaca_dir: Path) -> None:
    superset = next(c for c in data.load_subset(toolalpaca_dir, "simulated") if c.api_name == "Apache Superset").api
    body = as_object(superset.spec["paths"])["/createDashboard"]["post"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    assert "$ref" not in schema and "properties" in schema
    assert '"$ref"' in superset.documentation_for_simulator  # the simulator sees the spec as written
    cataas = next(c for c in data.load_subset(toolalpaca_dir, "real") if c.api_name == "Cataas").api
    assert list(cataas.functions)[-3:] == ["api", "tags", "count"]  # upstream makes every projection key a tool
    assert cataas.uses_retrieval and cataas.server_url == "https://cataas.com/"


def test_pin_matches_the_prepared_data(toolalpaca_dir: Path) -> None:
    pinned = json.loads(data.PIN_FILE.read_text(encoding="utf-8"))
    manifest = prepared_manifest(toolalpaca_dir)
    assert pinned["commit"] == manifest["commit"] == "189069998d64a7baf1b4a1c3c4b2e75eb9d05532"
    assert pinned["files"] == manifest["files"]
    assert pinned["commit"] in pinned["url"]
    prompts = json.loads((toolalpaca_dir / "prompts.json").read_text(encoding="utf-8"))
    assert canonical_sha256(prompts) == pinned["prompts_sha256"]
    assert {path: list(names) for path, names in prompts.items()} == pinned["prompt_constants"]
    pin = data.load_pin()
    assert (pin.name, pin.files) == ("toolalpaca", manifest["files"])


def test_prompts_come_from_the_data_folder(toolalpaca_dir: Path) -> None:
    prompts = data.load_prompts(toolalpaca_dir)
    assert prompts.agent.suffix.endswith("ASSISTANT Thought:{agent_scratchpad}")
    assert "{tool_names}" in prompts.agent.format_instructions
    assert "${solution}" in prompts.evaluation and "${Request}" in prompts.simulator
    # lifted with ast from upstream agent/tools.py, and equal to what the pin says the download lifts
    assert set(prompts.helper_descriptions) == {"getDetails", "retrievalDataFromFile"}
    assert "getDetails" in prompts.helper_descriptions["getDetails"]
    pinned = json.loads(data.PIN_FILE.read_text(encoding="utf-8"))["helper_tool_descriptions"]
    assert canonical_sha256({pinned["file"]: prompts.helper_descriptions}) == pinned["sha256"]


def test_locate_accepts_the_root_or_the_suite_folder(toolalpaca_dir: Path, tmp_path: Path) -> None:
    assert data.locate(str(toolalpaca_dir), tmp_path, offline=True) == toolalpaca_dir
    assert data.locate(str(toolalpaca_dir.parent), tmp_path, offline=True) == toolalpaca_dir
    with pytest.raises(DataError, match="no ToolAlpaca data there"):
        data.locate(str(tmp_path), tmp_path, offline=True)


def _write_subset(root: Path, content: str, subset: str = "simulated") -> Path:
    path = root / SUBSET_FILES[subset]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    data.load_subset.cache_clear()
    return path


def _broken(**overrides: Any) -> str:
    return json.dumps([toy_record(Name="Fine API"), toy_record(**overrides)], indent=1)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('[{"Name": "x",', ":1:15: malformed JSON (Expecting property name enclosed in double quotes)"),
        ('{"Name": "x"}', ": expected a JSON list of API records, found an object"),
        ('[{"Name": "x"}, 3]', ": API [0] 'x': Documentation: Field required"),
        (json.dumps([toy_record(), 3]), ": API [1]: expected a JSON object, found a number"),
        (
            _broken(Golden_Answers=[[{"Action": "getForecast"}], []]),
            ": API [1] 'Toy Weather': Golden_Answers.0.0.Action_Input: Field required",
        ),
        (
            _broken(Golden_Answers=[[]]),
            ": API [1] 'Toy Weather': Golden_Answers: 1 entry for 2 Instructions (they are aligned by index)",
        ),
        (_broken(Instructions=["ok", 7]), ": API [1] 'Toy Weather': Instructions.1: Input should be a valid string"),
        (_broken(Documentation="{not json"), ": API [1] 'Toy Weather': Documentation: not a JSON document"),
        (_broken(Documentation='{"paths": {}}'), ": API [1] 'Toy Weather': Documentation: no servers[0].url"),
        (
            _broken(Function_Projection={"getForecast": ["/nowhere", "get"]}),
            ": API [1] 'Toy Weather': Function_Projection.getForecast: GET /nowhere is not an operation of the spec",
        ),
        (
            _broken(Function_Description={"getForecast": "x"}),
            ": API [1] 'Toy Weather': Function_Description: no 'components' entry",
        ),
        (json.dumps([toy_record(), toy_record()]), ": API [1] 'Toy Weather': Name: duplicate of API [0]"),
    ],
)
def test_malformed_files_name_the_file_and_position(tmp_path: Path, content: str, problem: str) -> None:
    path = _write_subset(tmp_path, content)
    with pytest.raises(DataError) as caught:
        data.load_subset(tmp_path, "simulated")
    assert str(caught.value).startswith(str(path))
    assert problem in str(caught.value)


def test_missing_file_and_unknown_subset(tmp_path: Path) -> None:
    data.load_subset.cache_clear()
    with pytest.raises(DataError, match=r"eval_real\.json: file is missing"):
        data.load_subset(tmp_path, "real")
    with pytest.raises(ToolevalUsageError, match="unknown ToolAlpaca subset 'imaginary'; known: simulated, real"):
        data.select(tmp_path, ("imaginary",))


def test_credentials_come_from_named_environment_variables() -> None:
    case = toy_case(0, "real", Authentication={"access_key": "***", "region": "***"}, Name="apilayer weatherstack")
    assert data.credential_env_var("apilayer weatherstack", "access_key") == "TOOLEVAL_WEATHERSTACK_ACCESS_KEY"
    derived = data.credential_env_var("apilayer weatherstack", "region")
    assert derived == "TOOLEVAL_TOOLALPACA_APILAYER_WEATHERSTACK_REGION"
    assert data.missing_credentials(case, {}) == (
        "apilayer weatherstack needs an API key: set TOOLEVAL_WEATHERSTACK_ACCESS_KEY, "
        "TOOLEVAL_TOOLALPACA_APILAYER_WEATHERSTACK_REGION"
    )
    env = {"TOOLEVAL_WEATHERSTACK_ACCESS_KEY": "k1", "TOOLEVAL_TOOLALPACA_APILAYER_WEATHERSTACK_REGION": "eu"}
    assert data.missing_credentials(case, env) is None
    assert data.credentials_for(case, env) == {"access_key": "k1", "region": "eu"}
    with pytest.raises(ToolevalUsageError, match="needs an API key"):
        data.credentials_for(case, {})
    # the keys reach the model only through the instruction, in the record's order (toolalpaca-gpt4tools §2.2)
    assert agent_input(case, {"access_key": "k1", "region": "eu"}).endswith(
        "\nAuthentication information: access_key=k1 region=eu"
    )
    assert agent_input(toy_case(0, "real")) == toy_case(0).instruction  # no keys needed, no line


def test_every_real_api_needing_keys_has_a_documented_variable(toolalpaca_dir: Path) -> None:
    needing = {
        (case.api_name, name)
        for case in data.load_subset(toolalpaca_dir, "real")
        for name in case.api.record.Authentication
    }
    assert needing == set(data.CREDENTIAL_ENV_VARS)


def test_helper_descriptions_are_lifted_from_class_bodies_without_running_them() -> None:
    source = (
        "import os\nos.system('touch SHOULD_NOT_EXIST')\n"
        "class AskTool(Base):\n    def __init__(self):\n        description = 'ask {{x}}'\n        super().__init__()\n"
        "class OtherTool(Base):\n    description = 'not this one'\n"
    )
    assert data.lift_helper_descriptions(source, {"AskTool": "ask"}, "tools.py") == {"ask": "ask {{x}}"}
    with pytest.raises(DataError, match=re.escape("tools.py: no description found for other")):
        data.lift_helper_descriptions(source, {"AskTool": "ask", "OtherTool": "other"}, "tools.py")
