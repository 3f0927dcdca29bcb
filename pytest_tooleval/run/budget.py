"""--tooleval-max-cost: the estimated cost of the answers this process asked for, and the ceiling that stops new
samples from starting (docs/scaling.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..models.meter import Prices, asked_tokens, row_cost
from ..outcome import Skipped


class CostBudget:
    """Started samples finish; once the spend reaches the ceiling, no new one starts."""

    def __init__(self, ceiling: float | None, prices: Prices, role_models: Callable[[], dict[str, str | None]]) -> None:
        self.ceiling = ceiling
        self.prices = prices
        self.role_models = role_models  # token-key prefix -> model, for pricing
        self.spent_usd = 0.0
        self.not_run = 0  # samples not started once the ceiling was reached

    def refusal(self) -> Skipped | None:
        """Why a sample does not start (the ceiling is reached), or None."""
        if self.ceiling is None or self.spent_usd < self.ceiling:
            return None
        self.not_run += 1
        return Skipped(f"not run: the cost ceiling --tooleval-max-cost {self.ceiling:g} was reached "
                       f"(estimated ${self.spent_usd:.4f})")

    def spend(self, tokens: Mapping[str, int], cached: Mapping[str, int]) -> None:
        """An answer's cost: what an earlier run paid for (the cache served it) costs this run nothing."""
        if self.ceiling is not None:
            self.spent_usd += row_cost(asked_tokens(tokens, cached), self.role_models(), self.prices) or 0.0
