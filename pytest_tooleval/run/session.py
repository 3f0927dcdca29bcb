"""What one process of a run holds: the run (plan.py), the engine, the model access and the answer source.

Which source answers depends on the process's role: a single process answers its samples ahead of its tests
in memory (answers/pool.py) or, for the oracle, replay and `--tooleval-concurrency 0`, when each test runs
(answers/direct.py); with xdist the controller answers every sample (answers/hub.py) and a worker reads the
answers (answers/hub_client.py). Only those two open the run's sqlite board.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NOT_ASKED, MalformedReply, NotAsked
from ..models.access import ModelAccess, access_kind
from ..models.cache import CacheRun
from ..models.engine import Engine, Probe
from ..models.meter import SAMPLE_REPLIES, SERVED_FROM_CACHE, SampleReplies
from ..models.storage import STORAGE_ERRORS, StorageLog
from ..outcome import Answer, SampleResult, Skipped, malformed_result, over_time_result
from ..settings.options import Settings
from ..suites.base import answer_by_access
from ..text import utc_minute
from . import deadline
from .batch_round import BatchRound
from .budget import CostBudget
from .memory import FrozenHeap
from .plan import Run
from .repeats import REPEAT, original, repeat_of
from .tally import RequestTally

if TYPE_CHECKING:
    from ..answers import AnswerSource
    from ..answers.board import RunBoard
    from ..answers.hub import Hub
    from ..answers.pool import Pool, PoolSource
    from ..json_value import JSONObject
    from ..models.openai_compat import OpenAIBackend
    from ..suites.base import Case


SESSION_KEY = pytest.StashKey["ToolevalSession"]()  # the process's session, in pytest's config stash

class ToolevalSession:
    def __init__(self, settings: Settings, run_id: str | None = None, markexpr: str = "",
                 hub_client: bool = False, told: Mapping[str, Any] | None = None) -> None:
        self.run = Run(settings, markexpr)
        self.run_id = run_id or uuid.uuid4().hex
        # the response cache's side of the run (models/cache.py): which cached answers it may use, and what each
        # endpoint serves (models/served.py); decided by the process that aggregates, told to xdist's workers
        told = told or {}
        self._cache_run: CacheRun | None = CacheRun.from_dict(told["run"]) if told.get("run") else None
        self.served: dict[str, JSONObject] | None = told.get("served")
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
        self.memory = FrozenHeap()  # the collected run, kept out of the garbage collector's walks
        self._probe_failed = False
        # the early probe (probe_early): the suites the access was built for before collection, the probe's and the
        # model lists' round trip in flight, whom a dead endpoint is told of once it has ended, and the backends of
        # a wrong guess (their requests still count)
        self._shaped_by: tuple[str, ...] | None = None
        self._early: Future[tuple[dict[str, JSONObject], dict[str, JSONObject] | None]] | None = None
        self._early_notify: Callable[[str], None] | None = None
        self._retired: list[OpenAIBackend] = []
        self.storage = StorageLog()  # what this process's cache and board failed to keep (storage.py)
        # requests, retries, refused parameters, the workers' too
        self.tally = RequestTally(self.backends, lambda: self._retired)
        self.budget = CostBudget(self.settings.max_cost, self.settings.prices, self.run.role_models)
        self.endpoint_profile: dict[str, JSONObject] | None = None  # what the probe found, by role
        # the parametrize ids this run collected (the controller's view; with xdist, suite placeholders too):
        # the report names the samples among them that never ran
        self.collected_test_ids: list[str] | None = None
        self.say: Callable[[str], None] = lambda line: print(line, file=sys.stderr)  # the terminal's, once known
        self.batch = BatchRound(self.run, lambda line: self.say(line))  # --tooleval-batch (run/batch_round.py)

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
                names = self._shaped_by  # the early probe's guess until then; else the suites collected
                self._access = build_access(settings, settings.cache_path, self.engine, lambda: self.board_path,
                                            self.run.helper_roles(names), self.run.replay_readers(),
                                            probe_tools=self.run.asks_with_tools(names),
                                            probe_system=not self.run.tools_without_system(names), say=self.say,
                                            cache_run=self.cache_run, served=self.served)
            return self._access

    @property
    def cache_run(self) -> CacheRun | None:
        """Which cached answers this run may use (models/cache.py `begin_run`): decided once, when first asked, by
        the process that aggregates (a worker is told); None when no live model is asked through the cache."""
        if self._cache_run is None and self.asks_through_cache:
            from ..models.cache import begin_run
            from ..models.factory import cache_scope

            self._cache_run = begin_run(self.settings.cache_path / "responses.sqlite", cache_scope(self.settings),
                                        self.settings.cache_mode)
            if self._cache_run.resumed is not None:
                self.say(f"tooleval: resuming the unfinished run of {self.settings.model} begun "
                         f"{utc_minute(self._cache_run.resumed)}: its cached answers are used "
                         "(--tooleval-cache fresh asks everything again)")
        return self._cache_run

    @property
    def asks_through_cache(self) -> bool:
        """Whether a live model of this run (the model under test, or a helper role's) answers through the cache."""
        if not self.active or self.settings.cache_mode == "off":
            return False
        kind = access_kind(self.settings)
        return kind == "chat" or (kind == "replay" and any(model for prefix, model in self.run.role_models().items()
                                                           if prefix))

    def told_workers(self) -> dict[str, object]:
        """What an xdist worker is told of the response cache (workerinput): the run's tag, what the endpoints
        serve (when the controller has asked)."""
        run = self.cache_run
        return {"run": None if run is None else run.as_dict(), "served": self.served}

    def know_served(self) -> None:
        """Ask each live endpoint what it serves under its model's name (models/served.py), once per process that
        asks and was not told: the response cache's keys hold it."""
        if self._early is not None:  # the early probe asks after its probe: its outcome is taken first
            self.probe()
        if not self.know_served_needed:
            return
        from ..models.served import identify_served

        _ = self.access
        self.served = self.engine.run(identify_served(self.backends() or []))

    def end_cache_run(self) -> None:
        """The run answered every sample it collected: a later run does not resume it (models/cache.py)."""
        if self._cache_run is not None:
            from ..models.cache import end_run

            end_run(self.settings.cache_path / "responses.sqlite", self._cache_run)

    @property
    def works_ahead(self) -> bool:
        """Whether samples are answered ahead of their tests: live models only (replay and oracle are instant)."""
        return self.active and access_kind(self.settings) == "chat" and self.settings.concurrency > 0

    # -- where answers come from --------------------------------------------------------------------------

    def start_answers(self, cases: list[Case]) -> None:
        """After collection: choose this process's answer source and, for a live model, start working ahead
        (on an xdist worker: read the hub's answers)."""
        if not cases or not self.active:
            return
        if self.hub_client and self.works_ahead:
            from ..answers.hub_client import HubClientSource

            self._source = HubClientSource(self._run_board(), self._own_pool)
            return
        _ = self.access  # a bad model setting (a replay file that is not there) stops the run here, once
        self.probe()  # first: a dead endpoint stops the run before its model list is asked (and asked again)
        self.know_served()
        self.batch.send(cases, self.access, self.engine)
        if not self.works_ahead:
            return
        from ..answers.pool import MemoryLedger, Pool, PoolSource

        pool = Pool(MemoryLedger(), self.run.schedule(cases), self._answer, self._slots,
                    resting=lambda: self.engine.resting.count)
        source = PoolSource(pool, self.engine)
        source.start()
        self._source = source

    def probe_early(self, marked: Callable[[], list[str] | None]) -> None:
        """Before collection, in the process that asks (alone, or xdist's controller once its workers are counted):
        load the data of the suites the collection will most likely load (Run.likely_suites), build their access,
        and send their probe, then ask their endpoints what they serve, so that the round trip runs while the tests
        are collected (docs/concurrency.md#the-probe-during-collection). `marked` reads the suites marked on the
        test modules to be collected (hooks/ahead.py), or None. Nothing else is asked before `probe` has its
        outcome."""
        if not self._probes or self._access is not None or self.settings.batch:
            return
        found = marked()
        likely = () if found is None else self.run.likely_suites(found)
        if not likely:
            return
        try:  # their data first (collection reuses it): a data problem stops the run with nothing asked, not even this
            for name in likely:
                self.run.cases(name)
        except Exception:  # said by the collection, in one line, as without this
            return
        self._shaped_by = likely
        try:
            _ = self.access
        except Exception:  # a setting the access cannot be built from: said after collection, as without this
            self._drop_early_access()
            return
        backends = self.backends() or []
        # here, not on the loop's thread while this one collects: the probe's requests then leave at once
        self.engine.run(_warm(backends))
        breaker = self.engine.breaker
        # a dead endpoint met by the probe is said once, as the probe's error (see `probe`); the run's stop is
        # told of it once the probe has ended
        self._early_notify, breaker.on_trip = breaker.on_trip, None
        self._early = self.engine.submit(self._probe_and_list(self.engine.probes,
                                                              backends if self.know_served_needed else None))

    @property
    def _probes(self) -> bool:
        """Whether this process probes its endpoints: live models, --tooleval-no-probe not given, not yet done."""
        return self.endpoint_profile is None and not self.settings.no_probe and access_kind(self.settings) == "chat"

    @property
    def know_served_needed(self) -> bool:
        return self.served is None and self.asks_through_cache

    async def _probe_and_list(self, probes: list[Probe], listed: list[OpenAIBackend] | None
                              ) -> tuple[dict[str, JSONObject], dict[str, JSONObject] | None]:
        """The probe, then (when it passed) the model lists of the `listed` backends' endpoints, if any: a dead
        endpoint is not asked for them."""
        from ..models.factory import probe_endpoints
        from ..models.served import identify_served

        profile = await probe_endpoints(probes)
        return profile, None if listed is None else await identify_served(listed)

    def _drop_early_access(self) -> None:
        """The early guess's access, set aside: its backends are not this run's (their requests still count), and
        what they met (a dead helper endpoint the run does not use) stops nothing."""
        from ..models.breaker import Breaker

        engine = self.engine
        self._retired.extend(self.backends() or [])
        engine.probes.clear()
        notify = engine.breaker.on_trip
        engine.breaker = Breaker()
        engine.breaker.on_trip = notify
        self._access = None
        self._shaped_by = None

    def _take_early_probe(self) -> bool:
        """The early probe's outcome, when the suites the collection parametrized shape the same access (the guess
        was right); False when there was none, or the guess was wrong (the access is then built again)."""
        early, self._early = self._early, None
        if early is None:
            return False
        breaker = self.engine.breaker
        notify, self._early_notify = self._early_notify, None
        if self.run.access_shape(self._shaped_by) != self.run.access_shape():
            early.cancel()
            breaker.on_trip = notify
            self._drop_early_access()
            return False
        self._shaped_by = None  # the same access as the collected suites would build
        try:
            self.endpoint_profile, served = early.result()
        except BaseException:
            self._probe_failed = True
            raise
        finally:
            breaker.on_trip = notify
        if served is not None and self.served is None:
            self.served = served
        return True

    def probe(self) -> None:
        """Before any sample: one small request per model role (models/factory.py); a failure stops the run
        with one line (exit status 4). Once per process, live models only, unless --tooleval-no-probe."""
        if self._take_early_probe() or not self._probes:
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

    def _own_pool(self) -> PoolSource:
        """A worker answering samples the hub did not: claimed on the board, one at a time as tests ask."""
        from ..answers.pool import Pool, PoolSource

        self.know_served()  # told by the controller, unless its hub started after this worker did
        return PoolSource(Pool(self._run_board(), [], self._answer, self._slots), self.engine)

    def evaluate(self, case: Case) -> SampleResult | Skipped:
        """The answered and scored case (from the test's thread)."""
        if self._source is None:
            from ..answers.direct import DirectSource

            self._source = DirectSource(self._answer, self.engine)
        answer = self._source.get(case)
        if isinstance(answer, Skipped):
            return answer
        if answer.malformed is not None:  # what came back was no answer: a failure in every suite, never scored
            return malformed_result(answer)
        suite, limit = self.run.suite(case.suite), self.settings.score_timeout
        try:
            result = deadline.within(limit, lambda: suite.score(original(case), answer))
        except deadline.ScoringTimeLimit:  # an answer made to be slow to score: its verdict says so
            return over_time_result(answer, limit)
        # the reasoning, and what the cache served, are carried to the report, whatever the suite did with the answer
        if isinstance(result, SampleResult) and answer.reasoning is not None and result.reasoning is None:
            result = dataclasses.replace(result, reasoning=answer.reasoning)
        if isinstance(result, SampleResult) and answer.cached_tokens:
            result = dataclasses.replace(result, cached_tokens=answer.cached_tokens)
        if isinstance(result, SampleResult):  # how the replies ended, and where from (models/meter.py)
            result = dataclasses.replace(result, finish_reason=answer.finish_reason, cut=answer.cut,
                                         tool_answers=answer.tool_answers, source=answer.source,
                                         cached_at=answer.cached_at, cached_runs=tuple(answer.cached_runs))
        return result

    async def _answer(self, case: Case) -> Answer | Skipped:
        not_run = self.batch.still_running(case) or self.budget.refusal()
        if not_run is not None:
            return not_run
        # the suite answers the case (the core picks oracle, replay or live); its requests know which repeat they
        # are (repeats.py)
        replies = SampleReplies()
        token, served, ended = REPEAT.set(repeat_of(case)), SERVED_FROM_CACHE.set({}), SAMPLE_REPLIES.set(replies)
        try:
            answer = await answer_by_access(self.run.suite(case.suite), original(case), self.access)
            cached = SERVED_FROM_CACHE.get() or {}
        except NotAsked as exc:  # the run stopped before this sample's request left: it did not run
            return Skipped(f"{NOT_ASKED}{exc}")
        except MalformedReply as exc:  # the model's reply, malformed every time it was asked: its answer
            replies.count("model", exc.tokens, exc.latency_s)
            replies.asked += 1  # asked in this run: a malformed reply is never cached
            answer = Answer(None, latency_s=replies.latency_s, tokens=replies.tokens, malformed=exc.problem)
            cached = SERVED_FROM_CACHE.get() or {}
        finally:
            REPEAT.reset(token)
            SERVED_FROM_CACHE.reset(served)
            SAMPLE_REPLIES.reset(ended)
        if isinstance(answer, Skipped):
            return answer
        if cached:
            answer = dataclasses.replace(answer, cached_tokens=cached)
        source = "replay" if access_kind(self.settings) == "replay" and not replies.asked else replies.source()
        answer = dataclasses.replace(answer, finish_reason=replies.finish_reason(), cut=replies.cut(),
                                     tool_answers=replies.tool_answers(), source=source,
                                     cached_at=replies.oldest_cached, cached_runs=tuple(sorted(replies.cached_runs)))
        self.budget.spend(answer.tokens, cached)
        return answer

    def backends(self) -> list[OpenAIBackend] | None:
        """This process's HTTP backends, one per endpoint (None before it has an engine)."""
        if self._engine is None:
            return None
        return list({id(probe.backend): probe.backend for probe in self._engine.probes}.values())

    def answering_pool(self) -> Pool | None:
        """The pool answering ahead in this process (its own, or the hub's), if any."""
        from ..answers.pool import PoolSource

        if isinstance(self._source, PoolSource):
            return self._source.pool
        return None if self.hub is None else self.hub.pool

    def flush_storage(self) -> list[JSONObject]:
        """Finish the cache's queued writes; what this process's storage failed to keep (storage.py)."""
        if self._engine is not None:
            self._engine.flush()
        return self.storage.as_dicts()

    def stop_when_dead(self, stop: Callable[[str], None]) -> None:
        """Have a dead endpoint stop the run (models/breaker.py): `stop` gets the one-line reason (once the early
        probe, if one is in flight, has ended: its failure is said as the probe's)."""
        if self._early is not None:
            self._early_notify = stop
        else:
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
        self.know_served()
        self.probe()
        self.batch.send(cases, self.access, self.engine)
        self.hub.start(self.run.schedule(cases), self.run.loaded_cases(), self._answer, self.engine,
                       lambda: self.access)

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

    def close(self) -> None:
        if self._early is not None:  # a run that ended before its probe's outcome was needed (a data error)
            self._early.cancel()
            self._early = None
        if self.hub is not None:
            self.hub.close(self.engine)
        if self._source is not None:
            self._source.close(self.drain_on_close)
        if self._board is not None:
            self._board.close()
        if self._engine is not None:
            self._engine.close()


async def _warm(backends: list[OpenAIBackend]) -> None:
    await asyncio.gather(*(backend.warm() for backend in backends))
