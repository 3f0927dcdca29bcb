"""ACEBench in function-calling mode (--tooleval-mode fc|both): the functions as `tools`, answers as `tool_calls`,
through the real openai client against the fake server's tool-calling dialect; replays, the probe and `both`."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import TOOLS_REFUSED, FakeOpenAI, ToolCalls, last_user_message
from mini_acebench import RIGHT, RIGHT_CALLS, SAMPLES, SCHEMA, answer_in_calls, live_mini_run
from pytest_tooleval.models.factory import PROBE_TOOL_PROMPT
from pytest_tooleval.suites.acebench.revisions import DEFAULT, revision
from refused_runs import refused_line
from upstream_data import recorded

FC_TITLE = "function calling (--tooleval-mode fc: not the leaderboard protocol)"
NO_TOOL_CALL = "tooleval: no tool call in"


@pytest.fixture
def mini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server = FakeOpenAI(responder=answer_in_calls).start()
    yield server, live_mini_run(pytester, server.base_url, "fake-model", "sk-fc-0123456789")
    server.stop()


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((pytester.path / "report.json").read_text())
    return loaded


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_fc_mode_offers_tools_and_scores_the_tool_calls(
    pytester: pytest.Pytester, mini: Any, workers: list[str]
) -> None:
    server, args = mini
    result = pytester.runpytest_subprocess(
        *args, *workers, "--tooleval-mode=fc", "-v", "--tooleval-fail-under=acebench.en.fc.overall=1.0"
    )
    result.assert_outcomes(passed=SAMPLES)
    assert result.ret == 0  # the gate on the fc figure held
    assert any("[en-normal_atom_bool_0-fc]" in line and "PASSED" in line for line in result.stdout.lines)
    # the mini tree's own files: scored against the default revision, unverified (the title says both)
    result.stdout.fnmatch_lines([f"ACEBench en (56dd66c, data unverified), {FC_TITLE}*"])
    bodies = [body for body in server.stats.bodies if body]
    assert len(bodies) == SAMPLES
    # the ACEBench schema as a JSON Schema tool, once per request
    assert all(body["tools"] == [{"type": "function", "function": SCHEMA}] for body in bodies)
    systems = {body["messages"][0]["content"] for body in bodies}
    # the output-format sentence and the function list are left out: the functions travel as tools
    assert all("ApiName" not in system and "get_weather" not in system for system in systems)
    assert any(system.startswith("You call APIs.") for system in systems)
    # a transcript question becomes chat turns: the earlier call (with no result in it) stays assistant text
    quito = next(body for body in bodies if "and Quito" in json.dumps(body))
    assert [message["role"] for message in quito["messages"]] == ["system", "user", "assistant", "user"]
    run = report(pytester)
    assert run["fingerprint"]["acebench"]["mode"] == "fc"
    assert {row["variant"] for row in run["samples"]} == {"fc"}
    assert list(run["summary"]["acebench"]) == ["en.fc"]  # never reported as the text protocol's figures
    assert run["summary"]["acebench"]["en.fc"]["categories"]["normal_atom_bool"]["accuracy"] == 1.0
    # every request offered the tools with tool_choice "auto"; 5 of the answers called one (2 are in words)
    assert all(body["tool_choice"] == "auto" for body in bodies)
    assert run["totals"]["tool_answers"] == {"asked": SAMPLES, "called": SAMPLES - 2}
    assert NO_TOOL_CALL not in result.stdout.str()


def test_an_fc_run_has_no_text_protocol_figures_to_gate_on(pytester: pytest.Pytester, mini: Any) -> None:
    server, args = mini
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc", "--tooleval-fail-under=acebench.en.overall=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tooleval-fail-under: no figure 'acebench.en.overall' in this run*en.fc.overall*"])
    assert server.stats.requests == 0


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_transcript_with_a_call_and_its_result_passes_where_null_content_is_refused(
    pytester: pytest.Pytester, mini: Any, workers: list[str]
) -> None:
    """A multi-turn question whose history holds a call and its result is sent as an assistant `tool_calls`
    message with `content: ""`: llama-cpp-python answers null content with a 500 (issue 26)."""
    server, args = mini
    server.refuse_null_content = True
    folder = pytester.path / "data" / "acebench" / "data_all" / "data_en"
    sample = "normal_multi_turn_user_adjust_0_2"
    question = (
        "user: weather in Lima?\nsystem: [get_weather(city='Lima')]\nsystem: {\"temp\": 21}\nuser: and in Bogota?"
    )
    for path, record in (
        (
            folder / "data_normal_multi_turn_user_adjust.json",
            {"id": sample, "question": question, "function": [SCHEMA], "time": ""},
        ),
        (
            folder / "possible_answer" / "data_normal_multi_turn_user_adjust.json",
            {"id": sample, "ground_truth": {"get_weather": {"city": "Bogota"}}},
        ),
    ):
        with path.open("a") as file:
            file.write(json.dumps(record) + "\n")
    server.responder = lambda body: (
        ToolCalls.of(("get_weather", {"city": "Bogota"}))
        if "and in Bogota" in last_user_message(body)
        else answer_in_calls(body)
    )
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc", "-v", *workers)
    result.assert_outcomes(passed=SAMPLES + 1)
    assert any(f"[en-{sample}-fc]" in line and "PASSED" in line for line in result.stdout.lines)
    [body] = [body for body in server.stats.bodies if body and "and in Bogota" in last_user_message(body)]
    assert [message["role"] for message in body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assert body["messages"][2]["content"] == "" and body["messages"][2]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Lima"}',
    }


def test_malformed_arguments_are_a_format_error_keeping_the_raw_text(pytester: pytest.Pytester, mini: Any) -> None:
    server, args = mini
    server.responder = lambda body: (
        ToolCalls.of(("get_weather", '{"city": "Par'))
        if "weather in Paris" in last_user_message(body)
        else answer_in_calls(body)
    )
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc")
    result.assert_outcomes(passed=SAMPLES - 1, failed=1)
    [row] = [row for row in report(pytester)["samples"] if row["outcome"] == "failed"]
    assert row["id"] == "normal_atom_bool_0" and row["error_type"] == "wrong_output_format"
    assert '{"city": "Par' in row["output"]  # the raw arguments, as the model wrote them
    assert "the arguments are not JSON" in json.dumps(row["error"])


def test_text_answers_in_fc_mode_are_scored_as_in_the_text_protocol(pytester: pytest.Pytester, mini: Any) -> None:
    server, args = mini
    server.responder = None
    server.replies = dict(RIGHT)  # a model that ignores the tools and writes its calls as text
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc")
    result.assert_outcomes(passed=SAMPLES)
    # not one tool call in the run: the summary says so, in one line, with the fixes
    [line] = [line for line in result.stdout.lines if NO_TOOL_CALL in line]
    assert line.startswith(
        f"{NO_TOOL_CALL} {SAMPLES} answers to requests that offered tools: the endpoint may "
        "ignore them; serve the model with tool calling (vLLM: --enable-auto-tool-choice"
    )
    assert line.endswith("or use --tooleval-mode prompt")
    assert report(pytester)["totals"]["tool_answers"] == {"asked": SAMPLES, "called": 0}


def test_a_failure_in_words_in_fc_mode_says_no_tool_was_called(pytester: pytest.Pytester, mini: Any) -> None:
    """The text protocol's decoder speaks of a missing [...]: in fc mode the failure says why it was used."""
    server, args = mini
    server.responder = None
    server.default = "Sure, I will look into that for you."
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc", "-k", "normal_atom_bool")
    out = result.stdout.str()
    assert "no [...] in the answer" in out
    assert (
        "  tool calls: none in 1 answer to requests that offered the functions as tools: the words were scored "
        "as the text protocol scores an answer"
    ) in out


def test_both_mode_runs_each_sample_twice_and_prints_the_difference(pytester: pytest.Pytester, mini: Any) -> None:
    server, args = mini

    def answer(body: dict[str, Any]) -> Any:
        if "tools" not in body:
            return next((text for needle, text in RIGHT.items() if needle in last_user_message(body)), "no idea")
        if "weather in Oslo" in last_user_message(body):
            return ToolCalls.of(("get_weather", {"city": "Bergen"}))  # wrong in fc only
        return answer_in_calls(body)

    server.responder = answer
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=both", "-v")
    result.assert_outcomes(passed=2 * SAMPLES - 1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_acebench?en-normal_single_turn_single_function_0? PASSED*",
            "*test_acebench?en-normal_single_turn_single_function_0-fc? FAILED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "ACEBench en: text protocol vs function calling",
            "category * prompt * fc * fc - prompt",
            "normal_single_turn_single_function * 1.000 * 0.000 * -1.000",
            "normal_atom_bool * 1.000 * 1.000 * 0.000",
        ]
    )
    assert server.stats.requests == 2 * SAMPLES
    assert sum(1 for body in server.stats.bodies if body and "tools" in body) == SAMPLES


def test_the_probe_offers_a_tool_and_stops_an_endpoint_without_tool_calling(
    pytester: pytest.Pytester, mini: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, args = mini
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    server.tools_supported = False
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc")
    assert result.ret == 4
    # stopped before any test ran (under xdist, before any worker started: pytest prints no summary line then)
    assert not re.search(r"\d+ (passed|failed|errors?)\b", result.stdout.str()), result.stdout.str()
    [line] = [line for line in result.stderr.lines + result.stdout.lines if "endpoint probe failed" in line]
    assert TOOLS_REFUSED in line and "--tooleval-mode prompt" in line and "--enable-auto-tool-choice" in line
    assert server.stats.requests == 1  # the probe only: no sample was asked
    # the same endpoint serves the text protocol: the probe offers no tool then, and the run goes on
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 1  # the answers are tool calls the endpoint would not give: only the words pass


def test_an_endpoint_with_tool_calling_passes_the_probe(
    pytester: pytest.Pytester, mini: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, args = mini
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    result = pytester.runpytest_subprocess(*args, "--tooleval-mode=fc")
    result.assert_outcomes(passed=SAMPLES)
    probe, twin = server.stats.bodies[:2]
    assert probe is not None and len(probe["tools"]) == 1 and probe["tools"][0]["function"]["name"] == "echo"
    # ACEBench asks with its system prompt: so does the probe; its twin, without the tool, shows the tool was seen
    assert [message["role"] for message in probe["messages"]] == ["system", "user"]
    assert twin is not None and "tools" not in twin and twin["messages"] == probe["messages"]
    assert server.stats.requests == SAMPLES + 2


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_probe_stops_an_fc_run_whose_endpoint_answers_without_a_tool_call(
    pytester: pytest.Pytester, mini: Any, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """A server that takes `tools` and never calls one (llama-cpp-python without tool_choice, issue 26): asked
    to call the probe's one tool, it answers in words, and the run stops before any sample."""
    server, args = mini
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    server.responder = None
    server.default = "ok"  # words, whatever is asked
    line = refused_line(pytester.runpytest_subprocess(*args, "--tooleval-mode=fc", *workers))
    assert line.startswith("ERROR: tooleval: the endpoint probe got no tool call from model 'fake-model' at 127.0.0.1:")
    assert "asked to call the one function offered, it answered 'ok'; --tooleval-mode fc needs tool calls" in line
    assert "--enable-auto-tool-choice" in line and "or use --tooleval-mode prompt" in line
    # the probe and its twin without the tool (the tool did reach the prompt: words all the same): no sample asked
    probe, twin = [body for body in server.stats.bodies if body]
    assert last_user_message(probe) == PROBE_TOOL_PROMPT and probe["tool_choice"] == "auto"
    assert "tools" not in twin and twin["messages"] == probe["messages"]


def test_recorded_tool_calls_are_replayed_in_either_shape(pytester: pytest.Pytester, mini: Any) -> None:
    server, args = mini
    rows = []
    for number, (needle, answer) in enumerate(RIGHT_CALLS.items()):
        row: dict[str, Any] = {"id": _sample_id(needle)}
        if isinstance(answer, str):
            row["result"] = answer
        elif number % 2:  # the chat-completions shape
            row["tool_calls"] = [
                {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
                for n, (name, arguments) in enumerate(answer)
            ]
        else:  # name and arguments, the arguments as an object
            row["tool_calls"] = [{"name": name, "arguments": arguments} for name, arguments in answer]
        rows.append(row)
    (pytester.path / "recorded.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    replay = [arg for arg in args if not arg.startswith(("--tooleval-model=", "--tooleval-base-url="))]
    result = pytester.runpytest_subprocess(*replay, "--tooleval-model=replay:recorded.jsonl", "--tooleval-mode=fc")
    result.assert_outcomes(passed=SAMPLES)
    assert server.stats.requests == 0


def _sample_id(needle: str) -> str:
    return {
        "weather in Paris": "normal_atom_bool_0",
        "Rome for 3 days": "normal_atom_bool_1",
        "weather in Oslo": "normal_single_turn_single_function_0",
        "and Quito": "normal_multi_turn_user_adjust_0_1",
        "weather in Lima": "normal_multi_turn_user_adjust_0_0",
        "book me a flight": "special_irrelevant_0",
        "what's the weather": "special_incomplete_0",
    }[needle]


# -- the real data: agents, the oracle ------------------------------------------------------------------------


def _default_revision(data: Path) -> Path:
    """The folder of the default ACEBench revision under the data root: what a run given the root reads."""
    return data / revision(DEFAULT).folder


@pytest.fixture
def gold(data_root: Path) -> dict[str, Any]:
    """The default revision's agent gold sequences, by language and sample (the oracle plays them too)."""
    found: dict[str, Any] = json.loads(recorded(_default_revision(data_root), "agent_gold_sequences.json").read_text())
    return found


def _as_tool_calls(message: str) -> ToolCalls:
    """A gold call message written as the tool_calls a model would send (parsed here with Python's ast)."""
    tree = ast.parse(message, mode="eval").body
    calls = tree.elts if isinstance(tree, ast.List) else [tree]
    return ToolCalls(
        tuple(
            # kw.arg is None for a `**` spread, which no gold message has
            (ast.unparse(call.func), {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg})
            for call in calls
            if isinstance(call, ast.Call)
        )
    )


def test_live_fc_agents_carry_the_conversation_as_tool_messages(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, data_root: Path, gold: dict[str, Any]
) -> None:
    data = data_root.resolve()
    en_gold = gold["en"]
    records = [
        json.loads(line)
        for category in ("agent_multi_step", "agent_multi_turn")
        for line in (_default_revision(data) / "data_all" / "data_en" / f"data_{category}.json").open()
    ]
    # the scripted model knows a sample by its question: many samples share theirs (with other start states)
    asked = [record["question"] for record in records]
    questions = {record["question"]: record["id"] for record in records if asked.count(record["question"]) == 1}

    def answer(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        if "tools" not in body:  # the user simulator: its instruction, then done
            return (
                next((question for question in questions if question in messages[0]["content"]), "hello")
                if len(messages) == 2
                else "finish conversation"
            )
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        sample = questions.get(first_user)
        done = sum(1 for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
        calls = en_gold[sample]["calls"] if sample else []
        return _as_tool_calls(calls[done]) if done < len(calls) else "finish conversation"

    # llama-cpp-python's 500 for an assistant message with null content (issue 26): none is sent
    server = FakeOpenAI(responder=answer, refuse_null_content=True).start()
    try:
        pytester.makepyfile(test_acebench=benchmark_source("acebench"))
        monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(data))
        result = pytester.runpytest_subprocess(
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=sk-x",
            "--tooleval-user-model=fake-user",
            "--tooleval-mode=fc",
            f"--tooleval-cache-dir={pytester.path / 'c'}",
            "--tooleval-categories=agent_multi_step,agent_multi_turn",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "-k",
            " or ".join(f"{sample}-fc" for sample in questions.values()),
        )
        assert len(questions) == 11  # of the 50 en agent samples, 11 have a question of their own
        result.assert_outcomes(passed=len(questions))
    finally:
        server.stop()
    bodies = [body for body in server.stats.bodies if body and "tools" in body]
    tool_messages = [m for body in bodies for m in body["messages"] if m["role"] == "tool"]
    assert tool_messages and all(m["tool_call_id"].startswith("call_fake_") for m in tool_messages)
    calling = [m for body in bodies for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert calling and all(m["content"] == "" for m in calling)
    # every call id the agent sent is answered in the next request
    for body in bodies:
        sent = [call["id"] for m in body["messages"] if m["role"] == "assistant" for call in m.get("tool_calls") or []]
        answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
        assert sent == answered


@pytest.mark.usefixtures("gold")  # the run reads TOOLEVAL_DATA_DIR's default revision; the oracle plays its gold
def test_the_oracle_in_fc_mode(pytester: pytest.Pytester) -> None:
    """Agents 100/100 in both languages; the normal and special categories lose only the samples whose data
    no answer can pass (docs/function-calling.md, "The oracle"): none to the text protocol's whitespace quirk."""
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    result = pytester.runpytest_subprocess(
        "--tooleval-model=oracle",
        "--tooleval-mode=fc",
        "--tooleval-language=all",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
        f"--tooleval-cache-dir={pytester.path / 'c'}",
    )
    rows = report(pytester)["samples"]
    agents = [row for row in rows if row["category"].startswith("agent")]
    assert len(agents) == 100 and all(row["outcome"] == "passed" for row in agents)
    not_passed = sorted(
        f"{row['language']}/{row['id']}: {row['outcome']}" for row in rows if row["outcome"] != "passed"
    )
    assert not_passed == EXPECTED_ORACLE_MISSES, result.stdout.str()[-3000:]


# Every one fails (or errors) for a reason in the data, the same in the text protocol, except the error: a
# function whose schema is under "arguments" cannot be sent as a tool, and says so (never dropped silently).
EXPECTED_ORACLE_MISSES = sorted(
    [
        "en/normal_preference_40: failed",  # an array without items (acebench-scoring §4.8)
        "en/normal_single_turn_parallel_function_42: failed",  # two calls of one name, paired out of order
        "zh/normal_atom_enum_42: error",  # its first function has "arguments" where the schema belongs
        "zh/normal_atom_list_28: failed",  # an empty ground-truth list (§4.8)
        "zh/normal_atom_object_short_1: failed",  # the ground truth omits a required parameter (§4.8)
        "zh/normal_similar_api_2: failed",  # names that end in _<digits> (§4.9)
        "zh/normal_similar_api_22: failed",
        "zh/normal_single_turn_parallel_function_45: failed",  # an empty object the type check refuses
        "zh/normal_single_turn_parallel_function_80: failed",  # ground-truth values the checker cannot match
    ]
)


def test_recorded_agent_tool_calls_are_replayed(pytester: pytest.Pytester, gold: dict[str, Any]) -> None:
    """Agent rows whose messages are {"content", "tool_calls"}: the gold sequences written as recorded tool calls."""
    rows = []
    for language, samples in gold.items():
        for sample, entry in samples.items():
            messages = [
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{turn}_{n}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                        for n, (name, args) in enumerate(_as_tool_calls(message).calls)
                    ],
                }
                for turn, message in enumerate(entry["calls"])
            ]
            rows.append({"id": sample, "lang": language, "messages": [*messages, "finish conversation"]})
    (pytester.path / "agents.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    result = pytester.runpytest_subprocess(
        "--tooleval-model=replay:agents.jsonl",
        "--tooleval-mode=fc",
        "--tooleval-language=all",
        "-m",
        "agent",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={pytester.path / 'c'}",
    )
    result.assert_outcomes(passed=100)


# -- schemas a grammar-based server cannot compile (issue 41) -------------------------------------------------


def test_the_grammar_unsafe_rule_reads_the_parameter_schemas_only() -> None:
    from pytest_tooleval.suites.acebench.data import grammar_unsafe

    def function(**schema: Any) -> list[dict[str, Any]]:
        return [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "string", **schema}}}}]

    assert grammar_unsafe(function(pattern="^\\d{4}-\\d{2}$"))
    assert grammar_unsafe(function(maxLength=4500))
    assert not grammar_unsafe(function(pattern="^[0-9]{4}$", maxLength=1000))
    # an atom category's schema under `arguments` counts; its return schema (`results`) is never sent
    assert grammar_unsafe([{"name": "f", "arguments": function(pattern="^\\w+$")[0]["parameters"]}])
    assert not grammar_unsafe(
        [
            {
                "name": "f",
                "arguments": {"type": "dict"},
                "results": {"type": "dict", "properties": {"d": {"pattern": "^\\d+$"}}},
            }
        ]
    )


def test_fc_samples_a_grammar_server_cannot_take_carry_a_mark(
    pytester: pytest.Pytester, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-m "not grammar_unsafe"` runs around llama-cpp-python's grammar crash; the text protocol is never marked."""
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    common = (
        "--collect-only",
        "-q",
        "--tooleval-model=oracle",
        f"--tooleval-data-dir={data_root.resolve()}",
        "-p",
        "no:cacheprovider",
        "-m",
        "grammar_unsafe",
    )
    marked = [line for line in pytester.runpytest(*common, "--tooleval-mode=both").outlines if "::" in line]
    assert len(marked) == 166 and all(line.endswith("-fc]") for line in marked)
    assert "test_acebench.py::test_acebench[en-normal_single_turn_single_function_9-fc]" in marked  # `\d` dates
    assert "test_acebench.py::test_acebench[en-special_error_param_0-fc]" in marked
    unmarked = pytester.runpytest(*common[:-1], "not grammar_unsafe", "--tooleval-mode=fc")
    unmarked.stdout.fnmatch_lines(["857/1023 tests collected (166 deselected)*"])
