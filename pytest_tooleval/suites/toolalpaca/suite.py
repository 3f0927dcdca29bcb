"""The ToolAlpaca suite: list cases, run one episode, judge it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import data
from .agent import EpisodeModels, EpisodeSettings, run_episode
from .episode import Episode
from .judge import Judgement, judge_episode
from .modelfn import ModelFn
from .tools import Transport

__all__ = ["REAL_OPT_IN_REASON", "ToolAlpacaSuite"]

REAL_OPT_IN_REASON = "real-API samples send live HTTP requests: opt in with --tooleval-toolalpaca-real"

_DEFAULT_SETTINGS = EpisodeSettings()  # frozen, so one shared default is safe


class ToolAlpacaSuite:
    name = "toolalpaca"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prompts = data.load_prompts(root)

    def cases(self, subsets: tuple[str, ...] = data.SUBSETS) -> list[data.ToolAlpacaCase]:
        """Every instruction of the chosen subsets, in file order; ``case.test_id`` is the pytest id."""
        return data.select(self.root, subsets)

    @staticmethod
    def skip_reason(
        case: data.ToolAlpacaCase, *, real_enabled: bool, environ: Mapping[str, str] | None = None
    ) -> str | None:
        """Why `case` cannot run here (real APIs not opted in, or a missing API key), else None."""
        if case.subset != "real":
            return None
        if not real_enabled:
            return REAL_OPT_IN_REASON
        return data.missing_credentials(case, environ)

    async def run(
        self,
        case: data.ToolAlpacaCase,
        models: EpisodeModels,
        *,
        transport: Transport | None = None,
        settings: EpisodeSettings = _DEFAULT_SETTINGS,
    ) -> Episode:
        """One episode (see agent.run_episode); credentials come from the environment."""
        return await run_episode(case, self.prompts, models, transport=transport, settings=settings)

    async def judge(self, case: data.ToolAlpacaCase, episode: Episode, judge: ModelFn) -> Judgement:
        return await judge_episode(case, episode, judge, self.prompts)
