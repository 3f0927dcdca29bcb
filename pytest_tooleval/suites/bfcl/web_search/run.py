"""A web search question played with a model (docs/bfcl.md#the-web-search-run): the answer-format message first,
the multi-turn loop asking, the calls run on a `WebSearchAPI` whose backend the user chose, the last answer judged
by the agentic checker.

The backend's work (a search, a page fetch) blocks on the network: it runs in a thread, so that the engine's loop
goes on asking the other samples meanwhile.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

from ....errors import SampleError, ToolevalUsageError
from ....json_value import JSONObject, JSONValue
from ....models.access import ModelAccess
from ....models.meter import Meter
from ....outcome import Answer
from ....verdict import Verdict
from ..agentic import agentic_verdict
from ..multi_turn.execute import Side
from ..multi_turn.loop import ProtocolName, generation_name, run_turns
from ..multi_turn.run import metered_ask
from ..multi_turn.sample import MultiTurnSample
from ..templates import Templates
from .api import CLASS_NAME, Backend, WebSearchAPI
from .data import WebSearchEntry

#: --tooleval-bfcl-search's forms
SERPAPI, RECORD, CASSETTE = "serpapi", "record:", "cassette:"
ENDPOINT_ENV = "TOOLEVAL_SERPAPI_URL"  # another search endpoint than SerpAPI's own (a proxy; the tests' fake)


def search_backend(choice: str | None, environ: Mapping[str, str]) -> Backend:
    """The backend --tooleval-bfcl-search names: `serpapi` (SERPAPI_API_KEY), `record:PATH` (serpapi, each call's
    result also appended to the cassette PATH) or `cassette:PATH` (a recorded run, offline).

    Raises:
        ToolevalUsageError: no choice, an unknown one, serpapi without its key or libraries, a missing cassette.
    """
    if not choice:
        raise ToolevalUsageError(
            "the web search categories need a search backend: --tooleval-bfcl-search serpapi (with SERPAPI_API_KEY), "
            "record:PATH (serpapi, and the results kept in a cassette) or cassette:PATH (a recorded run, offline)")
    if choice == SERPAPI or choice.startswith(RECORD):
        from .serpapi import ENDPOINT, SerpApi

        live = SerpApi(endpoint=environ.get(ENDPOINT_ENV) or ENDPOINT)
        if choice == SERPAPI:
            return live
        from .cassette import Recorder

        return Recorder(live, Path(choice.removeprefix(RECORD)).expanduser())
    if choice.startswith(CASSETTE):
        from .cassette import Cassette

        path = Path(choice.removeprefix(CASSETTE)).expanduser()
        if not path.is_file():
            raise ToolevalUsageError(f"--tooleval-bfcl-search {choice}: no such cassette file")
        return Cassette(path)
    raise ToolevalUsageError(f"--tooleval-bfcl-search {choice!r}: give serpapi, record:PATH or cassette:PATH")


def first_turns(entry: WebSearchEntry, answer_format: str) -> list[list[JSONObject]]:
    """The entry's turns as bfcl sends them: the answer-format message first in the first turn."""
    turns = copy.deepcopy(entry.turns)
    if not turns:
        raise SampleError(f"bfcl {entry.id}: the entry has no turn")
    turns[0] = [{"role": "system", "content": answer_format}, *turns[0]]
    return turns


async def answer(entry: WebSearchEntry, protocol: ProtocolName, access: ModelAccess, *, templates: Templates,
                 answer_format: str, backend: Backend, scope: str, sampling: Mapping[str, object]) -> Answer:
    """Ask the question with the model under test; `scope` names its calls in a cassette (the test's id). The
    output is the result entry's `result`."""
    assert access.chat is not None
    api = WebSearchAPI(backend, scope=scope)
    api.load_scenario(entry.initial_config[CLASS_NAME])
    sample = MultiTurnSample(entry.category, entry.index, entry.id, first_turns(entry, answer_format), [CLASS_NAME],
                             {}, entry.functions, {}, [])
    side = Side.of({CLASS_NAME: api}, generation_name(access.model, entry.id))
    meter = Meter(access.chat)
    reasoning: list[str] = []
    record = await run_turns(sample, metered_ask(meter, sampling, reasoning), protocol=protocol, templates=templates,
                             execute=side.execute, blocking=True)
    output: list[JSONValue] = [list(steps) for steps in record.result]
    return Answer(output, meter.latency_s, dict(meter.tokens), reasoning="\n\n".join(reasoning) or None,
                  state={"queries": record.queries, "force_quit": record.force_quit, "search": backend.label})


def score(entry: WebSearchEntry, protocol: ProtocolName, output: JSONValue, backend: str | None) -> Verdict:
    """bfcl's agentic verdict on a stored result (pure); `backend` is the label of what answered the searches
    (None: the oracle or a replayed result)."""
    return agentic_verdict(output, entry.accepted, protocol, search=backend)
