"""ACEBench agent categories (agent_multi_step, agent_multi_turn): environments, dispatch, rollouts, grading.

Typical use::

    result = await run_rollout(record, "en", prompts, ask_agent, ask_user)
    verdict = score_rollout(possible_answer, result)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pytest_tooleval.verdict import Verdict

from .decode import AgentDecodeError, DecodeMode, decode_message, routes_to_execution
from .dispatch import NUDGE, execute_step, execute_turn
from .envs import SAVED_ATTRIBUTES, Environment, build_environment
from .grading import grade, process_accuracy
from .oracle import oracle_agent, oracle_messages, run_oracle
from .rollout import (
    AGENT_SAMPLING,
    DEFAULT_MAX_TURNS,
    DEFAULT_USER_MODEL,
    FINISH,
    USER_SAMPLING,
    AskFn,
    RolloutResult,
    category_of,
    execute_messages,
    replay,
    run_rollout,
    scripted,
    silent_user,
)


def score_rollout(possible_answer: Mapping[str, object], result: RolloutResult) -> Verdict:
    """The official verdict for a finished rollout, with the rollout's own facts added to ``details``."""
    verdict = grade(possible_answer, result.end_state, result.process)
    facts = {"turns": result.turns, "hit_turn_limit": result.hit_turn_limit, "finished": result.finished,
             "state_recorded": result.state_recorded}
    return replace(verdict, details={**verdict.details, **facts})


__all__ = [
    "AGENT_SAMPLING",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_USER_MODEL",
    "FINISH",
    "NUDGE",
    "SAVED_ATTRIBUTES",
    "USER_SAMPLING",
    "AgentDecodeError",
    "AskFn",
    "DecodeMode",
    "Environment",
    "RolloutResult",
    "build_environment",
    "category_of",
    "decode_message",
    "execute_messages",
    "execute_step",
    "execute_turn",
    "grade",
    "oracle_agent",
    "oracle_messages",
    "process_accuracy",
    "replay",
    "routes_to_execution",
    "run_oracle",
    "run_rollout",
    "score_rollout",
    "scripted",
    "silent_user",
]
