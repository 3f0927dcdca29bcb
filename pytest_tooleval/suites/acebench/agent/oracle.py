"""The oracle agent: plays the repaired gold call sequences (agent_gold_sequences.json, acebench-agent §9.2).

Each gold call is one agent message; after the last one the oracle says ``finish conversation``. In
multi_turn no user model is needed: the silent user opens with the sample's instruction, the oracle never
addresses the user, and the rollout ends on the oracle's finish.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..plain import iterate, subscript
from .rollout import AskFn, RolloutResult, run_rollout, scripted, silent_user


def oracle_messages(gold: Mapping[str, object], language: str, sample_id: str) -> list[str]:  # the file, unchecked
    """The agent messages, one per agent turn, for ``sample_id`` from the parsed gold file."""
    try:
        entry = subscript(gold[language], sample_id)
    except KeyError:
        raise KeyError(f"no gold sequence for {language}/{sample_id}") from None
    calls = list(iterate(subscript(entry, "calls")))
    messages = [call for call in calls if isinstance(call, str)]
    if len(messages) != len(calls):  # the agent callables must return str (rollout.py): the same error, sooner
        raise TypeError(f"the gold calls of {language}/{sample_id} must be strings")
    return messages


def oracle_agent(gold: Mapping[str, object], language: str, sample_id: str) -> AskFn:
    """An agent callable that answers with the gold calls, then ``finish conversation``."""
    return scripted(oracle_messages(gold, language, sample_id))


async def run_oracle(
    record: Mapping[str, object],
    language: str,
    gold: Mapping[str, object],
    prompts: Mapping[str, Mapping[str, str]] | None = None,
) -> RolloutResult:
    """The full rollout with the oracle agent (and the silent user for multi_turn)."""
    sample_id = str(record["id"])
    return await run_rollout(record, language, prompts, oracle_agent(gold, language, sample_id), silent_user(record))
