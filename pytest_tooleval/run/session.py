"""What one process of a run holds: the run (run.py), the engine, the model access and the answer source.

Which source answers depends on the process's role: a single process answers its samples ahead of its tests
in memory (answers/pool.py) or, for the oracle, replay and `--tooleval-concurrency 0`, when each test runs
(answers/direct.py); with xdist the controller answers every sample (answers/hub.py) and a worker reads the
answers (answers/hub_client.py). Only those two open the run's sqlite board.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NOT_ASKED, NotAsked
from ..models.access import ModelAccess, access_kind
from ..models.meter import SAMPLE_REPLIES, SERVED_FROM_CACHE, SampleReplies, asked_tokens
from ..outcome import SampleResult
from ..report.summary import row_cost
from ..settings.options import Settings
from ..suites.base import Skipped
from .engine import Engine
from .plan import Run
from .repeats import REPEAT, original, repeat_of
from .storage import STORAGE_ERRORS, StorageLog

if TYPE_CHECKING:
    from ..answers import AnswerSource
    from ..answers.board import RunBoard
    from ..answers.hub import Hub
    from ..hooks.progress import Progress, ProgressLine
    from ..models.batch import BatchSummary


HUB_FIRST_ROUND_S = 2.0  # the longest the workers' start waits for the hub's first requests


class ToolevalSession:
    def __init__(self, settings: Settings, run_id: str | None = None, markexpr: str = "",
                 hub_client: bool = False) -> None:
        self.run = Run(settings, markexpr)
        self.run_id = run_id or uuid.uuid4().hex
        self.hub_client = hub_client  # an xdist worker whose controller answers the samples (the hub)
        self.drain_on_close = False  # set when the session ended normally: see Pool.stop
        self.hub: Hub | None = None  # the xdist controller's
        self._slots = self.settings.concurrency  # requests in flight per model (the hub: all its workers')
        self._engine: Engine | None = None
        self._access: ModelAccess | None = None
        self._access_lock = threading.Lock()
        self._source: AnswerSource | None = None
        self._board: RunBoard | None = None
        self._board_path: Path | None = None  # decided on first use (answers/board.py, run_folder)
        self._frozen = False
        self._progress: ProgressLine | None = None
        self._probe_failed = False
        self.storage = StorageLog()  # what this process's cache and board failed to keep (storage.py)
        self._merged_adaptations: dict[str, dict[str, str]] = {}  # the workers' (distributed.py)
        self._merged_requests: dict[str, int] = {}  # the workers' requests and retries
        self.spent_usd = 0.0  # --tooleval-max-cost: the estimated cost of the answers this process asked for
        self.not_run_for_cost = 0  # samples not started once the ceiling was reached
        self.endpoint_profile: dict[str, dict[str, Any]] | None = None  # what the probe found, by role
        # the parametrize ids this run collected (the controller's view; with xdist, suite placeholders too):
        # the report names the samples among them that never ran
        self.collected_test_ids: list[str] | None = None
        self.say: Callable[[str], None] = lambda line: print(line, file=sys.stderr)  # the terminal's, once known
        self.batch_summary: BatchSummary | None = None  # what --tooleval-batch did (models/batch.py)
        self._batched: dict[str, tuple[str, list[str]]] = {}  # test id -> its batched role and request keys
        self.not_run_for_batch = 0  # samples whose batch was still running when --tooleval-batch-wait ran out

    @property
    def settings(self) -> Settings:
        return self.run.settings

    @property
    def active(self) -> bool:
        return self.run.active

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(self.storage)
        return self._engine

    @property
    def access(self) -> ModelAccess:
        with self._access_lock:  # the hub builds it off the main thread while its workers start
            if self._access is None:
                from ..models.factory import build_access

                settings = self.settings.replace(concurrency=self._slots)
                self._access = build_access(settings, settings.cache_path, self.engine, lambda: self.board_path,
                                            self.run.helper_roles(), self.run.replay_readers(),
                                            probe_tools=self.run.asks_with_tools(), say=self.say)
            return self._access

    @property
    def works_ahead(self) -> bool:
        """Whether samples are answered ahead of their tests: live models only (replay and oracle are instant)."""
        return self.active and access_kind(self.settings) == "chat" and self.settings.concurrency > 0

    # -- where answers come from --------------------------------------------------------------------------

    def start_answers(self, cases: list[Any]) -> None:
        """After collection: choose this process's answer source and, for a live model, start working ahead
        (on an xdist worker: read the hub's answers)."""
        if not cases or not self.active:
            return
        if self.hub_client and self.works_ahead:
            from ..answers.hub_client import HubClientSource

            self._source = HubClientSource(self._run_board(), self._own_pool)
            return
        _ = self.access  # a bad model setting (a replay file that is not there) stops the run here, once
        self.probe()
        self.send_batch(cases)
        if not self.works_ahead:
            return
        from ..answers.pool import MemoryLedger, Pool, PoolSource

        pool = Pool(MemoryLedger(), self.run.schedule(cases), self._answer, self._slots,
                    resting=lambda: self.engine.resting.count)
        source = PoolSource(pool, self.engine)
        source.start()
        self._source = source

    def probe(self) -> None:
        """Before any sample: one small request per model role (models/factory.py); a failure stops the run
        with one line (exit status 4). Once per process, live models only, unless --tooleval-no-probe."""
        if self.endpoint_profile is not None or self.settings.no_probe or access_kind(self.settings) != "chat":
            return
        from ..models.factory import probe_endpoints

        _ = self.access
        breaker = self.engine.breaker
        # a dead endpoint met by the probe is said once, as the probe's error: not also as a stopped run
        notify, breaker.on_trip = breaker.on_trip, None
        try:
            self.endpoint_profile = self.engine.run(probe_endpoints(self.engine.probes))
        except BaseException:
            self._probe_failed = True
            raise
        finally:
            breaker.on_trip = notify

    def send_batch(self, cases: list[Any]) -> None:
        """--tooleval-batch: the requests the suites' `batched_role` names go out in one batch per role, and
        this waits for them (models/batch.py); the tests then find the answers in the cache. Once per process."""
        access = self.access
        if not access.batch or self.batch_summary is not None:
            return
        from ..suites import plugin

        by_role: dict[str, list[Any]] = {}
        for case in cases:
            role = plugin(case.suite).batched_role(original(case))
            if role in access.batch:
                by_role.setdefault(role, []).append(case)
        self.batch_summary = self.engine.run(self._batch(access, by_role))

    async def _batch(self, access: ModelAccess, by_role: dict[str, list[Any]]) -> BatchSummary:
        """Answer each case with its batched role collecting: the model's request is recorded at once; a helper
        role's comes at the end of an episode the other roles play out as usual (and cache), so those episodes
        run side by side, as many at a time as --tooleval-concurrency allows."""
        import asyncio

        from ..models.batch import COLLECTING, BatchSummary, Collection, Deferred

        wanted: dict[str, dict[str, dict[str, Any]]] = {}  # role -> the requests collected for it
        slots = asyncio.Semaphore(max(1, self.settings.concurrency))

        async def collect(case: Any, role: str) -> None:
            async with slots:
                # only this case's batched role collects: in a run with ACEBench and ToolAlpaca the model is
                # collected for the one and plays the episodes of the other
                collection = Collection(frozenset({role}), wanted)
                token = COLLECTING.set(collection)
                repeat = REPEAT.set(repeat_of(case))
                try:
                    await self.run.suite(case.suite).answer(original(case), access)
                except Deferred:
                    pass  # its request is collected
                except Exception:  # whatever went wrong happens again in its test, which reports it
                    pass
                finally:
                    REPEAT.reset(repeat)
                    COLLECTING.reset(token)
                    if collection.keys:
                        self._batched[case.test_id] = (role, collection.keys)

        helpers = [(case, role) for role, cases in by_role.items() if role != "model" for case in cases]
        if helpers:
            self.say(f"tooleval batch: playing {len(helpers)} episodes to collect their "
                     f"{', '.join(sorted(role for role in by_role if role != 'model'))} requests")
        for case in by_role.get("model", []):
            await collect(case, "model")  # at once: the first request is the one collected
        await asyncio.gather(*(collect(case, role) for case, role in helpers))
        lanes = access.batch or {}
        summaries = await asyncio.gather(*(lanes[role].run(wanted.get(role, {}))
                                           for role in sorted(by_role)))
        return summaries[0] if len(summaries) == 1 else BatchSummary.combined(summaries)

    def _own_pool(self) -> Any:
        """A worker answering samples the hub did not: claimed on the board, one at a time as tests ask."""
        from ..answers.pool import Pool, PoolSource

        return PoolSource(Pool(self._run_board(), [], self._answer, self._slots), self.engine)

    def evaluate(self, case: Any) -> SampleResult | Skipped:
        """The answered and scored case (from the test's thread)."""
        if self._source is None:
            from ..answers.direct import DirectSource

            self._source = DirectSource(self._answer, self.engine)
        answer = self._source.get(case)
        if isinstance(answer, Skipped):
            return answer
        result = self.run.suite(case.suite).score(original(case), answer)
        # the reasoning, and what the cache served, are carried to the report, whatever the suite did with the answer
        if isinstance(result, SampleResult) and answer.reasoning is not None and result.reasoning is None:
            result = dataclasses.replace(result, reasoning=answer.reasoning)
        if isinstance(result, SampleResult) and answer.cached_tokens:
            result = dataclasses.replace(result, cached_tokens=answer.cached_tokens)
        if isinstance(result, SampleResult):  # how the replies ended (models/meter.py SampleReplies)
            result = dataclasses.replace(result, finish_reason=answer.finish_reason, cut=answer.cut,
                                         tool_answers=answer.tool_answers)
        return result

    def batched_prefixes(self) -> dict[str, str]:
        """Test id -> the token-key prefix of the role whose request the Batch API answered ("" for the model,
        "judge_" for the judge), for the cost estimate (report/summary.py row_cost)."""
        lanes = (self._access.batch if self._access is not None else None) or {}
        return {test_id: "" if role == "model" else f"{role}_"
                for test_id, (role, keys) in self._batched.items()
                if role in lanes and all(key in lanes[role].answers for key in keys)}

    def _still_in_a_batch(self, case: Any) -> str | None:
        """The batch still running this case's request (--tooleval-batch-wait ran out), or None."""
        batched = self._batched.get(case.test_id)
        if batched is None or self._access is None or not self._access.batch:
            return None
        role, keys = batched
        pending = self._access.batch[role].pending
        return next((pending[key] for key in keys if key in pending), None)

    async def _answer(self, case: Any) -> Any:  # Answer | Skipped
        if (batch_id := self._still_in_a_batch(case)) is not None:
            self.not_run_for_batch += 1
            return Skipped(f"not run: its request is in {batch_id}, still running when --tooleval-batch-wait ran "
                           "out: run again to collect the batch and score it")
        ceiling = self.settings.max_cost
        if ceiling is not None and self.spent_usd >= ceiling:  # started samples finish; no new one starts
            self.not_run_for_cost += 1
            return Skipped(f"not run: the cost ceiling --tooleval-max-cost {ceiling:g} was reached "
                           f"(estimated ${self.spent_usd:.4f})")
        # the suite answers the case itself; its requests know which repeat they are (repeats.py)
        replies = SampleReplies()
        token, served, ended = REPEAT.set(repeat_of(case)), SERVED_FROM_CACHE.set({}), SAMPLE_REPLIES.set(replies)
        try:
            answer = await self.run.suite(case.suite).answer(original(case), self.access)
            cached = SERVED_FROM_CACHE.get() or {}
        except NotAsked as exc:  # the run stopped before this sample's request left: it did not run
            return Skipped(f"{NOT_ASKED}{exc}")
        finally:
            REPEAT.reset(token)
            SERVED_FROM_CACHE.reset(served)
            SAMPLE_REPLIES.reset(ended)
        if isinstance(answer, Skipped):
            return answer
        if cached:
            answer = dataclasses.replace(answer, cached_tokens=cached)
        answer = dataclasses.replace(answer, finish_reason=replies.finish_reason(), cut=replies.cut(),
                                     tool_answers=replies.tool_answers())
        if ceiling is not None:  # what an earlier run paid for (the cache served it) costs this run nothing
            self.spent_usd += row_cost(asked_tokens(answer.tokens, cached), self.role_models(),
                                       self.settings.prices) or 0.0
        return answer

    def role_models(self) -> dict[str, str | None]:
        """Token-key prefix -> the model of that role ("" is the model under test), for pricing."""
        return {"": self.settings.model, **{f"{role.name}_": self.settings.get(role.model_key)
                                            for role in self.run.helper_roles()}}

    def show_progress(self, write: Callable[[str], None], *, tty: bool, interval_s: float,
                      close: Callable[[], None] = lambda: None, **rows: Callable[..., Any]) -> None:
        """A live status line of the answering pool (progress.py), if this process answers ahead; `rows`: how a
        log's line keeps out of pytest's rows of dots (ProgressLine's row_state and broke_row)."""
        from ..answers.pool import Pool, PoolSource
        from ..hooks.progress import ProgressLine

        def pool() -> Pool | None:
            if isinstance(self._source, PoolSource):
                return self._source.pool
            return None if self.hub is None else self.hub.pool

        if self._progress is not None or (pool() is None and self.hub is None):
            close()
            return
        started = time.monotonic()

        def snapshot() -> Progress:
            current = pool()
            if current is None:
                return Progress(0, 0, 0, 0, 0, 0, time.monotonic() - started)
            backends, limits = self._backends(), self.concurrency
            return dataclasses.replace(
                current.progress(time.monotonic() - started),
                requests=sum(backend.in_flight() for backend in backends),
                timeouts=sum(backend.timed_out for backend in backends),
                # the first model's (the one under test): its limit, and why it last came down
                limit=limits[0]["limit"] if limits else None,
                limit_reason=limits[0]["cuts"][-1]["reason"] if limits and limits[0]["cuts"] else None)

        self._progress = ProgressLine(snapshot, write, tty=tty, interval_s=interval_s, close=close, **rows)
        self._progress.start()

    @property
    def progress_line(self) -> ProgressLine | None:
        return self._progress

    def stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()

    @property
    def adaptations(self) -> dict[str, dict[str, str]]:
        """Sampling parameters the run's models refused, by endpoint, merged from every process."""
        merged = dict(self._merged_adaptations)
        if self._engine is not None:  # what this process's backends learned (models/openai_compat.py)
            merged.update({backend.label: dict(backend.adaptations) for backend in self._backends()
                           if backend.adaptations})
        return merged

    @property
    def request_counts(self) -> dict[str, int]:
        """HTTP requests sent and retried by this process's backends (the probe's included), plus the workers'."""
        counts = dict(self._merged_requests)
        if self._engine is not None:
            backends = self._backends()
            counts["requests"] = counts.get("requests", 0) + sum(backend.sent for backend in backends)
            counts["retries"] = counts.get("retries", 0) + sum(backend.retried for backend in backends)
            counts["timeouts"] = counts.get("timeouts", 0) + sum(backend.timed_out for backend in backends)
        return counts

    def _backends(self) -> list[Any]:
        if self._engine is None:
            return []
        return list({id(probe.backend): probe.backend for probe in self._engine.probes}.values())

    @property
    def concurrency(self) -> list[dict[str, Any]]:
        """How each endpoint's in-flight limit moved in this process (the one that asks: alone, or the hub)."""
        return [moved for backend in self._backends() if (moved := backend.concurrency()) is not None]

    def merge_requests(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self._merged_requests[key] = self._merged_requests.get(key, 0) + int(value)

    def merge_adaptations(self, adaptations: dict[str, dict[str, str]]) -> None:
        for where, changes in adaptations.items():
            self._merged_adaptations.setdefault(where, {}).update(changes)

    def flush_storage(self) -> list[dict[str, Any]]:
        """Finish the cache's queued writes; what this process's storage failed to keep (storage.py)."""
        if self._engine is not None:
            self._engine.flush()
        return self.storage.as_dicts()

    def stop_when_dead(self, stop: Callable[[str], None]) -> None:
        """Have a dead endpoint stop the run (models/breaker.py): `stop` gets the one-line reason."""
        self.engine.breaker.on_trip = stop

    @property
    def stopped_because(self) -> str | None:
        """Why the breaker stopped the run in this process, if it did."""
        if self._engine is None or self._probe_failed:  # the probe's own error says it
            return None
        return self._engine.breaker.message

    # -- the xdist hub (the controller) -------------------------------------------------------------------

    def prepare_hub(self, workers: int) -> None:
        """Controller, before the workers start: the board (made before any worker opens it), and the client
        imported in the background."""
        from ..answers.hub import Hub

        self._slots = workers * self.settings.concurrency  # the hub's requests are its workers' requests
        self.hub = Hub(self._run_board(), self._slots)

    def start_hub(self, test_ids: list[str]) -> None:
        """Controller, when a worker has collected: answer the samples of its tests (the first call decides)."""
        if self.hub is None:
            return
        cases = [case for case in (self.run.case_for_test_id(test_id) for test_id in test_ids) if case is not None]
        # before the hub asks anything (a failure is one line and exit status 4), and after the suites of these
        # tests are loaded: their helper roles are part of the access the probe builds
        self.probe()
        self.send_batch(cases)
        self.hub.start(self.run.schedule(cases), self.run.loaded_cases(), self._answer, self.engine,
                       lambda: self.access)

    def wait_until_asking(self, bound_s: float = HUB_FIRST_ROUND_S) -> None:
        """Controller: return once the hub's first round of samples is on the wire or answered (at most `bound_s`),
        so that it goes out before the workers start, which on a small machine take every core for seconds."""
        hub = self.hub
        deadline = time.monotonic() + bound_s
        if hub is None or not hub.started.wait(bound_s) or hub.pool is None:
            return
        pool = hub.pool
        first_round = min(hub.slots, len(pool.cases))
        while time.monotonic() < deadline:
            in_flight = sum(backend.in_flight() for backend in self._backends())
            if len(pool.finished) + in_flight >= first_round:
                return
            time.sleep(0.005)

    @property
    def hub_backlog(self) -> int:
        """Controller: the hub's samples beyond its first round (0 when it does not ask)."""
        if self.hub is None or self.hub.pool is None:
            return 0
        return max(0, len(self.hub.pool.cases) - self.hub.slots)

    def restrict_hub(self, test_ids: list[str]) -> int:
        """Controller: the hub asks only for the samples of these tests from now on; returns how many it had
        already asked for that are not among them."""
        if self.hub is None:
            return 0
        from ..answers.codec import sample_key

        keep = {sample_key(case) for case in (self.run.case_for_test_id(test_id) for test_id in test_ids)
                if case is not None}
        return self.hub.restrict(keep, self.engine)

    @property
    def board_path(self) -> Path:
        """The run board's file (the rpm/tpm limits file beside it): in `<cache>/runs`, or in a temporary folder
        for the run when the cache folder cannot be written."""
        if self._board_path is None:
            from ..answers.board import run_folder

            self._board_path = run_folder(self.settings.cache_path, self.run_id) / f"{self.run_id}.sqlite"
        return self._board_path

    def _run_board(self) -> RunBoard:
        if self._board is None:
            from ..answers.board import RunBoard

            try:  # (boards of dead runs were removed by the controller at its start)
                self._board = RunBoard(self.board_path, log=self.storage)
            except STORAGE_ERRORS as exc:
                from ..errors import ToolevalUsageError

                raise ToolevalUsageError(
                    f"the run board {self.board_path} cannot be created ({exc}): free space in the cache folder or "
                    "point --tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at another disk") from None
        return self._board

    def remove_board(self) -> None:
        if self._board_path is None:  # no board, nor limits file, was made
            return
        for path in (self._board_path, self._board_path.with_suffix(".limits.sqlite")):
            for suffix in ("", "-wal", "-shm", ".broken", ".alive"):
                with contextlib.suppress(OSError):  # never made (a cache folder that cannot be written, say)
                    Path(f"{path}{suffix}").unlink()

    # -- the process's memory -----------------------------------------------------------------------------

    def freeze_collected(self) -> None:
        """The data and the collected tests live as long as the session: the garbage collector need not walk
        them again on every full collection (given back by `thaw`)."""
        gc.freeze()
        self._frozen = True

    def close(self) -> None:
        self.stop_progress()
        if self.hub is not None:
            self.hub.close(self.engine)
        if self._source is not None:
            self._source.close(self.drain_on_close)
        if self._board is not None:
            self._board.close()
        if self._engine is not None:
            self._engine.close()

    def thaw(self) -> None:
        """Give the frozen objects back to the garbage collector: pytest may run again in this process
        (pytester, an embedding program). An xdist worker skips it: its process ends with the session."""
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
