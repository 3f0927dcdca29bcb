"""ToolAlpaca's names that the plugin object, the data loader and the runner share: a leaf, so that none of them
imports another for these."""

from __future__ import annotations

from typing import Literal

from ...settings.options import SuiteSettings

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
    """OPTIONS, typed (settings/options.py): `ToolAlpacaSettings.of(settings).toolalpaca_subset`."""

    toolalpaca_subset: Literal["simulated", "real", "all"]
    toolalpaca_real: bool
    simulator_model: str | None
    simulator_base_url: str | None
    simulator_api_key: str | None
    simulator_temperature: float
    simulator_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None
    toolalpaca_user_model: str | None
    toolalpaca_user_base_url: str | None
    toolalpaca_user_api_key: str | None
    toolalpaca_user_temperature: float
    toolalpaca_user_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None
    judge_model: str
    judge_base_url: str | None
    judge_api_key: str | None
    judge_temperature: float
    judge_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None
