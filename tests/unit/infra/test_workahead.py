"""The answering pool, in memory (one process) and on a real run board (xdist): how many samples a process takes
on at once, and that each sample is computed once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_tooleval.answers.board import RunBoard
from pytest_tooleval.answers.codec import decode, encode_error
from pytest_tooleval.answers.hub_client import HubClient
from pytest_tooleval.answers.pool import MemoryLedger, Pool
from pytest_tooleval.models.base import InfrastructureError
from pytest_tooleval.outcome import Answer, InternalError
from pytest_tooleval.suites.base import Case as SuiteCase
from pytest_tooleval.suites.base import CaseBase


@dataclass(frozen=True)
class Case(CaseBase):
    id: str
    suite: str = "acebench"
    language: str = "en"
    category: str = "normal_atom_bool"
    family: str = "normal"
    index: int = 0
    marks: tuple[str, ...] = ()

    @property
    def test_id(self) -> str:
        return f"{self.language}-{self.id}"


@pytest.fixture(params=["memory", "board"])
def ledger_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run_workahead(
    tmp_path: Path, samples: int, concurrency: int, resting: list[int], ledger_kind: str = "board"
) -> tuple[int, set[str]]:
    """Work through `samples` cases of 20 ms each; returns the most in progress at once and the keys done."""

    async def scenario() -> tuple[int, set[str]]:
        board = RunBoard(tmp_path / "board.sqlite") if ledger_kind == "board" else None
        peak = 0
        current = 0

        async def compute(case: SuiteCase) -> Answer:
            nonlocal peak, current
            current += 1
            peak = max(peak, current)
            await asyncio.sleep(0.02)
            current -= 1
            return Answer(output=f"[answer({case.id})]")

        cases: list[SuiteCase] = [Case(f"s{i}") for i in range(samples)]
        workahead = Pool(board or MemoryLedger(), cases, compute, concurrency, resting=lambda: resting[0])
        workahead.start()
        while len(workahead.finished) < samples:
            await asyncio.sleep(0.01)
        await workahead.stop()
        if board is not None:
            board.close()
        return peak, set(workahead.finished)

    return asyncio.run(scenario())


def test_a_calm_process_claims_no_more_samples_than_it_can_start(tmp_path: Path, ledger_kind: str) -> None:
    peak, done = run_workahead(tmp_path, samples=30, concurrency=4, resting=[0], ledger_kind=ledger_kind)
    assert peak == 4
    assert done == {f"acebench/en/s{i}" for i in range(30)}


def test_requests_waiting_out_a_retry_let_spare_samples_start(tmp_path: Path, ledger_kind: str) -> None:
    peak, done = run_workahead(tmp_path, samples=30, concurrency=4, resting=[3], ledger_kind=ledger_kind)
    assert peak == 7  # four, plus one for each resting request
    assert len(done) == 30


def test_spare_samples_stop_at_twice_the_concurrency(tmp_path: Path) -> None:
    peak, _ = run_workahead(tmp_path, samples=30, concurrency=4, resting=[100])
    assert peak == 8


def stop_midway(tmp_path: Path, drain: bool) -> tuple[set[str], list[str]]:
    """Two samples in progress when the process stops; returns the answers stored and the claims left."""

    async def scenario() -> tuple[set[str], list[str]]:
        board = RunBoard(tmp_path / "board.sqlite")
        computing: list[str] = []
        both_started, stopping = asyncio.Event(), asyncio.Event()

        async def compute(case: SuiteCase) -> Answer:
            computing.append(case.id)
            if len(computing) == 2:
                both_started.set()
            await stopping.wait()  # still in progress when the stop begins, however slow the machine
            return Answer(output="[done()]")

        workahead = Pool(board, [Case(f"s{i}") for i in range(10)], compute, 2)
        workahead.start()
        await asyncio.wait_for(both_started.wait(), timeout=30)
        stopping.set()  # the two go on once stop() waits: it marks the stop before that
        await workahead.stop(drain=drain)
        stored = {f"s{i}" for i in range(10) if board.result(f"acebench/en/s{i}") is not None}
        claims = [row[0] for row in board._conn.execute("SELECT key FROM claims WHERE done = 0")]
        board.close()
        return stored, claims

    return asyncio.run(scenario())


def test_a_finished_process_answers_the_samples_it_started(tmp_path: Path) -> None:
    stored, claims = stop_midway(tmp_path, drain=True)
    assert stored == {"s0", "s1"}  # the two in progress, and nothing started after the stop
    assert claims == []


def test_an_interrupted_process_gives_its_samples_back(tmp_path: Path) -> None:
    stored, claims = stop_midway(tmp_path, drain=False)
    assert stored == set()
    assert claims == []  # released, so another process claims them at once


def test_the_hub_answers_the_samples_tests_wait_for_first(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        board = RunBoard(tmp_path / "board.sqlite")
        order: list[str] = []

        async def compute(case: SuiteCase) -> Answer:
            order.append(case.id)
            await asyncio.sleep(0.01)
            return Answer(output="[done()]")

        cases: list[SuiteCase] = [Case(f"s{i}") for i in range(20)]
        board.want("acebench/en/s17")  # a worker's test reached s17 before the hub did
        hub = Pool(board, cases, compute, 1, lookup={f"acebench/en/{c.id}": c for c in cases}.get)
        hub.start()
        while len(hub.finished) < 20:
            await asyncio.sleep(0.01)
        await hub.stop()
        board.close()
        return order

    order = asyncio.run(scenario())
    assert order[0] == "s17"
    assert sorted(order) == sorted(f"s{i}" for i in range(20))  # and each sample once


def test_a_worker_reads_the_hub_answer_or_answers_itself_without_a_hub(tmp_path: Path) -> None:
    board = RunBoard(tmp_path / "board.sqlite")
    assert board.try_claim("acebench/en/s0")
    board.store("acebench/en/s0", {"answer": {"output": "[hub()]"}})
    board.set_state("hub", "on")
    client = HubClient(board)
    answer = client.wait(Case("s0"))
    assert isinstance(answer, Answer) and answer.output == "[hub()]"
    board.set_state("hub", "off")  # the hub knew none of the tests: each worker answers its own samples
    assert client.wait(Case("s1")) is None
    board.close()


def test_in_memory_each_sample_is_computed_once_however_many_tests_ask(tmp_path: Path) -> None:
    """The pool's own workers and tests asking for the same samples at once: one computation per sample."""

    async def scenario() -> dict[str, int]:
        computed: dict[str, int] = {}

        async def compute(case: SuiteCase) -> Answer:
            computed[case.id] = computed.get(case.id, 0) + 1
            await asyncio.sleep(0.01)
            return Answer(output=case.id)

        cases: list[SuiteCase] = [Case(f"s{i}") for i in range(20)]
        pool = Pool(MemoryLedger(), cases, compute, 3)
        pool.start()
        answers = await asyncio.gather(*(pool.obtain(case) for case in reversed(cases * 2)))
        await pool.stop()
        assert [answer.output for answer in answers] == [case.id for case in reversed(cases * 2)]  # type: ignore[union-attr]
        return computed

    assert asyncio.run(scenario()) == {f"s{i}": 1 for i in range(20)}


def test_a_bug_in_a_suite_travels_as_an_internal_error_not_an_endpoint_failure() -> None:
    stored = encode_error(ValueError("bad index"))
    with pytest.raises(InternalError, match=r"^ValueError: bad index$"):
        decode(stored)
    with pytest.raises(InfrastructureError, match="timed out"):
        decode(encode_error(InfrastructureError("timed out")))
