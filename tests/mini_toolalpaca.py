"""A tiny synthetic ToolAlpaca tree (our own APIs, instructions and prompt texts) for end-to-end plugin tests.

The prompt files keep upstream's placeholders but none of its wording; prompts.json also carries the helper
tool descriptions under "agent/tools.py", as the downloader lifts them (the prepared shared data lacks them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HELPER_DESCRIPTIONS = {
    "getDetails": 'Ask the user for a missing detail.\nParameters: {{"Question": "what to ask"}}\nOutput: the answer.',
    "retrievalDataFromFile": 'Read part of a long saved output.\nParameters: {{"file_path": "path", "query": "what"}}',
}

AGENT_CONSTANTS = {
    "prefix_test": "You are a helpful assistant with tools.\nTools:",
    "format_instructions_test": (
        "Answer in this format:\nUSER: the request\nASSISTANT Thought: reasoning\n"
        "ASSISTANT Action: one of [{tool_names}]\nASSISTANT Action Input: JSON\n"
        "ASSISTANT Observation: the result\nASSISTANT Response: the final answer"
    ),
    "suffix_test": "Start now.\n\nUSER: {input}\nASSISTANT Thought:{agent_scratchpad}",
}

PROMPT_FILES = {
    "Evaluation.txt": (
        "Grade the assistant.\n## Documentation\n${documentation}\n\n## Task Instruction\n${instruction}\n\n"
        "## Standard Answer\n${standard}\n\n## AI Assistant's Solution\n${solution}\n\n## Analysis"
    ),
    "Simulator.txt": "Pretend to be the API ${Name}.\nSpec: ${Documentation}\nRequest:\n${Request}\nReply with "
    "Status Code, Response and Explanation.",
    "get_details.txt": "You are the user. Answer the assistant's question briefly.",
    "retrieval.txt": "Here is a saved output:\n${output}\nExtract: ${query}",
}

WEATHER_SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "Toy Weather", "version": "1"},
    "servers": [{"url": "https://weather.example.org/v2"}],
    "paths": {
        "/forecast/{city}": {
            "get": {
                "parameters": [
                    {"name": "city", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "days", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/stations": {"get": {"responses": {"200": {"description": "ok"}}}},
    },
}

WEATHER_INSTRUCTIONS = [
    "What is the weather in Oslo for 3 days?",
    "List every weather station.",
    "Tell me the forecast for my home town.",
]
WEATHER_GOLD = [
    [{"Action": "getForecast", "Action_Input": '{"city": "Oslo", "days": 3}'}],
    [{"Action": "listStations", "Action_Input": "{}"}],
    [
        {"Action": "getDetails", "Action_Input": '{"Question": "Which town?"}'},
        {"Action": "getForecast", "Action_Input": '{"city": "${town}"}'},
    ],
]

RATES_INSTRUCTIONS = ["What is the EUR exchange rate?", "Show all rates against USD."]
RATES_GOLD = [
    [{"Action": "latestRate", "Action_Input": '{"base": "EUR"}'}],
    [{"Action": "latestRate", "Action_Input": '{"base": "USD"}'}],
]


def weather_record() -> dict[str, Any]:
    return {
        "Name": "Toy Weather",
        "Documentation": json.dumps(WEATHER_SPEC),
        "NLDocumentation": "getForecast: the forecast of a city.\nlistStations: every station.",
        "Function_Description": {
            "getForecast": 'Forecast of a city.\nParameters: {"city": "Required. string.", "days": "integer."}',
            "listStations": "Every weather station.\nParameters: {}",
            "components": "",
        },
        "Function_Projection": {"getForecast": ["/forecast/{city}", "get"], "listStations": ["/stations", "get"]},
        "Instructions": WEATHER_INSTRUCTIONS,
        "Golden_Answers": WEATHER_GOLD,
    }


def rates_record(server_url: str) -> dict[str, Any]:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Toy Rates", "version": "1"},
        "servers": [{"url": server_url}],
        "paths": {
            "/latest": {
                "get": {
                    "parameters": [
                        {"name": "base", "in": "query", "required": True, "schema": {"type": "string"}},
                        {"name": "api_key", "in": "query", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    return {
        "Name": "Toy Rates",
        "Documentation": json.dumps(spec),
        "NLDocumentation": "latestRate: the latest rates for a base currency.",
        "Function_Description": {
            "latestRate": 'Latest rates.\nParameters: {"base": "Required. string.", "api_key": "Required. string."}',
            "components": "",
        },
        "Function_Projection": {"latestRate": ["/latest", "get"]},
        "Instructions": RATES_INSTRUCTIONS,
        "Golden_Answers": RATES_GOLD,
        "Authentication": {"api_key": "***"},
        "external_tools": ["retrieval"],
    }


def write_mini_toolalpaca(
    root: Path, *, real_server_url: str = "http://127.0.0.1:9/v1", helper_descriptions: bool = True
) -> Path:
    """Write root/toolalpaca (only: a ToolAlpaca run needs no other suite's data) and return root."""
    base = root / "toolalpaca"
    (base / "data").mkdir(parents=True)
    (base / "prompts").mkdir()
    (base / "data" / "eval_simulated.json").write_text(json.dumps([weather_record()]), encoding="utf-8")
    (base / "data" / "eval_real.json").write_text(json.dumps([rates_record(real_server_url)]), encoding="utf-8")
    for name, text in PROMPT_FILES.items():
        (base / "prompts" / name).write_text(text, encoding="utf-8")
    constants: dict[str, Any] = {"agent/agent_prompts.py": AGENT_CONSTANTS}
    if helper_descriptions:
        constants["agent/tools.py"] = HELPER_DESCRIPTIONS
    (base / "prompts.json").write_text(json.dumps(constants), encoding="utf-8")
    (base / "MANIFEST.json").write_text(json.dumps({"files": {}}), encoding="utf-8")
    return root
