"""Chat messages for the agent and the user simulator, from upstream's prompt constants (acebench-agent §6).

The texts are never written here: ``prompts`` is the ``prompts.json`` mapping ``{upstream_file: {NAME: text}}``
and each function picks the constants of the file the upstream code path uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

Prompts = Mapping[str, Mapping[str, str]]
Messages = list[dict[str, str]]

STEP_AGENT_FILE = "model_inference/multi_step/APIModel_agent.py"
TURN_AGENT_FILE = "model_inference/multi_turn/APIModel_agent.py"
USER_FILE = "model_inference/multi_turn/APIModel_user.py"
POLICY_FILES = {"en": "model_inference/prompt_en.py", "zh": "model_inference/prompt_zh.py"}

# The simulator's opening user-role line is a string literal in upstream's get_init_prompt, not a module
# constant, so prompts.json does not carry it (acebench-agent §5.2).
USER_OPENING = {"en": "Is there anything you need help with today?", "zh": "今天有什么需要帮助的吗？"}


def _constant(prompts: Prompts, file: str, name: str) -> str:
    try:
        return prompts[file][name]
    except KeyError:
        raise KeyError(f"prompts.json lacks {name} from {file}; is it the ACEBench prompts file?") from None


def _suffix(language: str) -> str:
    if language not in ("en", "zh"):
        raise ValueError(f"language must be 'en' or 'zh', got {language!r}")
    return language.upper()


def step_agent_messages(prompts: Prompts, language: str, functions: Iterable[object], history: str) -> Messages:
    """The multi_step agent's request: system prompt, then the function list and the transcript.

    The constants are named ``MULTI_TURN_AGENT_PROMPT_*`` upstream even in the multi_step files. No domain
    policy is appended. ``functions`` is rendered as its Python repr (``str.format`` of a list).
    """
    suffix = _suffix(language)
    system = _constant(prompts, STEP_AGENT_FILE, f"MULTI_TURN_AGENT_PROMPT_SYSTEM_{suffix}")
    user = _constant(prompts, STEP_AGENT_FILE, f"MULTI_TURN_AGENT_PROMPT_USER_{suffix}")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.format(functions=list(functions), history=history)},
    ]


def turn_agent_messages(
    prompts: Prompts, language: str, functions: Iterable[object], involved_classes: Sequence[str], history: str
) -> Messages:
    """The multi_turn agent's request: system prompt + TRAVEL policy (if Travel) + BASE policy (if BaseApi)."""
    suffix = _suffix(language)
    system = _constant(prompts, TURN_AGENT_FILE, f"MULTI_TURN_AGENT_PROMPT_SYSTEM_{suffix}")
    if "Travel" in involved_classes:
        system += _constant(prompts, POLICY_FILES[language], f"TRAVEL_PROMPT_{suffix}")
    if "BaseApi" in involved_classes:
        system += _constant(prompts, POLICY_FILES[language], f"BASE_PROMPT_{suffix}")
    user = _constant(prompts, TURN_AGENT_FILE, f"MULTI_TURN_AGENT_PROMPT_USER_{suffix}")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.format(functions=list(functions), history=history)},
    ]


def user_simulator_start(
    prompts: Prompts, language: str, involved_classes: Sequence[str], question: object
) -> Messages:
    """The simulator's first request: its instruction template (BaseApi first, else Travel) and the opening."""
    suffix = _suffix(language)
    if "BaseApi" in involved_classes:
        template = _constant(prompts, USER_FILE, f"SYSTEM_PROMPT_BASE_{suffix}")
    elif "Travel" in involved_classes:
        template = _constant(prompts, USER_FILE, f"SYSTEM_PROMPT_TRAVEL_{suffix}")
    else:
        raise ValueError(f"no user-simulator template for classes {list(involved_classes)}")
    return [
        {"role": "system", "content": template.format(instruction=question)},
        {"role": "user", "content": USER_OPENING[language]},
    ]


def strip_speaker(text: str) -> str:
    """Upstream drops one leading ``user:`` or ``agent:`` before showing an agent message to the simulator."""
    for prefix in ("user:", "agent:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text
