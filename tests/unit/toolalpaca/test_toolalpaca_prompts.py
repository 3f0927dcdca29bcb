"""Prompt rendering: the test_v1 agent prompt (toolalpaca-gpt4tools §2.2), the judge prompt (§4.2), the helper
prompts (§2.6, §2.8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _toolalpaca import toy_api, toy_case, toy_prompts, with_helpers

from pytest_tooleval.suites.toolalpaca import data
from pytest_tooleval.suites.toolalpaca.episode import Step
from pytest_tooleval.suites.toolalpaca.prompts import (
    MissingPromptError,
    agent_tools,
    render_agent_prompt,
    render_judge_prompt,
    render_retrieval_prompt,
    render_scratchpad,
    render_simulator_prompt,
    render_user_prompt,
)

TOY_AGENT_PROMPT = (
    "Chat with tools.\nTools:\n\n"
    'getDetails: Ask the user for missing details.\nParameters: {"Question": "what to ask"}\nOutput: the answer.\n'
    'getForecast: Forecast for a city.\nParameters: {"city": "Required. string."}\nOutput: Object{days}\n'
    'createAlert: Create an alert.\nParameters: {"email": "Required. string.", "level": "Required. integer."}\n'
    "listStations: List the stations.\nParameters: {}Shared formats:\n#Day: Object{date, high}\n\n"
    "Format:\nASSISTANT Action: one of [getDetails, getForecast, createAlert, listStations].\n\n"
    "Begin!\n\nUSER: Weather in {city}?\nASSISTANT Thought:"
)


def test_agent_prompt_lists_getdetails_first_and_glues_components_to_the_last_tool() -> None:
    prompts = toy_prompts()
    tools = agent_tools(toy_api(), prompts)
    assert [tool.name for tool in tools] == ["getDetails", "getForecast", "createAlert", "listStations"]
    # braces in the input and scratchpad are taken literally, never as template fields
    assert render_agent_prompt(prompts.agent, tools, "Weather in {city}?", "") == TOY_AGENT_PROMPT


def test_retrieval_follows_getdetails_and_getdetails_can_be_left_out() -> None:
    api = toy_api("real", external_tools=["retrieval"])
    assert [tool.name for tool in agent_tools(api, toy_prompts())][:3] == [
        "getDetails",
        "retrievalDataFromFile",
        "getForecast",
    ]
    assert agent_tools(api, toy_prompts(), with_get_details=False)[0].name == "retrievalDataFromFile"


def test_missing_helper_description_says_where_it_lives(toolalpaca_dir: Path, tmp_path: Path) -> None:
    without_tools = tmp_path / "toolalpaca"  # the data folder as a hand-made copy without agent/tools.py has it
    shutil.copytree(toolalpaca_dir, without_tools, ignore=shutil.ignore_patterns("agent"))
    # nor the descriptions the download lifts from it into prompts.json (the prepared copy's has none)
    prompts = json.loads((without_tools / "prompts.json").read_text(encoding="utf-8"))
    prompts.pop("agent/tools.py", None)
    (without_tools / "prompts.json").write_text(json.dumps(prompts, ensure_ascii=False), encoding="utf-8")
    expected = "getDetails tool is not in the data folder: it lives in upstream agent/tools.py"
    with pytest.raises(MissingPromptError, match=expected):
        agent_tools(toy_api(), data.load_prompts(without_tools))


def test_upstream_agent_prompt_shape(toolalpaca_dir: Path) -> None:
    prompts = with_helpers(data.load_prompts(toolalpaca_dir))
    case = next(c for c in data.load_subset(toolalpaca_dir, "simulated") if c.api_name == "A Bíblia Digital")
    tools = agent_tools(case.api, prompts)
    text = render_agent_prompt(prompts.agent, tools, case.instruction, "")
    blocks = text.split("\n\n")
    assert blocks[0] == prompts.agent.prefix
    assert text.endswith(f"Begin!\n\nUSER: {case.instruction}\nASSISTANT Thought:")  # no trailing space
    names = ["getDetails", *case.api.functions]
    assert f"must be one of [{', '.join(names)}]." in text
    last = names[-1]
    components = case.api.record.Function_Description["components"]
    assert components  # this API has shared schemas
    assert f"{last}: {case.api.record.Function_Description[last]}{components}\n\n" in text
    # apart from the glue, the tool block is this API's NL documentation, which has a blank line before the
    # components and a final newline
    function_block = "\n".join(f"{name}: {case.api.record.Function_Description[name]}" for name in case.api.functions)
    assert case.api.record.NLDocumentation == function_block + "\n\n" + components + "\n"
    assert function_block + components in text


def test_scratchpad_repeats_each_step_and_ends_at_the_thought_prefix() -> None:
    steps = [
        Step("f", "{}", " Try f.\nASSISTANT Action: f\nASSISTANT Action Input: {}", "Status Code: 200. Response: {}"),
        Step("retrievalDataFromFile", "{}", " Read.\nASSISTANT Action: r", {"retrieved_info": "x"}),
    ]
    assert render_scratchpad(steps) == (
        " Try f.\nASSISTANT Action: f\nASSISTANT Action Input: {}"
        "\nASSISTANT Observation: Status Code: 200. Response: {}"
        "\nASSISTANT Thought: Read.\nASSISTANT Action: r\nASSISTANT Observation: {'retrieved_info': 'x'}"
        "\nASSISTANT Thought:"
    )


def test_judge_prompt_numbers_gold_and_solution_with_the_upstream_typo() -> None:
    case = toy_case(1)
    steps = [
        Step("getDetails", '{"Question": "Which email?"}', "", "a@b.c"),
        Step("createAlert", '{"email": "a@b.c", "level": 2}', "", {"retrieved_info": "$x"}),
    ]
    prompt = render_judge_prompt(
        toy_prompts().evaluation,
        documentation="DOCS $notaplaceholder",
        instruction=case.instruction,
        gold=case.gold,
        steps=steps,
        final_output="Alert created.",
    )
    assert prompt == (
        "Judge this.\n## Documentation\nDOCS $notaplaceholder\n\n## Task Instruction\n Alert me about storms. \n\n"
        '## Standard Answer\n1. Function: getDetails\nParameters: {"Question": "email?"}\n'
        '2. Function: createAlert\nParameters: {"email": "${email}", "level": 2}\n\n\n'
        "## AI Assistant's Solution\n"
        '1. Function: getDetails\nParameters: {"Question": "Which email?"}\nRetruns: a@b.c\n'
        '2. Function: createAlert\nParameters: {"email": "a@b.c", "level": 2}\nRetruns: {\'retrieved_info\': \'$x\'}\n'
        "3. Final Response: Alert created.\n\n## Analysis"
    )


def test_helper_prompts() -> None:
    history = [("User", "Alert me."), ("AI", {"Question": "Which email?"}), ("User", "a@b.c")]
    assert render_user_prompt("Answer as the user.\n", history) == (
        "Answer as the user.\n\n[User]: Alert me.\n[AI]: {'Question': 'Which email?'}\n[User]: a@b.c"
    )
    assert render_retrieval_prompt("${output}|${query}", "x" * 40_005, 3) == "x" * 40_000 + "|3"
    assert (
        render_simulator_prompt(
            "${Name} ${Documentation} ${Request} $other", name="N", documentation="{}", request="curl"
        )
        == "N {} curl $other"
    )
