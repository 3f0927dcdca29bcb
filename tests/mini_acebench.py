"""A tiny synthetic ACEBench tree (our own records and prompt texts) for tests that need no upstream data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SCHEMA = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}

# (category, prompt record extras, ground truth); ids are assigned per category
RECORDS: dict[str, list[tuple[str, object]]] = {
    "normal_atom_bool": [
        ("user: weather in Paris?", {"get_weather": {"city": "Paris"}}),
        ("user: weather in Rome for 3 days?", {"get_weather": {"city": "Rome", "days": 3}}),
    ],
    "normal_single_turn_single_function": [("user: weather in Oslo?", {"get_weather": {"city": "Oslo"}})],
    "normal_multi_turn_user_adjust": [
        ("user: weather in Lima?", {"get_weather": {"city": "Lima"}}),
        (
            "user: weather in Lima?\nsystem: [get_weather(city='Lima')]\nuser: and Quito?",
            {"get_weather": {"city": "Quito"}},
        ),
    ],
    "special_irrelevant": [
        ("user: book me a flight", "Due to the limitations of the function, I cannot solve this problem."),
    ],
    "special_incomplete": [("user: what's the weather?", {"get_weather": ["city"]})],
}

#: the option every run over the tree needs: its files are our own, so they match no pinned ACEBench revision
#: (suites/acebench/data.py: locate refuses such a folder unless told to run on it anyway)
UNVERIFIED = "--tooleval-data-unverified"

#: every category of the tree, as --tooleval-categories takes them, and how many samples they hold
CATEGORIES = ",".join(RECORDS)
SAMPLES = sum(len(rows) for rows in RECORDS.values())

#: the right answer to each sample, keyed by a substring of its question (the fake server's `replies`)
RIGHT = {
    "weather in Paris": "[get_weather(city='Paris')]",
    "Rome for 3 days": "[get_weather(city='Rome', days=3)]",
    "weather in Oslo": "[get_weather(city='Oslo')]",
    "and Quito": "[get_weather(city='Quito')]",
    "weather in Lima": "[get_weather(city='Lima')]",
    "book me a flight": "Due to the limitations of the function, I cannot solve this problem.",
    "what's the weather": "Missing necessary parameters (city) for the api (get_weather)",
}

#: the right answer as native function calls (--tooleval-mode fc): (name, arguments) per call; text for the
#: special categories, which answer in words in both protocols
RIGHT_CALLS: dict[str, list[tuple[str, dict[str, object]]] | str] = {
    "weather in Paris": [("get_weather", {"city": "Paris"})],
    "Rome for 3 days": [("get_weather", {"city": "Rome", "days": 3})],
    "weather in Oslo": [("get_weather", {"city": "Oslo"})],
    "and Quito": [("get_weather", {"city": "Quito"})],
    "weather in Lima": [("get_weather", {"city": "Lima"})],
    "book me a flight": RIGHT["book me a flight"],
    "what's the weather": RIGHT["what's the weather"],
}

PROMPTS = {
    "model_inference/prompt_en.py": {
        # the sentence naming the [ApiName(...)] format is what function-calling mode leaves out
        "SYSTEM_PROMPT_FOR_NORMAL_DATA_EN": (
            "You call APIs. Write calls as [ApiName(k='v')].\n{time}\nAPIs:\n{function}"
        ),
        "SYSTEM_PROMPT_FOR_PREFERENCE_DATA_EN": "Profile: {profile}\nAPIs: {function}",
        "SYSTEM_PROMPT_FOR_SPECIAL_DATA_EN": "Say what is wrong.\n{time}\nAPIs:\n{function}",
        "USER_PROMPT_EN": "History:\n{question}",
    },
}


def answer_in_calls(body: dict[str, Any]) -> Any:
    """The right answer, as a function-calling model gives it (tool_calls; words for the special categories)."""
    from fake_openai import ToolCalls, last_user_message
    from pytest_tooleval.models.factory import PROBE_TOOL_PROMPT

    last = last_user_message(body)
    if body.get("tools") and last == PROBE_TOOL_PROMPT:  # the endpoint probe asks for a call of its one tool
        return ToolCalls.of(("echo", {"word": "ok"}))
    for needle, answer in RIGHT_CALLS.items():
        if needle in last:
            return answer if isinstance(answer, str) else ToolCalls.of(*answer)
    return "no idea"


def write_mini_acebench(root: Path) -> Path:
    """Write the tree under root/acebench and return that folder."""
    base = root / "acebench"
    folder = base / "data_all" / "data_en"
    (folder / "possible_answer").mkdir(parents=True)
    for category, rows in RECORDS.items():
        prompts, answers = [], []
        for number, (question, truth) in enumerate(rows):
            sample_id = f"{category}_{number}"
            if category.startswith("normal_multi_turn"):
                sample_id = f"{category}_0_{number}"
            prompts.append({"id": sample_id, "question": question, "function": [SCHEMA], "time": ""})
            answers.append({"id": sample_id, "ground_truth": truth})
        (folder / f"data_{category}.json").write_text("\n".join(json.dumps(p) for p in prompts) + "\n")
        (folder / "possible_answer" / f"data_{category}.json").write_text(
            "\n".join(json.dumps(a) for a in answers) + "\n"
        )
    (base / "prompts.json").write_text(json.dumps(PROMPTS))
    (base / "MANIFEST.json").write_text(json.dumps({"files": {}}))
    return base


def live_mini_run(pytester: pytest.Pytester, base_url: str, model: str, api_key: str) -> list[str]:
    """The tree and the thin ACEBench module in `pytester`'s folder, and the options of a live run over them."""
    from benchmark_modules import benchmark_source

    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return [
        f"--tooleval-model={model}",
        f"--tooleval-base-url={base_url}",
        f"--tooleval-api-key={api_key}",
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={CATEGORIES}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
    ]
