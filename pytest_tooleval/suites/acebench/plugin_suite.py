"""ACEBench as the plugin sees it (the suite protocol in pytest_tooleval/suites/__init__.py)."""

from __future__ import annotations

from typing import Any

from .summary import summarize_acebench as summarize
from .suite import AceBenchSuite

__all__ = ["MARK_PROFILES", "create", "summarize"]

MARK_PROFILES = [{"acebench", family, language}
                 for family in ("normal", "special", "agent") for language in ("en", "zh")]


def create(session: Any) -> AceBenchSuite:
    from . import data

    settings = session.settings
    root = data.locate(settings.data_dir, session.cache_dir, settings.offline)
    return AceBenchSuite(root, session.languages, settings.categories,
                         max_dialog_turns=settings.max_dialog_turns, step_prompts=settings.agent_step_prompts)
