"""Agent-loop episodes with scripted models, judged and scored (toolalpaca-gpt4tools §2, §4)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _toolalpaca import (
    Script,
    action,
    response,
    simulated,
    toy_case,
    toy_prompts,
    with_helpers,
)

from pytest_tooleval.suites.toolalpaca.agent import (
    EpisodeModels,
    EpisodeSettings,
    run_episode,
)
from pytest_tooleval.suites.toolalpaca.episode import ITERATION_LIMIT_ERROR, Episode
from pytest_tooleval.suites.toolalpaca.judge import Judgement, judge_episode
from pytest_tooleval.suites.toolalpaca.scoring import summarise, verdict
from pytest_tooleval.suites.toolalpaca.suite import REAL_OPT_IN_REASON, ToolAlpacaSuite
from pytest_tooleval.suites.toolalpaca.tools import (
    ERROR_ADVICE,
    HttpRequest,
    HttpResponse,
    TransportError,
)

PROMPTS = toy_prompts()
YES_YES = "## Analysis\nFine.\n## Results\nProcess Correctness: Yes\nFinal Response Correctness: Yes"


def play(
    case: Any,
    agent: Script,
    *,
    simulator: Script | None = None,
    user: Script | None = None,
    retrieval: Script | None = None,
    **kwargs: Any,
) -> Episode:
    models = EpisodeModels(agent, simulator or Script(name="simulator"), user or Script(name="user"), retrieval)
    return asyncio.run(run_episode(case, kwargs.pop("prompts", PROMPTS), models, **kwargs))


def judge(case: Any, episode: Episode, *replies: str) -> tuple[Judgement, Script]:
    model = Script(*replies, name="judge")
    return asyncio.run(judge_episode(case, episode, model, PROMPTS)), model


def test_a_correct_episode_is_recorded_judged_and_passes() -> None:
    case = toy_case(0)
    first = action("getForecast", '{"city": "Oslo", "days": 3}', thought=" I need the forecast.")
    agent = Script(first, response("Sunny for 3 days in Oslo."))
    sim = Script(simulated(200, {"city": "Oslo", "days": ["sun", "sun", "sun"]}), name="simulator")
    episode = play(case, agent, simulator=sim)

    observation = 'Status Code: 200. Response: {"city":"Oslo","days":["sun","sun","sun"]}'
    assert episode.to_record() == {
        "input": case.instruction,
        "output": "Sunny for 3 days in Oslo.",
        "Final Thought": "I have what I need.",
        "intermediate_steps": [[["getForecast", '{"city": "Oslo", "days": 3}', first], observation]],
    }
    # the second prompt continues the transcript: the step's raw text, its observation, the thought prefix
    assert agent.requests[1][0]["content"].endswith(
        f"USER: {case.instruction}\nASSISTANT Thought:{first}\nASSISTANT Observation: {observation}\nASSISTANT Thought:"
    )
    assert "https://weather.example.org/v2/forecast/Oslo?days=3" in sim.last_prompt

    judgement, judge_model = judge(case, episode, YES_YES)
    assert judge_model.last_prompt.endswith(
        f'1. Function: getForecast\nParameters: {{"city": "Oslo", "days": 3}}\nRetruns: {observation}\n'
        "2. Final Response: Sunny for 3 days in Oslo.\n\n## Analysis"
    )
    result = verdict(judgement, episode)
    assert result.valid and result.error_type == "" and result.process == 1.0
    assert result.calls == [{"tool": "getForecast", "input": '{"city": "Oslo", "days": 3}'}]


def test_a_wrong_tool_gets_the_invalid_action_observation_and_the_loop_goes_on() -> None:
    case = toy_case(0)
    agent = Script(action("getWeather", '{"city": "Oslo"}'), response("I could not find it."))
    episode = play(case, agent)
    assert episode.steps[0].observation == (
        "`getWeather` is not a valid action. The action must be one of "
        "['getDetails', 'getForecast', 'createAlert', 'listStations']."
    )
    assert episode.output == "I could not find it."
    judgement, _ = judge(case, episode, "## Results\nProcess Correctness: No\nFinal Response Correctness: No")
    assert verdict(judgement, episode).error_type == "process_no"


def test_a_parse_failure_ends_the_episode_as_an_unjudged_error() -> None:
    case = toy_case(0)
    episode = play(
        case,
        Script(action("getForecast", '{"city": "Oslo"}'), "It is sunny, I think."),
        simulator=Script(simulated(200, {}), name="simulator"),
    )
    assert episode.to_record() == {"error": "Could not parse LLM output: `It is sunny, I think.`"}
    assert not episode.judgeable
    judgement, judge_model = judge(case, episode)
    assert judgement == Judgement(judged=False) and judge_model.requests == []
    result = verdict(judgement, episode)
    assert (result.valid, result.error_type, result.error) == (
        False,
        "episode_error",
        "Could not parse LLM output: `It is sunny, I think.`",
    )


def test_the_step_limit_ends_the_episode_as_upstreams_error_record() -> None:
    case = toy_case(0)
    agent = Script(*[action("listStations", "{}")] * 15)
    sim = Script(*[simulated(200, {"stations": ["A"]})] * 15, name="simulator")
    episode = play(case, agent, simulator=sim)
    assert len(agent.requests) == 15 and len(episode.steps) == 15
    assert (episode.output, episode.error, episode.stopped) == (None, ITERATION_LIMIT_ERROR, True)
    assert episode.to_record() == {"error": ITERATION_LIMIT_ERROR}  # what generation.py writes
    judgement, judge_model = judge(case, episode, YES_YES)
    assert judgement == Judgement(judged=False) and judge_model.requests == []  # never judged
    result = verdict(judgement, episode)
    assert (result.valid, result.error_type, result.details["stopped"]) == (False, "episode_error", True)
    # the steps stay visible in the failure message and the transcript
    assert isinstance(result.calls, list) and len(result.calls) == 15
    shorter = play(
        case,
        Script(*[action("listStations", "{}")] * 2),
        simulator=Script(*[simulated(200, {})] * 2),
        settings=EpisodeSettings(max_steps=2),
    )
    assert len(shorter.steps) == 2 and shorter.stopped


def test_a_server_error_is_resent_by_the_tool() -> None:
    case = toy_case(0)
    # 503, re-sampled to the same 503 (accepted as a repeat), so the tool sees a 5xx and sends again
    sim = Script(
        simulated(503, {"error": "busy"}),
        simulated(503, {"error": "busy"}),
        simulated(200, {"ok": 1}),
        name="simulator",
    )
    episode = play(case, Script(action("getForecast", '{"city": "Oslo"}'), response("ok")), simulator=sim)
    assert episode.steps[0].observation == 'Status Code: 200. Response: {"ok":1}'
    assert len(sim.requests) == 3
    assert [message["role"] for message in sim.requests[2]] == ["user", "assistant", "user"]  # the cached chat


def test_persistent_server_errors_are_reported_after_three_sends() -> None:
    sent: list[HttpRequest] = []

    async def failing(request: HttpRequest) -> HttpResponse:
        sent.append(request)
        return HttpResponse(502, "Bad Gateway", "text/html")

    episode = play(toy_case(0), Script(action("getForecast", '{"city": "Oslo"}'), response("Down.")), transport=failing)
    assert len(sent) == 3
    assert episode.steps[0].observation == "Status Code: 502. Response: Bad Gateway" + ERROR_ADVICE


def test_an_oversized_response_is_cut_to_3000_characters() -> None:
    sim = Script(simulated(200, {"text": "w" * 4000}), name="simulator")
    episode = play(toy_case(0), Script(action("getForecast", '{"city": "Oslo"}'), response("Long.")), simulator=sim)
    observation = episode.steps[0].observation
    assert isinstance(observation, str) and len(observation) == 3000
    assert observation.startswith('Status Code: 200. Response: {"text":"www')


def test_a_missing_parameter_is_reported_without_calling_the_api() -> None:
    sim = Script(name="simulator")
    agent = Script(action("createAlert", '{"email": "a@b.c"}'), response("Need more."))
    episode = play(toy_case(1), agent, simulator=sim)
    assert episode.steps[0].observation == (
        'Missing required parameters: "region", "level". You need to change the input and try again.'
    )
    assert sim.requests == []


def test_an_unparseable_judge_verdict_is_reported_and_counts_as_not_correct() -> None:
    case = toy_case(0)
    episode = play(
        case,
        Script(action("listStations", "{}"), response("A.")),
        simulator=Script(simulated(200, {}), name="simulator"),
    )
    judgement, _ = judge(case, episode, "## Results\nProcess Correctness: Probably\nFinal Response Correctness: Yes")
    assert (judgement.judged, judgement.unparsed, judgement.correct) == (True, True, False)
    assert verdict(judgement, episode).error_type == "judge_unparsed"
    missing, _ = judge(case, episode, "I refuse to grade this.")
    assert (missing.process, missing.response, missing.unparsed) == ("", "", True)
    summary = summarise([judgement, missing, Judgement(judged=False)])
    assert summary.statistics()["process"] == {"Yes": 0, "No": 0, "Uncertain": 0, "unparsed": 2}
    assert (summary.num, summary.error_num, summary.overall_rate, summary.response_rate) == (3, 1, 0.0, 100 / 3)


def test_results_heading_is_where_the_verdict_is_read() -> None:
    case = toy_case(0)
    episode = play(
        case,
        Script(action("listStations", "{}"), response("A.")),
        simulator=Script(simulated(200, {}), name="simulator"),
    )
    text = "Process Correctness: Yes\nFinal Response Correctness: Yes\n## Results\nProcess Correctness: No\n"
    judgement, _ = judge(case, episode, text)
    assert (judgement.process, judgement.response) == ("No", "")


def test_get_details_is_answered_by_the_user_simulator() -> None:
    case = toy_case(1)
    agent = Script(
        action("getDetails", '{"Question": "What is your email?"}'),
        action("createAlert", '{"region": "north", "email": "me@x.org", "level": 2}'),
        response("Alert created."),
    )
    user = Script("[User]: It is me@x.org\n[AI]: Thanks!", name="user")
    sim = Script(simulated(201, {"id": 9}), name="simulator")
    episode = play(case, agent, simulator=sim, user=user)
    assert [step.observation for step in episode.steps] == ["It is me@x.org", 'Status Code: 201. Response: {"id":9}']
    # the instruction is stored stripped, the question as the parsed object
    assert user.last_prompt == (
        "Answer as the user.\n\n[User]: Alert me about storms.\n[AI]: {'Question': 'What is your email?'}"
    )
    assert '-d \'{"email": "me@x.org", "level": 2}\'' in sim.last_prompt
    assert [entry["kind"] for entry in episode.trace] == ["agent", "user", "agent", "simulator", "agent"]


def test_answering_without_any_tool_is_an_unjudged_failure() -> None:
    case = toy_case(0)
    episode = play(case, Script(response("Probably sunny.")))
    assert episode.error is None and episode.output == "Probably sunny." and not episode.judgeable
    judgement, _ = judge(case, episode)
    assert verdict(judgement, episode).error_type == "no_tool_call"


def test_a_transport_crash_ends_the_episode_as_an_error() -> None:
    async def unreachable(request: HttpRequest) -> HttpResponse:
        raise TransportError("Failed to establish a new connection")

    episode = play(toy_case(0), Script(action("getForecast", '{"city": "Oslo"}')), transport=unreachable)
    assert episode.to_record() == {"error": "Failed to establish a new connection"}


def test_real_mode_sends_to_the_server_url_with_credentials_and_retrieval() -> None:
    case = toy_case(0, "real", Authentication={"key": "***"}, external_tools=["retrieval"])
    sent: list[HttpRequest] = []

    async def http(request: HttpRequest) -> HttpResponse:
        sent.append(request)
        return HttpResponse(200, json.dumps({"hours": list(range(900))}))

    agent = Script(
        action("getForecast", '{"city": "Oslo", "key": "s3cret"}'),
        lambda messages: action(
            "retrievalDataFromFile",
            json.dumps(
                {"file_path": messages[0]["content"].rsplit("the file: ", 1)[1].split("\n", 1)[0], "query": "hour 5"}
            ),
        ),
        response("Hour 5 is 5."),
    )
    helper = Script("5", name="retrieval")
    episode = play(
        case,
        agent,
        retrieval=helper,
        transport=http,
        credentials={"key": "s3cret"},
        settings=EpisodeSettings(clock=lambda: 1_700_000_000.0),
    )
    assert episode.input == case.instruction + "\nAuthentication information: key=s3cret"
    assert sent[0].url == "https://weather.example.org/v2/forecast/Oslo"
    assert episode.steps[0].observation == (
        "The output is too long. You need to use the 'retrievalDataFromFile' function to retrieve the output from "
        "the file: ./tmp/retrieval_1700000000.txt"
    )
    assert episode.steps[1].observation == {"retrieved_info": "5"}
    assert "ASSISTANT Observation: {'retrieved_info': '5'}" in agent.last_prompt
    assert "retrievalDataFromFile" in agent.requests[0][0]["content"].split("\n\n")[1]


def test_missing_models_and_transports_are_configuration_errors() -> None:
    with pytest.raises(ValueError, match="needs a simulator model"):
        asyncio.run(run_episode(toy_case(0), PROMPTS, EpisodeModels(Script(), user=Script())))
    with pytest.raises(ValueError, match="needs an HTTP transport"):
        asyncio.run(run_episode(toy_case(0, "real"), PROMPTS, EpisodeModels(Script(), user=Script())))
    with pytest.raises(ValueError, match="getDetails needs a user model"):
        asyncio.run(run_episode(toy_case(0), PROMPTS, EpisodeModels(Script(), Script())))


def test_suite_facade_end_to_end_on_the_published_data(toolalpaca_dir: Path) -> None:
    suite = ToolAlpacaSuite(toolalpaca_dir)
    suite.prompts = with_helpers(suite.prompts)  # stand-ins: the prepared folder lacks upstream agent/tools.py
    case = next(c for c in suite.cases(("simulated",)) if c.test_id == "simulated-AbuseIPDB-3")
    step = '{"categories": ["DDoS"], "startDate": "2024-05-01", "endDate": "2024-06-01"}'
    agent = Script(action("searchReports", step), response("There were 2 reports."))
    sim = Script(simulated(200, {"totalResults": 2, "reports": []}), name="simulator")
    episode = asyncio.run(suite.run(case, EpisodeModels(agent, sim, Script(name="user"))))
    assert verdict(asyncio.run(suite.judge(case, episode, Script(YES_YES))), episode).valid
    assert "curl -X GET " in sim.last_prompt and sim.last_prompt.endswith(
        " https://docs.abuseipdb.com/search?categories=DDoS&startDate=2024-05-01&endDate=2024-06-01"
    )
    real = next(c for c in suite.cases(("real",)) if c.api_name == "WolframAlpha")
    assert suite.skip_reason(real, real_enabled=False) == REAL_OPT_IN_REASON
    assert suite.skip_reason(real, real_enabled=True, environ={}) == (
        "WolframAlpha needs an API key: set TOOLEVAL_WOLFRAMALPHA_APPID"
    )
    assert suite.skip_reason(real, real_enabled=True, environ={"TOOLEVAL_WOLFRAMALPHA_APPID": "x"}) is None
