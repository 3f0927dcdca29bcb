"""One ToolAlpaca episode: the test_v1 agent loop over the API's tools (toolalpaca-gpt4tools §2).

The loop is langchain 0.0.147's zero-shot agent executor as upstream configured it: one model call per step,
the role-tagged transcript as scratchpad, at most 15 tool steps, a response marker ends the episode, an
unparsable turn or an uncaught tool failure ends it as an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..json_ops import item
from .data import ToolAlpacaCase, credentials_for
from .episode import ITERATION_LIMIT_ERROR, Episode, Observation, Step, TraceEntry
from .modelfn import ModelFn, ask
from .parser import AgentFinish, OutputParseError, apply_stop, parse_output
from .prompts import (
    GET_DETAILS,
    RETRIEVAL,
    Prompts,
    agent_messages,
    agent_tools,
    render_agent_prompt,
    render_scratchpad,
)
from .simulator import DEFAULT_SERVER_URL, Simulator
from .tools import (
    EpisodeFiles,
    GetDetails,
    Retrieval,
    ToolCrash,
    Transport,
    call_function,
    invalid_action_message,
)

__all__ = [
    "AGENT_MAX_NEW_TOKENS",
    "AGENT_TEMPERATURE",
    "MAX_STEPS",
    "USER_MODEL",
    "USER_TEMPERATURE",
    "EpisodeModels",
    "EpisodeSettings",
    "agent_input",
    "run_episode",
]

# Sampling settings of upstream's run, for whoever builds the model functions (§2.3, §2.8).
AGENT_TEMPERATURE = 0.0  # greedy
AGENT_MAX_NEW_TOKENS = 1024
USER_MODEL = "gpt-3.5-turbo"
USER_TEMPERATURE = 1.0
# (Upstream's retrievalDataFromFile helper ran gpt-3.5-turbo-16k-0613 at temperature 1.0; the user model plays it.)
MAX_STEPS = 15  # langchain's default max_iterations, not overridden upstream (§2.9)


@dataclass(frozen=True)
class EpisodeModels:
    """The chat functions an episode may call.

    Attributes:
        agent: the model under test. Bind greedy decoding, 1024 new tokens and `parser.STOP_SEQUENCES` when
            building it; the loop cuts at the stop strings itself too.
        simulator: the API simulator model (simulated subset).
        user: the getDetails user simulator.
        retrieval: the retrievalDataFromFile helper model (real subset).
    """

    agent: ModelFn
    simulator: ModelFn | None = None
    user: ModelFn | None = None
    retrieval: ModelFn | None = None


@dataclass(frozen=True)
class EpisodeSettings:
    """Knobs of an episode; the defaults are upstream's evaluation setup.

    Attributes:
        max_steps: tool steps before the forced stop.
        with_get_details: offer getDetails (upstream's flag is inverted; training and the released outputs
            have it, §2.8).
        server_url: the simulator address upstream's client used (visible to the simulator model).
        simulator_cache: keep the simulator conversation within the episode (upstream ``--use_cache``).
        fix_relative_paths: add the leading slash a route lacks (Fruityvice); off for upstream-compatible runs.
        clock: seconds since the epoch, for the names of offloaded files.
    """

    max_steps: int = MAX_STEPS
    with_get_details: bool = True
    server_url: str = DEFAULT_SERVER_URL
    simulator_cache: bool = True
    fix_relative_paths: bool = False
    clock: Callable[[], float] = time.time


def agent_input(case: ToolAlpacaCase, credentials: Mapping[str, str] | None = None) -> str:
    """The agent's input: the instruction, plus an authentication line when the API needs keys (§2.2).

    Args:
        credentials: parameter -> value; read from the environment (see data.CREDENTIAL_ENV_VARS) when None.
    """
    authentication = case.api.record.Authentication
    if not authentication:
        return case.instruction
    values = credentials if credentials is not None else credentials_for(case)
    pairs = " ".join(f"{name}={values[name]}" for name in authentication)
    return f"{case.instruction}\nAuthentication information: {pairs}"


async def run_episode(
    case: ToolAlpacaCase,
    prompts: Prompts,
    models: EpisodeModels,
    *,
    transport: Transport | None = None,
    credentials: Mapping[str, str] | None = None,
    settings: EpisodeSettings = EpisodeSettings(),
) -> Episode:
    """Run the agent on one instruction and return what upstream's generation step would record.

    Args:
        case: the instruction.
        prompts: the data folder's prompts (data.load_prompts).
        models: the chat functions; the simulator is needed for the simulated subset unless `transport` is
            given, the user model when getDetails is offered, the retrieval model for the real subset.
        transport: how API requests are sent. Default: a fresh per-episode `Simulator` for the simulated
            subset; required for the real subset (an HTTP client).
        credentials: real-API keys by authentication parameter (default: from the environment).
        settings: loop and tool options.

    Raises:
        ValueError: a model or transport the episode needs was not given.
        MissingPromptError: a helper tool's description is missing from the data folder.
        Any exception of the model functions (infrastructure faults are not episode errors).
    """
    api = case.api
    user_input = agent_input(case, credentials)
    tools = agent_tools(api, prompts, with_get_details=settings.with_get_details)
    tool_names = [tool.name for tool in tools]
    trace: list[TraceEntry] = []
    files = EpisodeFiles(settings.clock)

    if case.subset == "simulated":
        base_url = f"{settings.server_url}/{api.name}"
        if transport is None:
            if models.simulator is None:
                raise ValueError("the simulated subset needs a simulator model (EpisodeModels.simulator)")
            transport = Simulator(
                api, prompts.simulator, models.simulator, server_url=settings.server_url,
                use_cache=settings.simulator_cache, trace=trace,
            )
    else:
        base_url = api.server_url
        if transport is None:
            raise ValueError(f"the {case.subset} subset needs an HTTP transport")
    get_details = None
    if settings.with_get_details:
        if models.user is None:
            raise ValueError("getDetails needs a user model (EpisodeModels.user)")
        get_details = GetDetails(models.user, prompts.get_details, trace)
    retrieval = None
    if RETRIEVAL in tool_names:
        if models.retrieval is None:
            raise ValueError("retrievalDataFromFile needs a retrieval model (EpisodeModels.retrieval)")
        retrieval = Retrieval(models.retrieval, prompts.retrieval, files, trace)

    async def act(tool: str, tool_input: str) -> Observation:
        if tool == GET_DETAILS and get_details is not None:
            return await get_details(tool_input, user_input)
        if tool == RETRIEVAL and retrieval is not None:
            return await retrieval(tool_input)
        if tool in api.record.Function_Projection:
            route, method = api.record.Function_Projection[tool]
            return await call_function(
                tool_input,
                operation=item(item(api.spec["paths"], route), method),
                route=route,
                method=method,
                base_url=base_url,
                transport=transport,
                files=files,
                retrieval_available=api.uses_retrieval,
                fix_relative_path=settings.fix_relative_paths,
            )
        return invalid_action_message(tool, tool_names)

    steps: list[Step] = []

    def ended(**outcome: str | None) -> Episode:
        return Episode(input=user_input, steps=tuple(steps), trace=tuple(trace), **outcome)

    for _ in range(settings.max_steps):
        prompt = render_agent_prompt(prompts.agent, tools, user_input, render_scratchpad(steps))
        answer = await ask(models.agent, agent_messages(prompt))
        text = apply_stop(answer.text)
        trace.append({"kind": "agent", "step": len(steps), "reply": answer.text})
        try:
            parsed = parse_output(text)
        except OutputParseError as exc:
            # ToolAlpaca quirk: no parse-error recovery in langchain 0.0.147; the instance is an error
            # (toolalpaca-gpt4tools §2.4)
            return ended(error=str(exc))
        if isinstance(parsed, AgentFinish):
            return ended(output=parsed.output, final_thought=parsed.final_thought)
        try:
            observation = await act(parsed.tool, parsed.tool_input)
        except ToolCrash as exc:
            return ended(error=str(exc))
        steps.append(Step(parsed.tool, parsed.tool_input, parsed.log, observation))
    # ToolAlpaca quirk: the step cap ends the episode as an error record (toolalpaca-gpt4tools §2.9)
    return ended(error=ITERATION_LIMIT_ERROR)
