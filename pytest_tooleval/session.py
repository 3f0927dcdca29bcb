"""Per-process run state: the settings, the suites, the engine and the model access (built lazily)."""

from __future__ import annotations

import uuid
from collections import Counter
from functools import cached_property
from pathlib import Path
from typing import Any

from .config import Settings
from .engine import Engine
from .errors import ToolevalUsageError
from .models.access import ModelAccess
from .outcome import SampleResult
from .suites import SUITES, selected_by_marks, suite_module
from .suites import unavailable as suite_unavailable

DEFAULT_CACHE_DIR = Path("~/.cache/pytest-tooleval")


class ToolevalSession:
    def __init__(self, settings: Settings, run_id: str | None = None, markexpr: str = "") -> None:
        if not settings.model and not settings.offline:  # nothing to evaluate: never download for collection
            settings = Settings({**settings.values, "offline": True}, settings.sources)
        self.settings = settings
        self.markexpr = markexpr
        self.run_id = run_id or uuid.uuid4().hex
        self._suites: dict[str, Any] = {}
        self._engine: Engine | None = None
        self._workahead: Any = None
        self._case_index: dict[str, Any] | None = None
        self.category_sizes: dict[tuple[str, str], int] = {}
        self.drain_on_close = False  # set when the session ended normally: see WorkAhead.stop

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

    def unavailable(self, name: str) -> str | None:
        """Why suite `name` cannot run as configured (its tests skip, saying so), or None."""
        return suite_unavailable(name, self.settings)

    def preload(self) -> None:
        """Locate (download if needed) and validate the data of every suite this run may use, before any
        worker starts: a data problem is then one line and exit status 4, not an error per worker."""
        for name in SUITES:
            if self.unavailable(name) is None and selected_by_marks(name, self.markexpr):
                self.cases(name)

    def cases(self, name: str) -> list[Any]:
        cases = self.suite(name).cases()
        # samples per category in the benchmark: the payloads carry it, so a summary knows a partial category
        self.category_sizes.update(Counter((case.language, case.category) for case in cases))
        return cases

    def case_for_test_id(self, test_id: str) -> Any:
        """The case behind a parametrized test id (for reports that carry no payload: a crashed worker's)."""
        if self._case_index is None:
            self._case_index = {}
            for name in SUITES:
                if self.unavailable(name) is not None:
                    continue
                try:
                    cases = self.cases(name)
                except Exception:  # a suite whose data is not here cannot own the test
                    continue
                self._case_index.update({case.test_id: case for case in cases})
        return self._case_index.get(test_id)

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

        return build_access(self.settings, self.cache_dir, self.engine, self.board_path)

    def _answer(self, case: Any) -> Any:
        return self.suite(case.suite).answer(case, self.access)

    @property
    def board_path(self) -> Path:
        return self.cache_dir / "runs" / f"{self.run_id}.sqlite"

    def start_workahead(self, cases: list[Any]) -> None:
        """Answer the run's samples ahead of the tests (live models only: replay and oracle are instant)."""
        if not cases or self.access.kind != "chat" or self.settings.concurrency == 0:
            return
        from .workahead import RunBoard, WorkAhead, remove_stale_boards

        remove_stale_boards(self.board_path.parent)
        board = RunBoard(self.board_path)
        self._workahead = WorkAhead(board, cases, self._answer, self.settings.concurrency,
                                    resting=lambda: self.engine.resting.count)
        self.engine.loop.call_soon_threadsafe(self._workahead.start)

    def run(self, case: Any) -> SampleResult:
        if self._workahead is not None:
            answer = self._workahead.ready(case) or self.engine.run(self._workahead.obtain(case))
        else:
            answer = self.engine.run(self._answer(case))
        return self.suite(case.suite).score(case, answer)

    def data_fingerprint(self) -> str | None:
        """sha256 of the data manifest in use (located without downloading)."""
        from .report.json_report import manifest_sha256
        from .suites.acebench import data

        try:
            root = data.locate(self.settings.data_dir, self.cache_dir, offline=True)
        except ToolevalUsageError:
            return None
        return manifest_sha256(root)

    def remove_board(self) -> None:
        for path in (self.board_path, self.board_path.with_suffix(".limits.sqlite")):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        if self._workahead is not None:
            self.engine.run(self._workahead.stop(drain=self.drain_on_close))
            self._workahead.board.close()
        if self._engine is not None:
            self._engine.close()
