"""The official system/user messages for normal and special samples (acebench-scoring §2.1).

The prompt texts come from the downloaded upstream files (prompts.json); this module only chooses and
fills them the way upstream's inference code does.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import DataError
from .data import AceCase
from .fc import ToolSet, fc_system_prompt, history_messages

TEMPLATES = ("SYSTEM_PROMPT_FOR_NORMAL_DATA", "SYSTEM_PROMPT_FOR_PREFERENCE_DATA", "SYSTEM_PROMPT_FOR_SPECIAL_DATA",
             "USER_PROMPT")


def check_prompts(prompts: object, languages: tuple[str, ...], path: Path) -> None:
    """Raise DataError naming the first template `single_turn_messages` would miss for one of `languages`."""
    for language in languages:
        module = f"model_inference/prompt_{language}.py"
        found = prompts.get(module) if isinstance(prompts, dict) else None
        for name in TEMPLATES:
            if not isinstance(found, dict) or not isinstance(found.get(f"{name}_{language.upper()}"), str):
                raise DataError(f"{path}: {module} has no {name}_{language.upper()}")


def _template(prompts: dict[str, dict[str, str]], language: str, name: str) -> str:
    suffix = language.upper()
    return prompts[f"model_inference/prompt_{language}.py"][f"{name}_{suffix}"]


def single_turn_messages(case: AceCase, prompts: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """[system, user] for a normal or special sample, filled exactly as upstream fills them."""
    record = case.record
    functions: object = record["function"]
    if not isinstance(functions, list):  # upstream wraps a lone dict or string in a list first
        functions = [functions]
    # `{function}` is filled with the list object itself, so the model sees its Python repr, not JSON
    # (acebench-scoring §2.1)
    system = _system_template(case, prompts).format(time=record.get("time", ""), profile=record.get("profile", ""),
                                                    function=functions)
    user = _template(prompts, case.language, "USER_PROMPT").format(question=record["question"])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def fc_single_turn_messages(
    case: AceCase, prompts: dict[str, dict[str, str]], tools: ToolSet
) -> list[dict[str, object]]:
    """The function-calling request of a normal or special sample (docs/function-calling.md): the system
    prompt without its output-format instructions and function list (the functions go as `tools`), then
    the conversation of the question as chat messages, earlier calls as tool calls and their results."""
    record = case.record
    # a template whose function list is not a line of its own keeps it (as the text protocol fills it)
    system = fc_system_prompt(_system_template(case, prompts)).format(
        time=record.get("time", ""), profile=record.get("profile", ""), function=record["function"])
    return [{"role": "system", "content": system}, *history_messages(str(record["question"]), tools)]


def _system_template(case: AceCase, prompts: dict[str, dict[str, str]]) -> str:
    # upstream picks the template by substring of the category name
    if "special" in case.category:
        return _template(prompts, case.language, "SYSTEM_PROMPT_FOR_SPECIAL_DATA")
    if "preference" in case.category:
        return _template(prompts, case.language, "SYSTEM_PROMPT_FOR_PREFERENCE_DATA")
    return _template(prompts, case.language, "SYSTEM_PROMPT_FOR_NORMAL_DATA")
