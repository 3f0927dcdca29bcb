"""ToolAlpaca's names that the plugin object, the data loader and the runner share: a leaf, so that none of them
imports another for these."""

from __future__ import annotations

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
