"""--tooleval-batch, the run's side: play the samples to collect their batched requests, send them one batch per role
through the lanes of models/batch.py, wait, and answer for the samples whose batch is still running
(docs/scaling.md#batch)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..outcome import Skipped
from ..suites.base import answer_by_access
from ..text import counted
from .repeats import REPEAT, original, repeat_of

if TYPE_CHECKING:
    from ..json_value import JSONObject
    from ..models.access import ModelAccess
    from ..models.batch import BatchSummary
    from ..models.engine import Engine
    from ..suites.base import Case
    from .plan import Run


class BatchRound:
    """One process's batch round: sent once, before the first test asks (`send`)."""

    def __init__(self, run: Run, say: Callable[[str], None]) -> None:
        self.run = run
        self.say = say
        self.summary: BatchSummary | None = None  # what the round did, once sent
        self.not_run = 0  # samples whose batch was still running when --tooleval-batch-wait ran out
        self._batched: dict[str, tuple[str, list[str]]] = {}  # test id -> its batched role and request keys
        self._access: ModelAccess | None = None

    def send(self, cases: list[Case], access: ModelAccess, engine: Engine) -> None:
        """The requests the suites' `batched_role` names go out in one batch per role, and this waits for them
        (batch.py); the tests then find the answers in the cache. Once per process."""
        if not access.batch or self.summary is not None:
            return
        from ..suites import plugin

        self._access = access
        by_role: dict[str, list[Case]] = {}
        for case in cases:
            role = plugin(case.suite).hints.batched_role(original(case))
            if role in access.batch:
                by_role.setdefault(role, []).append(case)
        self.summary = engine.run(self._collect_and_send(access, by_role))

    async def _collect_and_send(self, access: ModelAccess, by_role: dict[str, list[Case]]) -> BatchSummary:
        """Answer each case with its batched role collecting: the model's request is recorded at once; a helper
        role's comes at the end of an episode the other roles play out as usual (and cache), so those episodes
        run side by side, as many at a time as --tooleval-concurrency allows."""
        from ..models.batch import COLLECTING, BatchSummary, Collection, Deferred

        wanted: dict[str, dict[str, JSONObject]] = {}  # role -> the requests collected for it
        slots = asyncio.Semaphore(max(1, self.run.settings.concurrency))

        async def collect(case: Case, role: str) -> None:
            async with slots:
                # only this case's batched role collects: in a run with ACEBench and ToolAlpaca the model is
                # collected for the one and plays the episodes of the other
                collection = Collection(frozenset({role}), wanted)
                token = COLLECTING.set(collection)
                repeat = REPEAT.set(repeat_of(case))
                try:
                    await answer_by_access(self.run.suite(case.suite), original(case), access)
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
            self.say(f"tooleval batch: playing {counted(len(helpers), 'episode')} to collect their "
                     f"{', '.join(sorted(role for role in by_role if role != 'model'))} requests")
        for case in by_role.get("model", []):
            await collect(case, "model")  # at once: the first request is the one collected
        await asyncio.gather(*(collect(case, role) for case, role in helpers))
        lanes = access.batch or {}
        summaries = await asyncio.gather(*(lanes[role].run(wanted.get(role, {}))
                                           for role in sorted(by_role)))
        return summaries[0] if len(summaries) == 1 else BatchSummary.combined(summaries)

    def prefixes(self) -> dict[str, str]:
        """Test id -> the token-key prefix of the role whose request the Batch API answered ("" for the model,
        "judge_" for the judge), for the cost estimate (models/meter.py row_cost)."""
        lanes = (self._access.batch if self._access is not None else None) or {}
        return {test_id: "" if role == "model" else f"{role}_"
                for test_id, (role, keys) in self._batched.items()
                if role in lanes and all(key in lanes[role].answers for key in keys)}

    def still_running(self, case: Case) -> Skipped | None:
        """A case whose request is in a batch still running (--tooleval-batch-wait ran out): not run."""
        batched = self._batched.get(case.test_id)
        if batched is None or self._access is None or not self._access.batch:
            return None
        role, keys = batched
        pending = self._access.batch[role].pending
        batch_id = next((pending[key] for key in keys if key in pending), None)
        if batch_id is None:
            return None
        self.not_run += 1
        return Skipped(f"not run: its request is in {batch_id}, still running when --tooleval-batch-wait ran "
                       "out: run again to collect the batch and score it")
