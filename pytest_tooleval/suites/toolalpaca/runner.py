"""ToolAlpaca in the plugin: run (or replay) one episode, judge it, turn the judgement into a test outcome.

`answer` does everything that talks to a model or an API and returns a JSON-plain `Answer` (answers may be
computed ahead and travel between processes); `score` is pure. The four models: the agent under test
(`access.chat`), and the helper roles `simulator`, `toolalpaca_user` (getDetails and, on the real subset,
retrievalDataFromFile) and `judge` from `access.roles`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...models.access import ModelAccess, access_kind
from ...models.meter import Meter, role_tokens
from ...models.replay import ReplayStore
from ...outcome import Answer, SampleError, SampleResult
from ...text import clip
from ..base import Skipped
from . import data
from .agent import (
    AGENT_MAX_NEW_TOKENS,
    AGENT_TEMPERATURE,
    USER_MODEL,
    USER_TEMPERATURE,
    EpisodeModels,
    EpisodeSettings,
)
from .constants import NO_ORACLE, NOT_CONFIGURED, ToolAlpacaSettings
from .episode import Episode
from .judge import JUDGE_MODEL, JUDGE_TEMPERATURE, Judgement
from .parser import STOP_SEQUENCES
from .prompts import MissingPromptError, agent_tools
from .real_http import RealHttp
from .scoring import verdict
from .simulator import SIMULATOR_MODEL, SIMULATOR_TEMPERATURE
from .suite import ToolAlpacaSuite

if TYPE_CHECKING:
    from ...settings.options import Settings

__all__ = ["RunSetup", "ToolAlpacaRunner"]

USER_ROLE = "toolalpaca_user"
TRANSCRIPT_TEXT_LIMIT = 20_000  # characters of one request or reply kept in the transcript

NO_SIMULATOR = (
    "simulated ToolAlpaca APIs are played by a model: pass --tooleval-simulator-model NAME (upstream: "
    f"{SIMULATOR_MODEL} at temperature {SIMULATOR_TEMPERATURE}); the sample is not scored without one"
)
NO_USER = (
    "ToolAlpaca offers every episode the getDetails tool, answered by a model playing the user: pass "
    f"--tooleval-toolalpaca-user-model NAME (upstream: {USER_MODEL} at temperature {USER_TEMPERATURE:g}); "
    "the sample is not scored without one"
)
NO_JUDGE = (
    "ToolAlpaca episodes are judged by a model: pass --tooleval-judge-model NAME (upstream: "
    f"{JUDGE_MODEL} at temperature {JUDGE_TEMPERATURE}); the sample is not scored without one"
)


@dataclass(frozen=True)
class RunSetup:
    """The models and knobs of a run that change ToolAlpaca scores, and how they differ from upstream's.

    Attributes:
        agent_max_tokens: max_tokens of each agent request (upstream: 1024 new tokens; None: no limit sent).
        real_enabled: real-API samples may send HTTP requests (--tooleval-toolalpaca-real).
        fix_paths: insert the missing leading slash of a route (--tooleval-scorer fixed; the Fruityvice bug).
        http_timeout: seconds a real API request may take.
        label: one line naming the models and temperatures, shown with every verdict.
        deviations: what differs from the published protocol; empty for an upstream-compatible run.
    """

    agent_max_tokens: int | None = AGENT_MAX_NEW_TOKENS
    real_enabled: bool = False
    fix_paths: bool = False
    http_timeout: float = 120.0
    label: str = ""
    deviations: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> RunSetup:
        own = ToolAlpacaSettings.of(settings)
        explicit = settings.explicit("max-tokens")  # the run's default (1200) is ACEBench's
        max_tokens = settings.max_tokens if explicit else AGENT_MAX_NEW_TOKENS
        live = access_kind(settings) != "replay"
        roles: list[tuple[str, str | None, float, str, float]] = [
            ("judge", own.judge_model, own.judge_temperature, JUDGE_MODEL, JUDGE_TEMPERATURE)]
        if live:
            roles += [
                ("simulator", own.simulator_model, own.simulator_temperature, SIMULATOR_MODEL,
                 SIMULATOR_TEMPERATURE),
                ("user", own.toolalpaca_user_model, own.toolalpaca_user_temperature, USER_MODEL,
                 USER_TEMPERATURE),
            ]
        deviations = []
        label = []
        for name, model, temperature, upstream_model, upstream_temperature in roles:
            label.append(f"{name} {model or '-'} T={temperature:g}")
            if model and model != upstream_model:
                deviations.append(f"{name} model {model} (upstream {upstream_model})")
            if temperature != upstream_temperature:
                deviations.append(f"{name} temperature {temperature:g} (upstream {upstream_temperature:g})")
        if live:
            if settings.temperature != AGENT_TEMPERATURE:
                deviations.append(f"agent temperature {settings.temperature:g} (upstream greedy)")
            if max_tokens != AGENT_MAX_NEW_TOKENS:
                deviations.append(f"agent max_tokens {max_tokens} (upstream {AGENT_MAX_NEW_TOKENS})")
        fix_paths = settings.scorer == "fixed"
        if fix_paths:
            deviations.append("relative API paths fixed (--tooleval-scorer fixed)")
        label.append("paths " + ("fixed" if fix_paths else "upstream"))
        return cls(max_tokens, own.toolalpaca_real, fix_paths, settings.timeout, ", ".join(label),
                   tuple(deviations))


class ToolAlpacaRunner:
    """The suite protocol (pytest_tooleval/suites/__init__.py) over `ToolAlpacaSuite`."""

    name = "toolalpaca"

    def __init__(self, root: Path, subsets: tuple[str, ...], setup: RunSetup = RunSetup()) -> None:
        """
        Args:
            root: the ToolAlpaca data folder.
            subsets: the subsets to collect, in order.
            setup: the run's knobs (RunSetup.from_settings).
        """
        self.suite = ToolAlpacaSuite(root)
        self.subsets = subsets
        self.setup = setup

    def cases(self) -> list[data.ToolAlpacaCase]:
        return self.suite.cases(self.subsets)

    # ------------------------------------------------------------------------------------------ answering

    async def oracle(self, case: data.ToolAlpacaCase) -> Answer:
        raise SampleError(NO_ORACLE)

    async def replayed(self, case: data.ToolAlpacaCase, row: dict[str, Any], access: ModelAccess) -> Answer:
        """The recorded episode, judged again (on the engine's loop)."""
        assert access.replay is not None
        return await self._rejudge(case, _replayed(case, row, access.replay), access)

    async def answer(self, case: data.ToolAlpacaCase, access: ModelAccess) -> Answer | Skipped:
        """Run the episode and judge it (on the engine's loop)."""
        assert access.chat is not None
        reason = self.suite.skip_reason(case, real_enabled=self.setup.real_enabled)
        if reason:
            return Skipped(reason)
        simulator, user, judge = (access.roles.get(name) for name in ("simulator", USER_ROLE, "judge"))
        if simulator is None and user is None:  # a run meant for another suite: no ToolAlpaca models at all
            return Skipped(NOT_CONFIGURED)
        self._check_prompts(case)
        if case.subset == "simulated" and simulator is None:
            raise SampleError(NO_SIMULATOR)
        if user is None:
            raise SampleError(NO_USER)
        if judge is None:
            raise SampleError(NO_JUDGE)

        chat = access.chat
        agent = Meter(lambda messages: chat(messages, stop=STOP_SEQUENCES, max_tokens=self.setup.agent_max_tokens))
        # keyed by role name: a role's tokens are priced, and told apart from cached ones, by that prefix
        meters = {"agent": agent, "simulator": Meter(simulator) if simulator else None,
                  "toolalpaca_user": Meter(user)}
        http_log: list[dict[str, object]] = []
        transport = None
        if case.subset != "simulated":
            def record(entry: dict[str, object]) -> None:
                http_log.append({**entry, "step": agent.calls - 1})  # the step whose action sent it

            transport = RealHttp(self.setup.http_timeout, record)
        user_meter = meters["toolalpaca_user"]
        models = EpisodeModels(agent, meters["simulator"], user_meter, retrieval=user_meter)
        settings = EpisodeSettings(fix_relative_paths=self.setup.fix_paths)
        episode = await self.suite.run(case, models, transport=transport, settings=settings)
        judge_meter = Meter(judge)
        judgement = await self.suite.judge(case, episode, judge_meter)
        meters["judge"] = judge_meter
        transcript = _transcript(episode, http_log, judgement)
        return _redacted(_answer(episode, judgement, transcript, meters), _secrets(case))

    async def _rejudge(self, case: data.ToolAlpacaCase, episode: Episode, access: ModelAccess) -> Answer:
        judge = access.roles.get("judge")
        if judge is None:
            raise SampleError(NO_JUDGE)
        judge_meter = Meter(judge)
        judgement = await self.suite.judge(case, episode, judge_meter)
        return _answer(episode, judgement, _transcript(episode, [], judgement), {"judge": judge_meter})

    def _check_prompts(self, case: data.ToolAlpacaCase) -> None:
        """Fail before the first request when the agent prompt cannot be rendered from the data folder."""
        try:
            agent_tools(case.api, self.suite.prompts)
        except MissingPromptError:
            root, helper_file = self.suite.root, data.helper_tool_source()
            raise SampleError(
                f"the agent prompt needs the getDetails and retrievalDataFromFile descriptions of upstream "
                f"{helper_file}, and the data folder has neither {root / 'prompts.json'} key '{helper_file}' nor "
                f"{root / helper_file}: use the downloaded data (drop --tooleval-data-dir) or put the pinned "
                f"upstream {helper_file} there"
            ) from None

    # ------------------------------------------------------------------------------------------ scoring

    def score(self, case: data.ToolAlpacaCase, answer: Answer) -> SampleResult:
        """The judge's verdict as the test outcome (pure)."""
        state = answer.state or {}
        episode = Episode.from_record(state["record"])
        episode = replace(episode, input=state.get("input", episode.input))
        judgement = Judgement(**state["judgement"])
        result = verdict(judgement, episode)
        details = dict(result.details, setup=self.setup.label)
        if self.setup.deviations:
            details["deviations"] = list(self.setup.deviations)
        return SampleResult(replace(result, details=details), answer.output, answer.latency_s, answer.tokens,
                            answer.transcript)


def _replayed(case: data.ToolAlpacaCase, row: dict[str, Any], store: ReplayStore) -> Episode:
    """The recorded episode of `case`: a row {"id": <test id>, "episode": <record>}, or an instance of
    upstream's generation output (row id ``<API Name>/<index>``, `replay_ids`, see models/replay.py)."""
    record = row.get("episode")
    if not isinstance(record, dict):
        raise SampleError(f"no recorded episode for {case.id} in {store.source} (rows need an \"episode\" record)")
    return Episode.from_record(record)


def _secrets(case: data.ToolAlpacaCase) -> list[str]:
    """The API keys of a real-API case: they reach the agent's input, and often its calls
    (toolalpaca-gpt4tools §2.2)."""
    if not case.api.record.Authentication:
        return []
    return [value for value in data.credentials_for(case).values() if len(value) >= 4]


def _redacted(answer: Answer, secrets: list[str]) -> Answer:
    """`answer` with every API key replaced by "***" (as the data files write them): reports never hold keys."""
    if not secrets:
        return answer

    def clean(value: object) -> object:
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, "***")
            return value
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    def clean_entry(entry: Mapping[str, object]) -> dict[str, object]:
        return {key: clean(item) for key, item in entry.items()}

    transcript = None if answer.transcript is None else [clean_entry(entry) for entry in answer.transcript]
    return replace(answer, output=clean(answer.output), transcript=transcript, state=clean(answer.state))


def _clip(text: object) -> object:
    return clip(text, TRANSCRIPT_TEXT_LIMIT) if isinstance(text, str) else text


def _transcript(episode: Episode, http_log: list[dict[str, object]], judgement: Judgement) -> list[dict[str, object]]:
    """The episode record (upstream's shape, for re-judging), every exchange in order, and the judgement.

    Model exchanges keep the last message sent (a simulator follow-up is just the request) and the reply.
    """
    entries: list[dict[str, object]] = [{"kind": "episode", "input": episode.input, "record": episode.to_record()}]
    pending = list(http_log)
    for entry in episode.trace:
        shown: dict[str, object] = {key: value for key, value in entry.items() if key != "messages"}
        messages = entry.get("messages")
        if messages:
            shown["request"] = _clip(messages[-1]["content"])
            shown["turns"] = len(messages)
        shown["reply"] = _clip(entry.get("reply"))
        entries.append(shown)
        if entry.get("kind") == "agent":  # the step's API calls follow the turn that asked for them
            entries.extend(http for http in pending if http["step"] == entry["step"])
            pending = [http for http in pending if http["step"] != entry["step"]]
    entries.extend(pending)
    if judgement.judged:
        entries.append({"kind": "judge", "prompt": judgement.prompt, "output": judgement.output,
                        "process": judgement.process, "response": judgement.response})
    return entries


def _answer(episode: Episode, judgement: Judgement, transcript: list[dict[str, object]],
            meters: dict[str, Meter | None]) -> Answer:
    tokens = role_tokens(meters)
    agent = meters.get("agent")
    state = {"record": episode.to_record(), "input": episode.input, "judgement": asdict(judgement)}
    output = episode.output if episode.error is None else None
    return Answer(output, agent.latency_s if agent else 0.0, tokens, transcript, state=state)

