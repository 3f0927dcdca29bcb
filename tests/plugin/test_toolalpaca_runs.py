"""ToolAlpaca end to end: the fake OpenAI server plays agent, simulator, user and judge (by the request's
"model"), a local HTTP server plays a real API; a synthetic data folder of our own (mini_toolalpaca)."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, last_user_message
from mini_toolalpaca import write_mini_toolalpaca
from upstream_data import recorded

THIN_TEST = benchmark_source("toolalpaca")

STOP = ["\nASSISTANT Observation:", "\n\tASSISTANT Observation:"]
LIMIT_ERROR = (
    "Did not get output keys that were expected. Got: {'intermediate_steps', 'output'}. "
    "Expected: {'Final Thought', 'intermediate_steps', 'output'}."
)
ADVICE_START = ". You should choose one of: (1) change the input and retry;"
YES_YES = (
    "## Analysis\nIt called the right function.\n## Results\nProcess Correctness: Yes\nFinal Response Correctness: Yes"
)
KEY_VAR = "TOOLEVAL_TOOLALPACA_TOY_RATES_API_KEY"
SECRET = "rates-secret-4711"


def action(tool: str, tool_input: str) -> str:
    return f" I should use a tool.\nASSISTANT Action: {tool}\nASSISTANT Action Input: {tool_input}"


def response(text: str) -> str:
    return f" I know the answer.\nASSISTANT Response: {text}"


def simulated(status: int, body: Any) -> str:
    return f"Status Code: {status}\nResponse: {json.dumps(body)}\nExplanation: made up."


def agent_turn(prompt: str) -> int:
    """How many observations the agent has seen: those in the transcript after the user's request."""
    return prompt.rsplit("\nUSER: ", 1)[1].count("\nASSISTANT Observation: ")


class Cast:
    """The fake server's responder: each role answers by the request's "model".

    The agent's turn is found from its prompt (the instruction it holds, and how many observations it has seen),
    so scripts hold however many samples run, in any order and in any process.
    """

    def __init__(
        self,
        agent: dict[str, list[str]],
        *,
        simulator: Callable[[str], str] | None = None,
        user: str = "Bergen, please.",
        retrieval: str = "EUR is 1.1 USD.",
        judge: dict[str, str] | None = None,
    ) -> None:
        self.agent = agent
        self.simulator = simulator or (lambda request: simulated(200, {"ok": True}))
        self.user = user
        self.retrieval = retrieval
        self.judge = judge or {}

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = last_user_message(body)
        model = body["model"]
        if model == "agent-m":
            turn = agent_turn(prompt)
            request = prompt.rsplit("\nUSER: ", 1)[1].split("\nASSISTANT Thought:", 1)[0]
            script = next(replies for instruction, replies in self.agent.items() if instruction in request)
            return script[min(turn, len(script) - 1)]
        if model == "sim-m":
            return self.simulator(prompt)
        if model == "user-m":
            return self.retrieval if prompt.startswith("Here is a saved output") else self.user
        if model == "judge-m":
            return next((reply for instruction, reply in self.judge.items() if instruction in prompt), YES_YES)
        raise AssertionError(f"unexpected model {model!r}")


class RealApi:
    """A stand-in real API on 127.0.0.1: fixed (status, body) per path, every request recorded."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str]] = {"/v1/latest": (200, '{"base": "EUR", "USD": 1.1}')}
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                status, body = outer.routes.get(self.path.split("?")[0], (404, '{"error": "no route"}'))
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def real_api() -> Iterator[RealApi]:
    api = RealApi()
    yield api
    api.close()


@pytest.fixture
def data_root(pytester: pytest.Pytester, real_api: RealApi, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", KEY_VAR):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_toolalpaca=THIN_TEST)
    return write_mini_toolalpaca(pytester.path / "data", real_server_url=real_api.url)


ROLE_MODELS = {"simulator": "sim-m", "toolalpaca-user": "user-m", "judge": "judge-m"}


def run_args(
    pytester: pytest.Pytester,
    server: FakeOpenAI,
    data_root: Path,
    *extra: str,
    roles: tuple[str, ...] = tuple(ROLE_MODELS),
) -> list[str]:
    """A live run: the agent and the given helper roles, each its own model name on the fake server."""
    role_args = [f"--tooleval-{role}-model={ROLE_MODELS[role]}" for role in roles]
    return [
        "--tooleval-model",
        "agent-m",
        "--tooleval-base-url",
        server.base_url,
        "--tooleval-api-key",
        "sk-x",
        *role_args,
        f"--tooleval-data-dir={data_root}",
        "--tooleval-categories=normal_atom_bool",  # the session preloads ACEBench: keep its mini tree small
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report",
        "report.json",
        *extra,
    ]


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    loaded = json.loads((pytester.path / "report.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def only_sample(pytester: pytest.Pytester) -> dict[str, Any]:
    samples: list[dict[str, Any]] = report(pytester)["samples"]
    assert len(samples) == 1
    return samples[0]


def bodies(server: FakeOpenAI, model: str) -> list[dict[str, Any]]:
    return [body for body in server.stats.bodies if body and body["model"] == model]


def record_of(sample: dict[str, Any]) -> dict[str, Any]:
    assert sample["transcript"][0]["kind"] == "episode"
    record: dict[str, Any] = sample["transcript"][0]["record"]
    return record


# ---------------------------------------------------------------------------------------------- simulated


def test_a_correct_episode_passes_with_every_exchange_recorded(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    call = action("getForecast", '{"city": "Oslo", "days": 3}')
    fake_openai.responder = Cast(
        {
            "What is the weather in Oslo": [
                call + "\nASSISTANT Observation: (made up by the agent)",
                response("Sunny in Oslo for 3 days."),
            ]
        },
        simulator=lambda request: simulated(200, {"city": "Oslo", "days": ["sun"] * 3}),
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-0", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_toolalpaca[[]simulated-Toy_Weather-0[]] PASSED*",
            "*ToolAlpaca (not upstream-compatible: *",
            "*simulated*1/3*100.0%*100.0%*100.0%*",
        ]
    )
    sample = only_sample(pytester)
    assert sample["details"]["process_correctness"] == "Yes" and sample["process"] == 1.0
    observation = 'Status Code: 200. Response: {"city":"Oslo","days":["sun","sun","sun"]}'
    assert record_of(sample) == {
        "input": "What is the weather in Oslo for 3 days?",
        "output": "Sunny in Oslo for 3 days.",
        "Final Thought": "I know the answer.",
        "intermediate_steps": [[["getForecast", '{"city": "Oslo", "days": 3}', call], observation]],
    }
    assert [entry["kind"] for entry in sample["transcript"]] == ["episode", "agent", "simulator", "agent", "judge"]
    assert "curl -X GET" in sample["transcript"][2]["request"]
    assert "https://weather.example.org/v2/forecast/Oslo?days=3" in sample["transcript"][2]["request"]
    assert sample["transcript"][-1]["output"] == YES_YES
    assert {"prompt", "completion", "simulator_prompt", "judge_prompt"} <= set(sample["tokens"])

    agent = bodies(fake_openai, "agent-m")
    assert len(agent) == 2
    assert agent[0]["stop"] == STOP and agent[0]["max_tokens"] == 1024 and agent[0]["temperature"] == 0
    assert "top_p" not in agent[0] and "n" not in agent[0]  # the agent sends the run's sampling only
    for helper in (*bodies(fake_openai, "sim-m"), *bodies(fake_openai, "judge-m")):
        assert (helper["top_p"], helper["n"]) == (1.0, 1)  # upstream's helper calls send both explicitly
    first, second = (body["messages"][0]["content"] for body in agent)
    assert first.startswith("You are a helpful assistant with tools.\nTools:\n\ngetDetails: ")
    assert second.endswith(f"{call}\nASSISTANT Observation: {observation}\nASSISTANT Thought:")
    (simulator,) = bodies(fake_openai, "sim-m")
    assert simulator["temperature"] == 0.5 and "stop" not in simulator
    (judge,) = bodies(fake_openai, "judge-m")
    assert judge["temperature"] == 0.2
    assert judge["messages"][0]["content"].endswith(
        f'1. Function: getForecast\nParameters: {{"city": "Oslo", "days": 3}}\nRetruns: {observation}\n'
        "2. Final Response: Sunny in Oslo for 3 days.\n\n## Analysis"
    )


def test_a_wrong_tool_gets_the_invalid_action_observation_and_the_judge_fails_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    verdict = (
        "## Analysis\nIt never listed the stations.\n## Results\nProcess Correctness: No\n"
        "Final Response Correctness: No"
    )
    fake_openai.responder = Cast(
        {"List every weather station": [action("getStations", "{}"), response("None.")]},
        judge={"List every weather station": verdict},
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "toolalpaca simulated-Toy_Weather-1: process_no (scorer: official)",
            "*error:    ## Analysis",
            "It never listed the stations.",
            "*expected: listStations {}*",
        ]
    )
    sample = only_sample(pytester)
    steps = record_of(sample)["intermediate_steps"]
    assert steps[0][1] == (
        "`getStations` is not a valid action. The action must be one of ['getDetails', 'getForecast', 'listStations']."
    )
    assert sample["error_type"] == "process_no" and sample["process"] == 0.0
    assert bodies(fake_openai, "sim-m") == []  # an unknown action never reaches the API


def test_a_parse_failure_ends_the_episode_unjudged(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    fake_openai.responder = Cast({"List every weather station": ["Stations are everywhere, I think."]})
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*simulated-Toy_Weather-1: episode_error*",
            "*error:*Could not parse LLM output: `Stations are everywhere, I think.`*",
            "*simulated*1/3*0*1*0*0.0%*0.0%*0.0%*",
        ]
    )
    sample = only_sample(pytester)
    assert record_of(sample) == {"error": "Could not parse LLM output: `Stations are everywhere, I think.`"}
    assert sample["details"]["judged"] is False
    assert bodies(fake_openai, "judge-m") == []  # upstream never sends crashed episodes to the judge


def test_the_step_limit_ends_the_episode_as_an_unjudged_error_record(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    """Upstream's pipeline (langchain 0.0.147): the forced stop lacks the declared "Final Thought" key, so the
    instance is recorded as an error, never judged, and counted as an error instance."""
    fake_openai.responder = Cast(
        {"List every weather station": [action("listStations", "{}")]},
        simulator=lambda request: simulated(200, {"stations": ["A", "B"]}),
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*simulated-Toy_Weather-1: episode_error*", "*simulated*1/3*0*1*0*0.0%*0.0%*0.0%*"])
    sample = only_sample(pytester)
    assert record_of(sample) == {"error": LIMIT_ERROR}
    assert len(bodies(fake_openai, "agent-m")) == 15 and bodies(fake_openai, "judge-m") == []
    assert sample["details"]["stopped"] is True and sample["details"]["judged"] is False


def test_an_oversized_simulated_response_is_cut_at_3000_characters(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    fake_openai.responder = Cast(
        {"List every weather station": [action("listStations", "{}"), response("Many stations.")]},
        simulator=lambda request: simulated(200, {"stations": [f"station-{n:04d}" for n in range(400)]}),
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-1")
    result.assert_outcomes(passed=1)
    observation = record_of(only_sample(pytester))["intermediate_steps"][0][1]
    assert len(observation) == 3000
    assert observation.startswith('Status Code: 200. Response: {"stations":["station-0000"')


def test_get_details_is_answered_by_the_user_model(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    fake_openai.responder = Cast(
        {
            "forecast for my home town": [
                action("getDetails", '{"Question": "Which town?"}'),
                action("getForecast", '{"city": "Bergen"}'),
                response("Rain in Bergen."),
            ]
        }
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-2")
    result.assert_outcomes(passed=1)
    sample = only_sample(pytester)
    assert record_of(sample)["intermediate_steps"][0][1] == "Bergen, please."
    (user,) = bodies(fake_openai, "user-m")
    assert user["temperature"] == 1.0
    assert user["messages"][0]["content"] == (
        "You are the user. Answer the assistant's question briefly.\n"
        "[User]: Tell me the forecast for my home town.\n[AI]: {'Question': 'Which town?'}"
    )
    assert [entry["kind"] for entry in sample["transcript"]][:4] == ["episode", "agent", "user", "agent"]


def test_an_unparseable_judge_verdict_is_reported_and_not_correct(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    fake_openai.responder = Cast(
        {"List every weather station": [action("listStations", "{}"), response("A and B.")]},
        judge={
            "List every weather station": "## Results\nProcess Correctness: Mostly\nFinal Response Correctness: Yes"
        },
    )
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root), "-k", "simulated-Toy_Weather-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*simulated-Toy_Weather-1: judge_unparsed*", "*simulated*1/3*0*0*1*0.0%*100.0%*0.0%*"])
    summary = report(pytester)["summary"]["toolalpaca"]["subsets"]["simulated"]
    assert summary["process"]["unparsed"] == 1 and summary["overall"] == 0.0


def full_subset() -> Cast:
    """The whole simulated subset: one right episode, one the judge fails, one never judged (no tool call)."""
    no = "## Results\nProcess Correctness: Yes\nFinal Response Correctness: No"
    return Cast(
        {
            "What is the weather in Oslo": [action("getForecast", '{"city": "Oslo"}'), response("Sunny.")],
            "List every weather station": [action("listStations", "{}"), response("A.")],
            "forecast for my home town": [response("I cannot know your town.")],  # no tool call: never judged
        },
        judge={"List every weather station": no},
    )


def test_a_full_subset_under_xdist_gives_upstream_percentages(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    fake_openai.responder = full_subset()
    result = pytester.runpytest_subprocess(
        *run_args(pytester, fake_openai, data_root),
        "-n",
        "2",
        "--tooleval-fail-under",
        "toolalpaca.simulated.overall=0.3",
    )
    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == pytest.ExitCode.OK  # the gate decides: 1/3 >= 0.3
    result.stdout.fnmatch_lines(
        ["*simulated*3/3*0*1*0*66.7%*33.3%*33.3%*", "*tooleval gate: toolalpaca.simulated.overall = 0.333 >= 0.300 ok*"]
    )
    summary = report(pytester)["summary"]["toolalpaca"]
    assert summary["partial"] is False
    assert summary["subsets"]["simulated"]["error_num"] == 1


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_under_batch_the_judge_is_asked_in_a_batch_and_scores_as_one_by_one(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, workers: list[str]
) -> None:
    fake_openai.responder = full_subset()
    one_by_one = pytester.runpytest_subprocess(
        *run_args(pytester, fake_openai, data_root), f"--tooleval-cache-dir={pytester.path / 'interactive-cache'}"
    )
    one_by_one.assert_outcomes(passed=1, failed=2)
    expected = [(row["id"], row["outcome"], row["valid"]) for row in report(pytester)["samples"]]
    judged, played = len(bodies(fake_openai, "judge-m")), len(bodies(fake_openai, "agent-m"))
    assert judged == 2
    fake_openai.reset_stats()
    result = pytester.runpytest_subprocess(
        *run_args(pytester, fake_openai, data_root), "--tooleval-batch", "--tooleval-batch-poll=0.05", *workers
    )
    result.assert_outcomes(passed=1, failed=2)
    assert [(row["id"], row["outcome"], row["valid"]) for row in report(pytester)["samples"]] == expected
    stats = fake_openai.stats
    assert (stats.batches_created, stats.batch_entries_answered) == (1, judged)
    assert bodies(fake_openai, "judge-m") == []  # the judge was asked in the batch only
    # the episodes were played once, as usual, and their tests found every answer in the cache
    assert len(bodies(fake_openai, "agent-m")) == played
    result.stdout.fnmatch_lines(
        [
            "tooleval batch: playing 3 episodes to collect their judge requests",
            "tooleval batch: submitted batch_1 (2 requests, window 24h)*",
            "tooleval batch: 2 answers from 1 batch (2 requests submitted, 0 resumed) in *",
        ]
    )


# ---------------------------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        (
            ("toolalpaca-user", "judge"),
            "*simulated ToolAlpaca APIs are played by a model: pass --tooleval-simulator-model*",
        ),
        (
            ("simulator", "judge"),
            "*getDetails tool, answered by a model playing the user: pass --tooleval-toolalpaca-user-model*",
        ),
    ],
)
def test_a_missing_helper_model_is_an_error_not_a_score(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, roles: tuple[str, ...], message: str
) -> None:
    fake_openai.default = "unused"
    args = run_args(pytester, fake_openai, data_root, roles=roles)
    result = pytester.runpytest(*args, "-k", "simulated-Toy_Weather-0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])
    assert fake_openai.stats.requests == 0
    assert only_sample(pytester)["outcome"] == "error"


def test_without_any_toolalpaca_model_the_samples_skip(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    """A run configured for another suite (no simulator, no user model) is not disturbed by ToolAlpaca's tests."""
    result = pytester.runpytest(*run_args(pytester, fake_openai, data_root, roles=()), "-rs")
    result.assert_outcomes(skipped=1)  # one placeholder: the data is not even looked for
    result.stdout.fnmatch_lines(
        [
            "*ToolAlpaca needs models for the simulated APIs and the user: pass "
            "--tooleval-simulator-model NAME and --tooleval-toolalpaca-user-model NAME*"
        ]
    )
    assert fake_openai.stats.requests == 0


def test_without_a_judge_model_the_sample_errors(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    args = run_args(pytester, fake_openai, data_root, roles=("simulator", "toolalpaca-user"))
    result = pytester.runpytest(*args, "--tooleval-judge-model=", "-k", "simulated-Toy_Weather-0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ToolAlpaca episodes are judged by a model: pass --tooleval-judge-model*"])
    assert fake_openai.stats.requests == 0


def test_without_helper_descriptions_the_error_names_the_missing_file(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    root = write_mini_toolalpaca(pytester.path / "bare", helper_descriptions=False)
    result = pytester.runpytest(*run_args(pytester, fake_openai, root), "-k", "simulated-Toy_Weather-0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*has neither {root / 'toolalpaca' / 'prompts.json'} key 'agent/tools.py' nor "
            f"{root / 'toolalpaca' / 'agent' / 'tools.py'}*"
        ]
    )
    assert fake_openai.stats.requests == 0


def test_oracle_skips_with_the_reason(pytester: pytest.Pytester, data_root: Path) -> None:
    result = pytester.runpytest(
        "--tooleval-model",
        "oracle",
        f"--tooleval-data-dir={data_root}",
        "-rs",
        "--tooleval-categories=normal_atom_bool",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-m",
        "toolalpaca",
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*ToolAlpaca has no oracle*"])


def test_a_data_folder_without_toolalpaca_collects_one_skipping_placeholder(
    pytester: pytest.Pytester, data_root: Path
) -> None:
    acebench_only = data_root / "acebench"
    result = pytester.runpytest(
        "--tooleval-model",
        "m",
        "--tooleval-simulator-model",
        "s",
        "-m",
        "toolalpaca",
        f"--tooleval-data-dir={acebench_only}",
        "-rs",
        "--tooleval-offline",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"*no ToolAlpaca data in {acebench_only}*"])


def test_subset_option_collects_both_subsets(pytester: pytest.Pytester, data_root: Path) -> None:
    result = pytester.runpytest(
        "--collect-only",
        "-q",
        "--tooleval-model",
        "m",
        "--tooleval-simulator-model",
        "s",
        "--tooleval-toolalpaca-subset",
        "all",
        f"--tooleval-data-dir={data_root}",
        "--tooleval-categories=normal_atom_bool",
        "-p",
        "no:cacheprovider",
        "-m",
        "real",
    )
    result.stdout.fnmatch_lines(
        [
            "test_toolalpaca.py::test_toolalpaca[[]real-Toy_Rates-0[]]",
            "test_toolalpaca.py::test_toolalpaca[[]real-Toy_Rates-1[]]",
            "2/5 tests collected (3 deselected)*",
        ]
    )


# ---------------------------------------------------------------------------------------------- real APIs


def real_args(pytester: pytest.Pytester, server: FakeOpenAI, data_root: Path, *extra: str) -> list[str]:
    return run_args(
        pytester, server, data_root, "--tooleval-toolalpaca-subset", "real", *extra, roles=("toolalpaca-user", "judge")
    )


def test_real_samples_skip_without_the_opt_in(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    real_api: RealApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    result = pytester.runpytest(*real_args(pytester, fake_openai, data_root), "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*real-API samples send live HTTP requests: opt in with --tooleval-toolalpaca-real*"])
    assert fake_openai.stats.requests == 0 and real_api.requests == []


def test_a_missing_credential_skips_with_the_variable_to_set(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, real_api: RealApi
) -> None:
    result = pytester.runpytest(*real_args(pytester, fake_openai, data_root, "--tooleval-toolalpaca-real"), "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines([f"*Toy Rates needs an API key: set {KEY_VAR}*"])
    assert fake_openai.stats.requests == 0 and real_api.requests == []


def test_a_real_call_sends_http_and_the_key_never_reaches_the_report(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    real_api: RealApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    call = action("latestRate", json.dumps({"base": "EUR", "api_key": SECRET}))
    fake_openai.responder = Cast({"What is the EUR exchange rate?": [call, response("1 EUR is 1.1 USD.")]})
    result = pytester.runpytest(
        *real_args(pytester, fake_openai, data_root, "--tooleval-toolalpaca-real"), "-k", "real-Toy_Rates-0"
    )
    result.assert_outcomes(passed=1)
    assert real_api.requests == [f"/v1/latest?base=EUR&api_key={SECRET}"]
    first_prompt = bodies(fake_openai, "agent-m")[0]["messages"][0]["content"]
    assert f"USER: What is the EUR exchange rate?\nAuthentication information: api_key={SECRET}\n" in first_prompt
    assert "retrievalDataFromFile: Read part of a long saved output." in first_prompt
    judge_prompt = bodies(fake_openai, "judge-m")[0]["messages"][0]["content"]
    assert "## Task Instruction\nWhat is the EUR exchange rate?\n\n" in judge_prompt  # no authentication line
    text = (pytester.path / "report.json").read_text()
    assert SECRET not in text
    sample = only_sample(pytester)
    http_entry = next(entry for entry in sample["transcript"] if entry["kind"] == "http")
    assert http_entry["status"] == 200 and http_entry["url"].endswith("/v1/latest?base=EUR&api_key=***")
    assert record_of(sample)["intermediate_steps"][0][1] == 'Status Code: 200. Response: {"base": "EUR", "USD": 1.1}'


def test_a_5xx_real_response_is_sent_three_times_then_shown_with_the_advice(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    real_api: RealApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    real_api.routes["/v1/latest"] = (503, '{"error": "busy"}')
    call = action("latestRate", json.dumps({"base": "EUR", "api_key": SECRET}))
    fake_openai.responder = Cast({"What is the EUR exchange rate?": [call, response("The service is down.")]})
    result = pytester.runpytest(
        *real_args(pytester, fake_openai, data_root, "--tooleval-toolalpaca-real"), "-k", "real-Toy_Rates-0"
    )
    result.assert_outcomes(passed=1)
    assert len(real_api.requests) == 3
    observation = record_of(only_sample(pytester))["intermediate_steps"][0][1]
    assert observation.startswith('Status Code: 503. Response: {"error": "busy"}' + ADVICE_START)


def test_an_oversized_real_response_is_offloaded_for_retrieval(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    real_api: RealApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    rates = {f"C{n:03d}": n / 7 for n in range(300)}
    real_api.routes["/v1/latest"] = (200, json.dumps({"base": "USD", "rates": rates}))

    first = action("latestRate", json.dumps({"base": "USD", "api_key": SECRET}))
    cast = Cast({"Show all rates against USD.": [first, "(replaced below)", response("EUR is 1.1 USD.")]})

    def respond(body: dict[str, Any]) -> str:
        prompt = last_user_message(body)
        if body["model"] == "agent-m" and agent_turn(prompt) == 1:
            path = prompt.rsplit("retrieve the output from the file: ", 1)[1].split("\n", 1)[0]
            return action("retrievalDataFromFile", json.dumps({"file_path": path, "query": "EUR"}))
        return cast(body)

    fake_openai.responder = respond
    result = pytester.runpytest(
        *real_args(pytester, fake_openai, data_root, "--tooleval-toolalpaca-real"), "-k", "real-Toy_Rates-1"
    )
    result.assert_outcomes(passed=1)
    steps = record_of(only_sample(pytester))["intermediate_steps"]
    assert steps[0][1].startswith(
        "The output is too long. You need to use the 'retrievalDataFromFile' function "
        "to retrieve the output from the file: ./tmp/retrieval_"
    )
    assert steps[1][1] == {"retrieved_info": "EUR is 1.1 USD."}
    (retrieval,) = bodies(fake_openai, "user-m")
    assert retrieval["messages"][0]["content"].startswith("Here is a saved output:\nStatus Code: 200. Response: ")
    assert retrieval["messages"][0]["content"].endswith("\nExtract: EUR")


# ---------------------------------------------------------------------------------------------- replay, import


def test_recorded_episodes_are_judged_again_without_simulating(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    steps = [[["listStations", "{}", "log"], 'Status Code: 200. Response: {"stations":["A"]}']]
    episode = {
        "input": "List every weather station.",
        "output": "A.",
        "Final Thought": "Done.",
        "intermediate_steps": steps,
    }
    rows = pytester.path / "episodes.jsonl"
    rows.write_text(json.dumps({"id": "simulated-Toy_Weather-1", "episode": episode}) + "\n")
    generation = pytester.path / "api_data_0_1.json"  # upstream's generation output: Instances beside Instructions
    generation.write_text(
        json.dumps(
            [
                {
                    "Name": "Toy Weather",
                    "Instructions": ["..."] * 3,
                    "Instances": [{"error": "boom"}, episode, {"input": "x", "output": "y", "intermediate_steps": []}],
                }
            ]
        )
    )
    fake_openai.responder = Cast({})
    args = run_args(pytester, fake_openai, data_root, roles=("judge",))
    pytester.runpytest(*args, f"--tooleval-model=replay:{rows}", "-k", "simulated-Toy_Weather-1").assert_outcomes(
        passed=1
    )
    pytester.runpytest(*args, f"--tooleval-model=replay:{generation}", "--tooleval-cache=reuse").assert_outcomes(
        passed=1, failed=2
    )
    models = {body["model"] for body in fake_openai.stats.json_bodies}
    assert models == {"judge-m"}
    assert fake_openai.stats.requests == 1  # the same episode judged twice: the second answer came from the cache
    failures = {
        sample["id"]: sample["error_type"] for sample in report(pytester)["samples"] if sample["outcome"] == "failed"
    }
    assert failures == {"simulated-Toy_Weather-0": "episode_error", "simulated-Toy_Weather-2": "no_tool_call"}


def test_a_missing_recorded_episode_is_an_error(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path
) -> None:
    rows = pytester.path / "episodes.jsonl"
    rows.write_text(json.dumps({"id": "simulated-Toy_Weather-1", "result": "text"}) + "\n")
    result = pytester.runpytest(
        *run_args(pytester, fake_openai, data_root, roles=("judge",)),
        "--tooleval-model",
        f"replay:{rows}",
        "-k",
        "simulated-Toy_Weather-1",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no recorded episode for simulated-Toy_Weather-1 in*"])


def test_import_of_the_published_7b_judgments(pytester: pytest.Pytester, toolalpaca_dir: Path) -> None:
    result = pytester.run(
        sys.executable,
        "-m",
        "pytest_tooleval",
        "import-judged",
        str(recorded(toolalpaca_dir, "judged/ToolAlpaca7b.json")),
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*ToolAlpaca7b*100/100*0*1*0*63.0%*68.0%*60.0%*",
            "ToolAlpaca7b.json: Procedure 63.0, Response 68.0, Overall 60.0 (100 instructions, 1 unjudged; "
            "its statistics block agrees; our parser re-reads 0 stored verdicts differently)",
        ]
    )


def test_import_of_a_missing_file_says_so(pytester: pytest.Pytester) -> None:
    result = pytester.run(sys.executable, "-m", "pytest_tooleval", "import-judged", "nowhere.json")
    assert result.ret == 2
    result.stderr.fnmatch_lines(["error: nowhere.json: file is missing"])


def test_under_xdist_the_probe_asks_every_toolalpaca_role_once(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe runs in the controller's hub after the suites are loaded: the simulator, user and judge models
    are in it, each asked once with its own parameters, and the episodes then run as without it."""
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    cast = Cast({"What is the weather in Oslo": [action("getForecast", '{"city": "Oslo"}'), response("Sunny.")]})
    fake_openai.responder = lambda body: (
        "ok" if last_user_message(body) == "Reply with the single word: ok" else cast(body)
    )
    result = pytester.runpytest_subprocess(
        *run_args(pytester, fake_openai, data_root), "-n", "2", "-k", "simulated-Toy_Weather-0"
    )
    result.assert_outcomes(passed=1)
    probes = [body for body in fake_openai.stats.bodies if body and last_user_message(body).startswith("Reply with")]
    assert sorted(body["model"] for body in probes) == ["agent-m", "judge-m", "sim-m", "user-m"]
    assert all(body["top_p"] == 1.0 and body["n"] == 1 for body in probes if body["model"] != "agent-m")
    profile = report(pytester)["fingerprint"]["endpoint_profile"]
    assert {role: entry["model"] for role, entry in profile.items()} == {
        "model": "agent-m",
        "simulator": "sim-m",
        "toolalpaca_user": "user-m",
        "judge": "judge-m",
    }
