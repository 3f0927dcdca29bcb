"""Per-process run state: the settings, the suites, the engine and the model access (built lazily)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from .config import Settings
from .engine import Engine
from .models.access import ModelAccess, access_kind
from .outcome import Answer, SampleResult
from .suites import plugin, registered, suite_for_test_id
from .suites.base import Role, Skipped, Suite


class ToolevalSession:
    def __init__(self, settings: Settings, run_id: str | None = None, markexpr: str = "",
                 hub_client: bool = False) -> None:
        if not settings.model and not settings.offline:  # nothing to evaluate: never download for collection
            settings = settings.replace(offline=True)
        self.settings = settings
        self.markexpr = markexpr
        self.run_id = run_id or uuid.uuid4().hex
        self._suites: dict[str, Suite] = {}
        self._cases: dict[str, list[Any]] = {}  # by suite, in the order the suite lists them
        self._case_index: dict[str, dict[str, Any]] = {}  # by suite, then test id
        self._engine: Engine | None = None
        self._workahead: Any = None
        self.collection_error: Exception | None = None  # a suite's data could not be loaded (raised once collected)
        self.category_sizes: dict[tuple[str, str], int] = {}
        self.drain_on_close = False  # set when the session ended normally: see WorkAhead.stop
        self.hub_client = hub_client  # an xdist worker whose controller answers the samples (the hub)
        self._board: Any = None  # the run's RunBoard, opened once per process (_run_board)
        self._hub: Any = None  # the controller: its WorkAhead for all workers
        self._hub_client: Any = None  # a worker: its HubClient
        self._hub_workers = 0
        self._hub_ready: threading.Thread | None = None
        self._access: ModelAccess | None = None
        self._access_lock = threading.Lock()

    @property
    def active(self) -> bool:
        return bool(self.settings.model)

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_path

    def suite(self, name: str) -> Suite:
        """The suite `name`, loaded for this run on first use (its data located, downloaded, validated)."""
        if name not in self._suites:
            self._suites[name] = plugin(name).load(self.settings)
        return self._suites[name]

    def unavailable(self, name: str) -> str | None:
        """Why suite `name` cannot run as configured (its tests skip, saying so), or None."""
        return plugin(name).unavailable(self.settings)

    def cases(self, name: str) -> list[Any]:
        if name not in self._cases:
            cases = list(self.suite(name).cases())
            # samples per category in the benchmark: the payloads carry it, so a summary knows a partial category
            self.category_sizes.update(Counter((case.language, case.category) for case in cases))
            self._cases[name] = cases
            self._case_index[name] = {case.test_id: case for case in cases}
        return self._cases[name]

    def case_for_test_id(self, test_id: str) -> Any:
        """The case behind a parametrized test id (for the hub, and for reports that carry no payload: a
        crashed worker's). Only the suite whose ids look like it is loaded."""
        name = suite_for_test_id(test_id)
        if name is None or self.unavailable(name) is not None:
            return None
        try:
            self.cases(name)
        except Exception:  # noqa: BLE001 - a suite whose data is not here cannot own the test
            return None
        return self._case_index[name].get(test_id)

    def loaded_cases(self) -> list[Any]:
        """Every case of the suites loaded in this process so far."""
        return [case for cases in self._cases.values() for case in cases]

    @staticmethod
    def schedule(cases: list[Any]) -> list[Any]:
        """Each suite's priority first (long rollouts before short samples, so they never form a tail), stable
        otherwise."""
        suites = registered()
        return sorted(cases, key=lambda case: suites[case.suite].priority(case))

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine()
        return self._engine

    @property
    def access(self) -> ModelAccess:
        with self._access_lock:  # the hub builds it in the background while its workers start
            if self._access is None:
                from .models.factory import build_access

                settings = self.settings
                if self._hub_workers:
                    settings = settings.replace(concurrency=self._hub_concurrency)
                self._access = build_access(settings, self.cache_dir, self.engine, self.board_path, self.helper_roles())
            return self._access

    @property
    def works_ahead(self) -> bool:
        """Whether samples are answered ahead of their tests: live models only (replay and oracle are instant)."""
        return self.active and access_kind(self.settings) == "chat" and self.settings.concurrency > 0

    # -- the xdist hub ------------------------------------------------------------------------------------
    # With xdist, the controller answers every sample of the run, with the request slots of all its workers
    # (workers x --tooleval-concurrency), and the workers only read answers from the board and score them.
    # The controller can start as soon as the first worker has collected, while the others are still
    # starting, and the workers never import the model client: on a small machine their start-up, not the
    # endpoint, set the pace of a run.

    def prepare_hub(self, workers: int) -> None:
        """Controller: import the model client in the background while the workers start."""
        self._hub_workers = workers
        self._run_board()  # made before any worker opens it
        self._hub_ready = threading.Thread(target=self._warm_up, name="tooleval-hub-setup", daemon=True)
        self._hub_ready.start()

    @property
    def _hub_concurrency(self) -> int:
        """The hub's requests are its workers' requests: their slots together."""
        return self._hub_workers * self.settings.concurrency

    def _warm_up(self) -> None:
        try:  # the client's import is most of its set-up; the access itself needs the collected suites' roles
            from .models import openai_compat  # noqa: F401
        except Exception:  # noqa: BLE001 - start_hub tries again and, failing, leaves the samples to the workers
            pass

    def start_hub(self, test_ids: list[str]) -> None:
        """Controller, when the first worker has collected: answer the samples of those tests (later calls,
        one per worker, change nothing)."""
        board = self._run_board()
        if self._hub_ready is None or self._hub is not None or board.state("hub") == "off":
            return
        from .workahead import WorkAhead, sample_key

        cases = [case for case in (self.case_for_test_id(test_id) for test_id in test_ids) if case is not None]
        if not cases:
            board.set_state("hub", "off")  # nothing it knows: each worker answers its own samples
            return
        by_key = {sample_key(case): case for case in self.loaded_cases()}
        self._hub = WorkAhead(board, self.schedule(cases), self._answer, self._hub_concurrency,
                              resting=lambda: self.engine.resting.count, lookup=by_key.get)
        ready, hub = self._hub_ready, self._hub

        def start() -> None:  # off the main thread: the client may still be importing
            try:
                ready.join()
                _ = self.access
            except Exception:  # noqa: BLE001 - the workers answer their own samples; their errors say why
                board.set_state("hub", "off")
                return
            board.set_state("hub", "on")
            self.engine.loop.call_soon_threadsafe(hub.start)

        threading.Thread(target=start, name="tooleval-hub-start", daemon=True).start()

    def _answer(self, case: Any) -> Any:  # a coroutine: Answer | Skipped
        return self.suite(case.suite).answer(case, self.access)

    @property
    def board_path(self) -> Path:
        return self.cache_dir / "runs" / f"{self.run_id}.sqlite"

    def _run_board(self) -> Any:
        if self._board is None:
            from .workahead import RunBoard, remove_stale_boards

            remove_stale_boards(self.board_path.parent)
            self._board = RunBoard(self.board_path)
        return self._board

    def start_workahead(self, cases: list[Any]) -> None:
        """Answer the run's samples ahead of the tests (or, on an xdist worker, read the hub's answers)."""
        if not cases:
            return
        if not self.hub_client:
            _ = self.access  # a bad model setting (a replay file that is not there) stops the run here, once
        if not self.works_ahead:
            return
        from .workahead import HubClient, WorkAhead

        if self.hub_client:
            self._hub_client = HubClient(self._run_board())
            return
        self._workahead = WorkAhead(self._run_board(), cases, self._answer, self.settings.concurrency,
                                    resting=lambda: self.engine.resting.count)
        self.engine.loop.call_soon_threadsafe(self._workahead.start)

    def run(self, case: Any) -> SampleResult | Skipped:
        if self._hub_client is not None:
            answer = self._hub_client.wait(case)
            if answer is not None:
                return self._score(case, answer)
            if self._workahead is None:
                from .workahead import WorkAhead  # no hub after all: answer here, one sample at a time

                self._workahead = WorkAhead(self._run_board(), [], self._answer, self.settings.concurrency)
        if self._workahead is not None:
            answer = self._workahead.ready(case) or self.engine.run(self._workahead.obtain(case))
        else:
            answer = self.engine.run(self._answer(case))
        return self._score(case, answer)

    def _score(self, case: Any, answer: Answer | Skipped) -> SampleResult | Skipped:
        return answer if isinstance(answer, Skipped) else self.suite(case.suite).score(case, answer)

    def helper_roles(self) -> tuple[Role, ...]:
        """The helper models of the suites loaded in this run: no client for a role no collected test uses."""
        return tuple(role for name in self._suites for role in plugin(name).roles)

    def remove_board(self) -> None:
        for path in (self.board_path, self.board_path.with_suffix(".limits.sqlite")):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        if self._hub is not None:
            self.engine.run(self._hub.stop())
        if self._workahead is not None:
            self.engine.run(self._workahead.stop(drain=self.drain_on_close))
        if self._board is not None:
            self._board.close()
        if self._engine is not None:
            self._engine.close()
