"""GPT4Tools as the plugin sees it (the suite protocol in pytest_tooleval/suites/__init__.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .suite import MAX_NEW_TOKENS, STOP, WHERE_TO_GET, GPT4ToolsSuite, load_recorded, load_test_set
from .summary import summarize_gpt4tools as summarize

__all__ = ["MARK_PROFILES", "create", "fingerprint", "summarize", "unavailable"]

MARK_PROFILES = [{"gpt4tools", "gpt4tools_tool", "en"}, {"gpt4tools", "gpt4tools_no_tool", "en"}]


def unavailable(settings: Any) -> str | None:
    return None if settings.gpt4tools_path else WHERE_TO_GET

REPLAY_PREFIX = "replay:"


def create(session: Any) -> GPT4ToolsSuite:
    """The suite of this run; without --tooleval-gpt4tools-path it collects one placeholder that skips."""
    settings = session.settings
    dataset = load_test_set(settings.gpt4tools_path) if settings.gpt4tools_path else None
    model = settings.model or ""
    recorded = load_recorded(model[len(REPLAY_PREFIX):]) if dataset and model.startswith(REPLAY_PREFIX) else None
    return GPT4ToolsSuite(dataset, max_tokens=max_tokens(settings), stop=bool(settings.gpt4tools_stop),
                          recorded=recorded, prompt_in_output=settings.gpt4tools_prompt_in_output)


def max_tokens(settings: Any) -> int:
    """Upstream's 512 new tokens, unless --tooleval-max-tokens was set explicitly (the run's default of 1200 is
    ACEBench's)."""
    return MAX_NEW_TOKENS if settings.sources.get("max-tokens") == "default" else settings.max_tokens


def fingerprint(settings: Any) -> dict[str, Any] | None:
    """What changes a GPT4Tools score besides the model: the test-set file and the request parameters."""
    if not settings.gpt4tools_path:
        return None
    path = Path(settings.gpt4tools_path).expanduser()
    try:
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        sha256 = None
    return {
        "test_file": str(path),
        "test_file_sha256": sha256,
        "prompt": "the raw instruction as one user message",
        "max_tokens": max_tokens(settings),
        "stop": list(STOP) if settings.gpt4tools_stop else None,
        "prompt_in_output": settings.gpt4tools_prompt_in_output,
    }
