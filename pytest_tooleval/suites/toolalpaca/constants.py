"""ToolAlpaca's names that the plugin object, the data loader and the runner share: a leaf, so that none of them
imports another for these."""

from __future__ import annotations

from typing import Literal

from ...settings.options import ReasoningEffort, SuiteSettings, option_field, reasoning_effort_help

SUBSETS = ("simulated", "real")
SUBSET_FILES = {"simulated": "data/eval_simulated.json", "real": "data/eval_real.json"}
NOT_CONFIGURED = (
    "ToolAlpaca needs models for the simulated APIs and the user: pass --tooleval-simulator-model NAME and "
    "--tooleval-toolalpaca-user-model NAME (upstream: gpt-3.5-turbo for both) to run its samples"
)
NO_ORACLE = (
    "ToolAlpaca has no oracle: its gold steps are call sketches for the judge (placeholders, no observations), "
    "not an episode that could be replayed; evaluate a model, or re-judge recorded episodes with replay:PATH"
)


class ToolAlpacaSettings(SuiteSettings):
    """ToolAlpaca's options, typed: `ToolAlpacaSettings.of(settings).toolalpaca_subset`."""

    toolalpaca_subset: Literal["simulated", "real", "all"] = option_field(
        "ToolAlpaca subset: simulated, real or all", "simulated")
    toolalpaca_real: bool = option_field(
        "let real-API ToolAlpaca samples send live HTTP requests (keys: see the README)", False)
    simulator_model: str | None = option_field(
        "model playing the simulated APIs of ToolAlpaca (upstream: gpt-3.5-turbo)")
    simulator_base_url: str | None = option_field("endpoint of the simulator model (default: the agent's)")
    simulator_api_key: str | None = option_field("API key of the simulator model (default: the agent's)",
                                                 secret=True)
    simulator_temperature: float = option_field("temperature of the simulator model (ToolAlpaca uses 0.5)", 0.5)
    simulator_reasoning_effort: ReasoningEffort | None = option_field(reasoning_effort_help("simulator"))
    toolalpaca_user_model: str | None = option_field(
        "model answering ToolAlpaca's getDetails questions and retrievalDataFromFile queries (upstream: "
        "gpt-3.5-turbo)")
    toolalpaca_user_base_url: str | None = option_field(
        "endpoint of the ToolAlpaca user model (default: the agent's)")
    toolalpaca_user_api_key: str | None = option_field(
        "API key of the ToolAlpaca user model (default: the agent's)", secret=True)
    toolalpaca_user_temperature: float = option_field(
        "temperature of the ToolAlpaca user model (upstream: 1)", 1.0)
    toolalpaca_user_reasoning_effort: ReasoningEffort | None = option_field(
        reasoning_effort_help("toolalpaca-user"))
    judge_model: str = option_field("judge of ToolAlpaca episodes (upstream: gpt-4-0613)", "gpt-4-0613")
    judge_base_url: str | None = option_field("endpoint of the judge model (default: the agent's)")
    judge_api_key: str | None = option_field("API key of the judge model (default: the agent's)", secret=True)
    judge_temperature: float = option_field("temperature of the judge model (ToolAlpaca uses 0.2)", 0.2)
    judge_reasoning_effort: ReasoningEffort | None = option_field(reasoning_effort_help("judge"))
