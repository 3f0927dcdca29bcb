"""Test doubles for ToolAlpaca tests: a small API of our own, stand-in prompts, and scripted chat functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pytest_tooleval.models.base import Reply
from pytest_tooleval.suites.toolalpaca.data import (
    Api,
    ApiRecord,
    ToolAlpacaCase,
    resolve_refs,
)
from pytest_tooleval.suites.toolalpaca.prompts import AgentPromptParts, Prompts

# Our own stand-ins for upstream's helper-tool descriptions (the data folder does not carry them). They keep
# upstream's convention of format-escaped braces, which rendering must collapse.
HELPER_DESCRIPTIONS = {
    "getDetails": 'Ask the user for missing details.\nParameters: {{"Question": "what to ask"}}\nOutput: the answer.',
    "retrievalDataFromFile": 'Read part of a saved output.\nParameters: {{"file_path": "path", "query": "what"}}',
}

TOY_SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "Toy Weather", "version": "1"},
    "servers": [{"url": "https://weather.example.org/v2/"}],
    "paths": {
        "/forecast/{city}": {
            "get": {
                "parameters": [
                    {"name": "city", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "days", "in": "query", "required": False, "schema": {"type": "integer"}},
                    {"name": "units", "in": "query", "schema": {"type": "string", "enum": ["metric", "imperial"]}},
                    {"name": "detailed", "in": "query", "schema": {"type": "boolean"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/alerts": {
            "post": {
                "parameters": [{"name": "region", "in": "query", "required": True, "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Alert"}}}},
                "responses": {"201": {"description": "created"}},
            }
        },
        "/stations": {"get": {"responses": {"200": {"description": "ok"}}}},
    },
    "components": {
        "schemas": {
            "Alert": {
                "type": "object",
                "required": ["email", "level"],
                "properties": {
                    "email": {"type": "string"},
                    "level": {"type": "integer"},
                    "threshold": {"type": "number"},
                },
            }
        }
    },
}

TOY_FUNCTIONS = {
    "getForecast": ["/forecast/{city}", "get"],
    "createAlert": ["/alerts", "post"],
    "listStations": ["/stations", "get"],
}
TOY_DESCRIPTIONS = {
    "getForecast": 'Forecast for a city.\nParameters: {"city": "Required. string."}\nOutput: Object{days}',
    "createAlert": 'Create an alert.\nParameters: {"email": "Required. string.", "level": "Required. integer."}',
    "listStations": "List the stations.\nParameters: {}",
    "components": "Shared formats:\n#Day: Object{date, high}",
}


def toy_record(**overrides: Any) -> dict[str, Any]:
    record = {
        "Name": "Toy Weather",
        "Documentation": json.dumps(TOY_SPEC),
        "NLDocumentation": "getForecast: Forecast for a city.\ncreateAlert: Create an alert.",
        "Function_Description": dict(TOY_DESCRIPTIONS),
        "Function_Projection": dict(TOY_FUNCTIONS),
        "Instructions": ["What is the weather in Oslo for 3 days?", " Alert me about storms. "],
        "Golden_Answers": [
            [{"Action": "getForecast", "Action_Input": '{"city": "Oslo", "days": 3}'}],
            [
                {"Action": "getDetails", "Action_Input": '{"Question": "email?"}'},
                {"Action": "createAlert", "Action_Input": '{"email": "${email}", "level": 2}'},
            ],
        ],
    }
    record.update(overrides)
    return record


def toy_api(subset: str = "simulated", **overrides: Any) -> Api:
    record = ApiRecord.model_validate(toy_record(**overrides))
    return Api(subset, 0, record, resolve_refs(json.loads(record.Documentation)))


def toy_case(index: int = 0, subset: str = "simulated", **overrides: Any) -> ToolAlpacaCase:
    api = toy_api(subset, **overrides)
    return ToolAlpacaCase(api, index, api.record.Instructions[index], tuple(api.record.Golden_Answers[index]))


def toy_prompts() -> Prompts:
    """Prompts of our own wording with upstream's placeholders, for tests that need no data folder."""
    return Prompts(
        evaluation=(
            "Judge this.\n## Documentation\n${documentation}\n\n## Task Instruction\n${instruction}\n\n"
            "## Standard Answer\n${standard}\n\n## AI Assistant's Solution\n${solution}\n\n## Analysis"
        ),
        simulator="Play the API.\nName: ${Name}\nSpec: ${Documentation}\nRequest:\n${Request}",
        get_details="Answer as the user.\n",
        retrieval="Output:\n${output}\nFind: ${query}",
        agent=AgentPromptParts(
            prefix="Chat with tools.\nTools:",
            format_instructions="Format:\nASSISTANT Action: one of [{tool_names}].",
            suffix="Begin!\n\nUSER: {input}\nASSISTANT Thought:{agent_scratchpad}",
        ),
        helper_descriptions=dict(HELPER_DESCRIPTIONS),
    )


def with_helpers(prompts: Prompts) -> Prompts:
    return replace(prompts, helper_descriptions=dict(HELPER_DESCRIPTIONS))


# a scripted answer: the text, the model's reply with its token counts, or a function of the request's messages
Scripted = str | Reply | Callable[[list[dict[str, str]]], str]


class Script:
    """An async chat function answering from a list; records every request it gets."""

    def __init__(self, *replies: Scripted, name: str = "model") -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, str]]] = []
        self.name = name

    async def __call__(self, messages: list[dict[str, str]]) -> str | Reply:
        self.requests.append(messages)
        if not self.replies:
            raise AssertionError(f"{self.name} was asked more often than scripted")
        reply = self.replies.pop(0)
        return reply(messages) if callable(reply) else reply

    @property
    def last_prompt(self) -> str:
        return self.requests[-1][-1]["content"]


def action(tool: str, tool_input: str, thought: str = " I should call a tool.") -> str:
    return f"{thought}\nASSISTANT Action: {tool}\nASSISTANT Action Input: {tool_input}"


def response(text: str, thought: str = " I have what I need.") -> str:
    return f"{thought}\nASSISTANT Response: {text}"


def simulated(status: int, body: Any, explanation: str = "Done.") -> str:
    return f"Status Code: {status}\nResponse: {json.dumps(body)}\nExplanation: {explanation}"
