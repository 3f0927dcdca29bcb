"""Per-process run state: the settings, the suites, the engine and the model access (built lazily)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from .config import Settings
from .engine import Engine
from .errors import ToolevalUsageError
from .models.access import ModelAccess
from .outcome import SampleResult
from .suites import SUITES, suite_module

DEFAULT_CACHE_DIR = Path("~/.cache/pytest-tooleval")


class ToolevalSession:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._suites: dict[str, Any] = {}
        self._engine: Engine | None = None
        self.category_sizes: dict[tuple[str, str], int] = {}

    @property
    def active(self) -> bool:
        return bool(self.settings.model)

    @property
    def cache_dir(self) -> Path:
        return Path(self.settings.cache_dir or DEFAULT_CACHE_DIR).expanduser()

    @property
    def languages(self) -> tuple[str, ...]:
        return ("en", "zh") if self.settings.language == "all" else (self.settings.language,)

    def suite(self, name: str) -> Any:
        if name not in self._suites:
            if name not in SUITES:
                raise ToolevalUsageError(
                    f"@pytest.mark.tooleval({name!r}): unknown suite; known: {', '.join(SUITES)}"
                )
            self._suites[name] = suite_module(name).create(self)
        return self._suites[name]

    def preload(self) -> None:
        """Locate (download if needed) and validate the selected data before any worker starts."""
        self.cases("acebench")

    def cases(self, name: str) -> list[Any]:
        return self.suite(name).cases()

    @staticmethod
    def schedule(cases: list[Any]) -> list[Any]:
        """Long rollouts first, so they never form a tail behind short samples (stable otherwise)."""
        return sorted(cases, key=lambda case: 0 if getattr(case, "family", "") == "agent" else 1)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine()
        return self._engine

    @cached_property
    def access(self) -> ModelAccess:
        from .models.factory import build_access

        return build_access(self.settings, self.cache_dir, self.engine)

    def run(self, case: Any) -> SampleResult:
        suite = self.suite(case.suite)
        answer = self.engine.run(suite.answer(case, self.access))
        return suite.score(case, answer)

    def data_fingerprint(self) -> str | None:
        """sha256 of the data manifest in use (located without downloading)."""
        from .report.json_report import manifest_sha256
        from .suites.acebench import data

        try:
            root = data.locate(self.settings.data_dir, self.cache_dir, offline=True)
        except ToolevalUsageError:
            return None
        return manifest_sha256(root)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
