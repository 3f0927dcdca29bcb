"""ToolAlpaca as the plugin sees it (the suite protocol in pytest_tooleval/suites/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...models.access import access_kind
from .runner import NO_ORACLE, NOT_CONFIGURED, RunSetup, ToolAlpacaRunner
from .summary import summarize_toolalpaca as summarize

__all__ = ["MARK_PROFILES", "create", "fingerprint", "summarize", "unavailable"]


def fingerprint(settings: Any) -> dict[str, Any]:
    """The helper models, sampling and variants behind a ToolAlpaca score, and how they differ from upstream."""
    setup = RunSetup.from_settings(settings)
    return {"subset": settings.toolalpaca_subset, "setup": setup.label, "deviations": list(setup.deviations),
            "real_apis": setup.real_enabled}


MARK_PROFILES = [{"toolalpaca", "simulated"}, {"toolalpaca", "real"}]


def unavailable(settings: Any) -> str | None:
    """A run meant for another suite (no ToolAlpaca models), or the oracle (there is no gold episode to play)."""
    kind = access_kind(settings)
    if kind == "oracle":
        return NO_ORACLE
    if kind == "replay" or settings.simulator_model or settings.toolalpaca_user_model:
        return None
    return NOT_CONFIGURED


def create(session: Any) -> ToolAlpacaRunner:
    """The suite of this run. Without ToolAlpaca data at hand (a data folder without it, or offline with an
    empty cache) one placeholder is collected that skips with the reason, so runs of other suites go on."""
    from . import data

    settings = session.settings
    subsets = data.SUBSETS if settings.toolalpaca_subset == "all" else (settings.toolalpaca_subset,)
    setup = RunSetup.from_settings(settings)
    missing = _missing_data(settings.data_dir, session.cache_dir, settings.offline)
    if missing:
        return ToolAlpacaRunner(None, subsets, setup, missing=missing)
    root = data.locate(settings.data_dir, session.cache_dir, settings.offline)
    return ToolAlpacaRunner(root, subsets, setup)


def _missing_data(data_dir: str | None, cache_dir: Path, offline: bool) -> str | None:
    from ...download import cache_path
    from . import data

    if data_dir:
        given = Path(data_dir).expanduser()
        if not any((folder / data.SUBSET_FILES["simulated"]).is_file() for folder in (given / "toolalpaca", given)):
            return (f"no ToolAlpaca data in {given} (expected {given}/toolalpaca/{data.SUBSET_FILES['simulated']}): "
                    "point --tooleval-data-dir at a folder holding toolalpaca/, or drop it to download the data")
        return None
    if offline and not (cache_path(data.load_pin(), cache_dir) / "MANIFEST.json").exists():
        return "ToolAlpaca data is not in the cache and --tooleval-offline forbids the download"
    return None
