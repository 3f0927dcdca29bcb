"""A memory entry played with a model (docs/bfcl.md#the-memory-run): its scenario's prerequisite conversations
first, once per run and protocol, in order, each from the memory the one before it left; then the question from
the memory the last one left.

As bfcl does, an entry's backend instance is made fresh and loaded from the scenario's latest snapshot (a
scenario's first conversation starts empty), the memory system prompt is put first in its first turn (after the
answer-format message of a question), the multi-turn loop asks the model (multi_turn/loop.py), and the calls run
on the instance through the multi-turn executor, which parses and never evaluates them. A prerequisite
conversation's memory at its end is the next entry's snapshot (bfcl writes it to a file; here it is carried in
memory, as JSON).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ....errors import NotAsked, SampleError
from ....json_value import JSONObject, JSONValue
from ....models.access import ModelAccess
from ....models.meter import Meter
from ....outcome import Answer
from ....verdict import Verdict
from ..agentic import agentic_verdict
from ..multi_turn.execute import Side
from ..multi_turn.loop import Ask, LoopRecord, ProtocolName, generation_name, run_turns
from ..multi_turn.run import metered_ask
from ..multi_turn.sample import MultiTurnSample
from ..templates import Templates
from .backends import open_memory
from .data import MemoryEntry
from .prompts import MemoryPrompts, with_system_prompt

Snapshot = Mapping[str, JSONValue]


@dataclass(frozen=True)
class Played:
    """One entry played: the loop's record, and for a prerequisite conversation the memory it left."""

    record: LoopRecord
    snapshot: Snapshot | None = None


def first_turns(entry: MemoryEntry, prompts: MemoryPrompts, context: str) -> list[list[JSONObject]]:
    """The entry's turns as bfcl sends them: a question's first turn begins with the answer-format message, and
    every entry's first turn with the memory system prompt (merged into a leading system message)."""
    turns = copy.deepcopy(entry.turns)
    if not turns:
        raise SampleError(f"bfcl {entry.id}: the entry has no turn")
    first: list[JSONObject] = turns[0]
    if not entry.prerequisite:
        first = [{"role": "system", "content": prompts.answer_format}, *first]
    turns[0] = with_system_prompt(first, prompts.system_prompt(entry.backend, entry.scenario, context))
    return turns


async def play(entry: MemoryEntry, ask: Ask, *, protocol: ProtocolName, templates: Templates,
               prompts: MemoryPrompts, memory: Snapshot | None, model: str, keep_requests: bool = False) -> Played:
    """Play one entry from `memory` (the scenario's latest snapshot; ignored for a scenario's first conversation)."""
    prior = None if entry.first_of_scenario else memory
    # the vector memory's embedding model loads on first use and encodes every text it stores or searches for:
    # seconds of CPU that, on the engine's loop, would hold up every other sample's requests and the renewal of
    # the hub's claims (a busy machine then had workers take samples over and play their scenarios again)
    blocking = entry.backend == "vector"
    opened = (await asyncio.to_thread(open_memory, entry.backend, prior) if blocking
              else open_memory(entry.backend, prior))
    sample = MultiTurnSample(entry.category, entry.index, entry.id, first_turns(entry, prompts, opened.context()),
                             [opened.class_name], {}, entry.functions, {}, [])
    side = Side.of({opened.class_name: opened.api}, generation_name(model, entry.id))
    record = await run_turns(sample, ask, protocol=protocol, templates=templates, execute=side.execute,
                             keep_requests=keep_requests, blocking=blocking)
    if not entry.prerequisite:
        return Played(record)
    # through JSON, as bfcl's snapshot file is written and read back
    carried = json.loads(json.dumps(opened.snapshot(), ensure_ascii=False))
    return Played(record, carried if isinstance(carried, dict) else None)


@dataclass(frozen=True)
class ChainEnd:
    """What a scenario's prerequisite conversations left: the memory its questions start from, the records of
    the conversations played, and the one that could not be played (its id and why), if any."""

    memory: Snapshot | None
    records: list[LoopRecord] = field(default_factory=list)
    failed: tuple[str, str] | None = None


PlayOne = Callable[[MemoryEntry, "Snapshot | None"], Awaitable[Played]]


class Prerequisites:
    """Each scenario's prerequisite conversations, played once per (category, scenario, key) on first demand and
    shared by every question that needs them (the key tells protocols apart)."""

    def __init__(self, entries: Sequence[MemoryEntry]) -> None:
        self._chains: dict[tuple[str, str], list[MemoryEntry]] = {}
        for entry in entries:
            if entry.prerequisite:
                self._chains.setdefault((entry.category, entry.scenario), []).append(entry)
        self._played: dict[tuple[str, str, str], asyncio.Task[ChainEnd]] = {}

    def chain(self, question: MemoryEntry) -> list[MemoryEntry]:
        """The prerequisite conversations of a question, in the order they run."""
        by_id = {entry.id: entry for entry in self._chains.get((question.category, question.scenario), [])}
        missing = [entry_id for entry_id in question.depends_on if entry_id not in by_id]
        if missing:
            raise SampleError(f"bfcl {question.id}: its prerequisite conversations {', '.join(missing)} are not "
                              "in the data")
        return [by_id[entry_id] for entry_id in question.depends_on]

    async def memory_for(self, question: MemoryEntry, key: str, play_one: PlayOne) -> tuple[ChainEnd, bool]:
        """The chain's end for `question`, playing the chain with `play_one` when no question asked before; the
        second value says whether this call started it (its cost is then this question's)."""
        name = (question.category, question.scenario, key)
        task = self._played.get(name)
        started = task is None
        if task is None:
            # made in the caller's context, so its requests count as the caller's sample's
            task = asyncio.ensure_future(_play_chain(self.chain(question), play_one))
            self._played[name] = task
        return await asyncio.shield(task), started


async def _play_chain(chain: Sequence[MemoryEntry], play_one: PlayOne) -> ChainEnd:
    memory: Snapshot | None = None
    records: list[LoopRecord] = []
    for entry in chain:
        try:
            played = await play_one(entry, memory)
        except (NotAsked, asyncio.CancelledError):
            raise
        except Exception as exc:  # the model could not be asked: the questions after it are not asked either
            return ChainEnd(memory, records, (entry.id, f"{type(exc).__name__}: {exc}"))
        records.append(played.record)
        memory = played.snapshot
    return ChainEnd(memory, records)


async def answer(entry: MemoryEntry, protocol: ProtocolName, access: ModelAccess, *, templates: Templates,
                 prompts: MemoryPrompts, prerequisites: Prerequisites, sampling: Mapping[str, object]) -> Answer:
    """Ask the question with the model under test, its scenario's prerequisite conversations played first (by
    the first question that needs them: their cost is that question's). The output is the result entry's
    `result`."""
    assert access.chat is not None
    chain_meter = Meter(access.chat)

    async def play_one(prior: MemoryEntry, memory: Snapshot | None) -> Played:
        return await play(prior, metered_ask(chain_meter, sampling, []), protocol=protocol, templates=templates,
                          prompts=prompts, memory=memory, model=access.model)

    end, started = await prerequisites.memory_for(entry, protocol, play_one)
    if end.failed is not None:
        failed, reason = end.failed
        raise SampleError(f"bfcl {entry.id}: the prerequisite conversation {failed} could not be played ({reason}); "
                          f"the questions of {entry.scenario} in {entry.category} are not asked")
    meter = Meter(access.chat)
    reasoning: list[str] = []
    played = await play(entry, metered_ask(meter, sampling, reasoning), protocol=protocol, templates=templates,
                        prompts=prompts, memory=end.memory, model=access.model)
    tokens, latency_s = dict(meter.tokens), meter.latency_s
    if started:
        for key, value in chain_meter.tokens.items():
            tokens[key] = tokens.get(key, 0) + value
        latency_s += chain_meter.latency_s
    output: list[JSONValue] = [list(steps) for steps in played.record.result]
    return Answer(output, latency_s, tokens, reasoning="\n\n".join(reasoning) or None,
                  state={"queries": played.record.queries, "force_quit": played.record.force_quit,
                         "prerequisite_queries": chain_meter.calls if started else 0})


def score(entry: MemoryEntry, protocol: ProtocolName, output: JSONValue) -> Verdict:
    """bfcl's agentic verdict on a stored result (pure)."""
    return agentic_verdict(output, entry.accepted, protocol)
