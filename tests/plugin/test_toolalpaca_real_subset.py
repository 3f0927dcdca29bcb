"""ToolAlpaca's real-API subset end to end, offline (issue 41).

The 114 upstream instructions run against their 11 APIs, each played by a local stand-in (tests/real_apis.py) that
the plugin reaches through the standard proxy and trust settings only, as a user behind a corporate proxy would.
The fake OpenAI server plays the agent (its actions scripted from the gold steps), the user and the judge.

What each request must look like is written out below by hand, from the OpenAPI specs and what upstream's tool
does with an action input: path parameters filled in, query parameters in the spec's order (whatever the order of
the input), encoded as its HTTP client encodes them, a JSON content type, no body on a GET.
"""

from __future__ import annotations

import collections
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, last_user_message
from mini_toolalpaca import PROMPT_FILES
from real_apis import API_HOSTS, KEYS, Certificates, Internet, make_certificates, recorded_answer

THIN_TEST = benchmark_source("toolalpaca")

YES_YES = "## Analysis\nThe calls fit the task.\n## Results\nProcess Correctness: Yes\nFinal Response Correctness: Yes"
YES_NO = "## Analysis\nIt misses the wind.\n## Results\nProcess Correctness: Yes\nFinal Response Correctness: No"
NO_NO = "## Analysis\nWrong function.\n## Results\nProcess Correctness: No\nFinal Response Correctness: No"
VERDICTS = {("apilayer weatherstack", 3): YES_NO, ("Cataas", 4): NO_NO}  # the rest: Yes and Yes

KEY_VARIABLES = {
    ("apilayer weatherstack", "access_key"): "TOOLEVAL_WEATHERSTACK_ACCESS_KEY",
    ("WolframAlpha", "appid"): "TOOLEVAL_WOLFRAMALPHA_APPID",
    ("CurrencyBeacon", "api_key"): "TOOLEVAL_CURRENCYBEACON_API_KEY",
}
WS, WA, CB = (KEYS[api, name] for api, name in KEY_VARIABLES)

# upstream's observation texts for calls that never reach the API
INVALID_JSON = "Invalid JSON format. Please ensure 'Action Input' is a valid JSON object."
AMOUNT_TYPE = (
    'Parameter type error: "amount", expected string, but got integer. You need to change the input and try again.'
)
AVIATION_TOOLS = (
    "['getDetails', 'retrievalDataFromFile', 'airports_get', 'charts_get', 'charts_changes_get', "
    "'charts_afd_get', 'preferred-routes_get']"
)
ADVICE = (
    ". You should choose one of: (1) change the input and retry; (2) return the 'Final Answer' and explain what "
    "happened; (You must choose this one when the error occurs more than 3 times.) (3) call another function."
)
RETRIEVED = "Citrus fruits: Lemon, Lime, Orange."


def not_documented(tool: str) -> str:
    return f"`{tool}` is not a valid action. The action must be one of {AVIATION_TOOLS}."


CRASH = "(the episode ends: the host does not exist)"  # Fruityvice's route lacks its leading slash upstream

# (API, instruction) -> per step of the script: the request target the API receives (path and query, as the
# request line holds it), or the observation of a step that sends nothing
EXPECTED: dict[tuple[str, int], list[str]] = {
    **{
        ("Nager.Date", index): steps
        for index, steps in enumerate(
            [
                ["/api/v3/IsTodayPublicHoliday/CN"],
                ["/api/v3/CountryInfo/CN"],
                ["/api/v3/AvailableCountries"],
                ["/api/v3/Version"],
                ["/api/v3/LongWeekend/2024/US"],
                ["/api/v3/NextPublicHolidays/GB"],
                ["/api/v3/PublicHolidays/2023/AU"],
                ["/api/v3/NextPublicHolidaysWorldwide"],
                ["/api/v3/LongWeekend/2023/JP"],
                ["/api/v3/NextPublicHolidaysWorldwide"],
                ["/api/v3/CountryInfo/FR"],
                ["/api/v3/NextPublicHolidays/DE"],
                ["/api/v3/PublicHolidays/2023/US"],
                ["/api/v3/CountryInfo/IT"],
                ["/api/v3/NextPublicHolidays/JP", "/api/v3/NextPublicHolidays/DE"],
                ["/api/v3/PublicHolidays/2023/CA", "/api/v3/PublicHolidays/2023/MX"],
                ["/api/v3/LongWeekend/2023/DE"],
            ]
        )
    },
    **{
        ("airportsapi", index): [f"/_ah/api/airportsapi/v1/airports/{code}" for code in codes]
        for index, codes in enumerate(
            [["EDDF"], ["EDDM"], ["EDDF"], ["EDDB"], ["EDDM"], ["EDDH", "EDDF"], ["EDDF"], ["EDDM"]]
        )
    },
    **{
        ("AviationAPI", index): steps
        for index, steps in enumerate(
            [
                ["/v1/airports?apt=AVL"],
                ["/v1/charts?apt=AVL&group=1"],
                ["/v1/charts/changes?apt=AVL&chart_name=Arriivals"],
                ["/v1/charts/afd?apt=AVL"],
                ["/v1/preferred-routes"],
                # the gold of 5-10 calls functions the documentation does not offer
                [not_documented("preferred-routes_search_get")],
                [not_documented("vatsim_pilots_get")],
                [not_documented("vatsim_controllers_get")],
                [not_documented("weather_metar_get")],
                [not_documented("weather_taf_get")],
                [not_documented("weather_metar_get"), "/v1/airports?apt=ORD"],
                ["/v1/charts?apt=KLAX", "/v1/airports?apt=KLAX"],
                ["/v1/airports?apt=KJFK", "/v1/airports?apt=KLGA"],
            ]
        )
    },
    **{
        ("chucknorris.io", index): steps
        for index, steps in enumerate(
            [
                ["/jokes/random"],
                ["/jokes/random/music"],
                ["/jokes/random/movie"],
                ["/jokes/search?query=Texas"],
                ["/jokes/search?query=sports"],
                ["/jokes/random"] * 3,
            ]
        )
    },
    **{
        ("Random Useless Facts", index): steps
        for index, steps in enumerate(
            [
                ["/api/v2/facts/random"],
                ["/api/v2/facts/random"],
                ["/api/v2/facts/random"],
                ["/api/v2/facts/today"],
                ["/api/v2/facts/today"],
                ["/api/v2/facts/random"] * 5,
            ]
        )
    },
    **{
        ("apilayer weatherstack", index): [f"/current?access_key={WS}&query={place}" for place in places]
        for index, places in enumerate(
            [
                ["Paris&units=f"],
                ["New+York&units=m", "Tokyo&units=m", "Sydney&units=m"],
                ["San+Francisco"],
                ["London"],
                ["Beijing", "Moscow", "Rio+de+Janeiro"],
                ["Denver&units=s"],
                ["Toronto&units=f"],
                ["Los+Angeles"],
                ["Chicago", "Denver", "Las+vegas"],
                ["Miami"],
            ]
        )
    },
    **{
        ("Free Dictionary", index): [f"/api/v2/entries/en/{word}" for word in words]
        for index, words in enumerate(
            [
                ["quixotic"],
                ["serendipity"],
                ["beautiful"],
                ["ephemeral"],
                ["affect", "effect"],
                ["serendipity"],
                ["ephemeral"],
            ]
        )
    },
    **{
        ("WolframAlpha", index): [f"/v1/result?appid={WA}&i={question}" for question in questions]
        for index, questions in enumerate(
            [
                ["current+temperature+in+New+York+City+in+Fahrenheit"],
                ["the+square+root+of+625"],
                ["convert+5+miles+to+kilometers"],
                ["the+population+of+Tokyo"],
                ["the+capital+city+of+Australia"],
                ["the+square+root+of+256"],
                ["how+many+moons+Jupiter+has"],
                ["what+the+average+temperature+is+in+Paris+in+July"],
                ["when+Albert+Einstein+was+born"],
                ["how+many+calories+are+in+a+medium-sized+apple"],
                ["the+diameter+of+Mars", "the+distance+between+Mars+and+Earth"],
                ["how+many+calories+are+in+an+apple", "how+many+calories+are+in+a+banana"],
                [
                    "the+distance+from+Los+Angeles+to+New+York+by+car",
                    "how+long+it+would+take+to+drive+from+Los+Angeles+to+New+York+by+car",
                ],
            ]
        )
    },
    **{
        ("Fruityvice", index): steps
        for index, steps in enumerate(
            [
                [CRASH],
                ["/api/fruit/all", "{'retrieved_info': '" + RETRIEVED + "'}"],
                ["/api/fruit/family/Rosaceae"],
                ["/api/fruit/genus/Citrus"],
                ["/api/fruit/order/Sapindales"],
                ["/api/fruit/order/Rosales"],
                ["/api/fruit/genus/Citrus"],
                ["/api/fruit/family/Solanaceae"],
                [CRASH],
                [CRASH],
                [CRASH],
            ]
        )
    },
    **{
        ("Cataas", index): steps
        for index, steps in enumerate(
            [
                ["/cat?width=500&height=300&json=true"],
                ["/cat/cute?width=800&height=600"],
                ["/cat/says/Happy%20Birthday!"],
                ["/api/tags"],
                ["/api/count"],
                ["/cat"] * 3,
                ["/cat?type=cute"],
                ["/cat?type=tabby&width=500&height=300"],
                ["/cat/says/Happy%20Birthday!"],
                ["/cat/says/You're%20invited%20to%20a%20purr-fect%20party!?type=party+hat"],
                ["/cat/says/Welcome%20to%20my%20cat-tastic%20journey!"],
                ["/cat/says/Happy%20Birthday!?type=cute"],
            ]
        )
    },
    **{
        ("CurrencyBeacon", index): steps
        for index, steps in enumerate(
            [
                [f"/v1/latest?api_key={CB}&base=USD&symbols=EUR"],
                [f"/v1/historical?api_key={CB}&base=GBP&date=2022-01-01&symbols=CAD"],
                [f"/v1/timeseries?api_key={CB}&base=USD&start_date=2021-10-01&end_date=2021-11-30&symbols=JPY"],
                # the gold's amount is a number where the spec says string; the script then retries with a string
                [AMOUNT_TYPE, f"/v1/convert?api_key={CB}&from=EUR&to=USD&amount=500"],
                [INVALID_JSON],  # the gold input is not JSON ("symbols": "symbols": [...])
                [f"/v1/timeseries?api_key={CB}&base=THB&start_date=2023-01-01&end_date=2023-12-31&symbols=USD"],
                [AMOUNT_TYPE],
                [AMOUNT_TYPE],
                [INVALID_JSON],
                [
                    INVALID_JSON,
                    f"/v1/timeseries?api_key={CB}&base=USD&start_date=2023-07-01&end_date=2023-07-31&symbols=JPY",
                ],
                [
                    INVALID_JSON,
                    f"/v1/timeseries?api_key={CB}&base=USD&start_date=2023-07-01&end_date=2023-07-31&symbols=EUR",
                ],
            ]
        )
    },
}

API_HOSTS_BY_HOST = {host: scheme for scheme, host in API_HOSTS.values()}

RETRIEVE = ("retrievalDataFromFile", "")  # the file path comes from the observation before it
# steps the script adds after the gold ones
EXTRA_STEPS: dict[tuple[str, int], list[tuple[str, str]]] = {
    ("CurrencyBeacon", 3): [("convert_get", json.dumps({"api_key": "?", "from": "EUR", "to": "USD", "amount": "500"}))],
    ("Fruityvice", 1): [RETRIEVE],
}


@dataclass(frozen=True)
class Case:
    api: str
    index: int
    instruction: str
    steps: tuple[tuple[str, str], ...]  # (action, action input) the agent sends, in order

    @property
    def id(self) -> str:
        return f"real-{self.api.replace(' ', '_')}-{self.index}"


def real_cases(toolalpaca_dir: Path) -> list[Case]:
    records = json.loads((toolalpaca_dir / "data" / "eval_real.json").read_text(encoding="utf-8"))
    return [
        Case(
            record["Name"],
            index,
            instruction,
            tuple((step["Action"], step["Action_Input"]) for step in gold)
            + tuple(EXTRA_STEPS.get((record["Name"], index), ())),
        )
        for record in records
        for index, (instruction, gold) in enumerate(zip(record["Instructions"], record["Golden_Answers"], strict=True))
    ]


def action(tool: str, tool_input: str) -> str:
    return f" I need the API.\nASSISTANT Action: {tool}\nASSISTANT Action Input: {tool_input}"


def scripted_input(gold_input: str, keys: dict[str, str]) -> str:
    """The gold input with the keys of the agent's prompt in place of upstream's, keys of the object reversed (the
    query must follow the spec's order, not the input's); upstream's malformed inputs go as they are."""
    try:
        params = json.loads(gold_input)
    except ValueError:
        return gold_input
    params = {name: keys.get(name, value) for name, value in params.items()}
    return json.dumps(dict(reversed(params.items())))


class RealCast:
    """The fake server's responder for the real subset: each role by the request's model."""

    def __init__(self, cases: list[Case]) -> None:
        self.cases = {case.instruction: case for case in cases}

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = last_user_message(body)
        if body["model"] == "agent-m":
            request = prompt.rsplit("\nUSER: ", 1)[1]
            turn = request.count("\nASSISTANT Observation: ")
            instruction, _, authentication = request.split("\nASSISTANT Thought:", 1)[0].partition(
                "\nAuthentication information: "
            )
            keys = dict(pair.split("=", 1) for pair in authentication.split())
            case = self.cases[instruction]
            if turn >= len(case.steps):
                return f" I have what I need.\nASSISTANT Response: Here is the answer for {case.id}."
            tool, gold_input = case.steps[turn]
            if (tool, gold_input) == RETRIEVE:
                path = prompt.rsplit("retrieve the output from the file: ", 1)[1].split("\n", 1)[0]
                return action(tool, json.dumps({"file_path": path, "query": "the Citrus fruits"}))
            return action(tool, scripted_input(gold_input, keys))
        if body["model"] == "user-m":
            assert '"name": "Lemon"' in prompt and "the Citrus fruits" in prompt  # retrieval reads the saved answer
            return RETRIEVED
        if body["model"] == "judge-m":
            return next(
                (
                    VERDICTS.get((case.api, case.index), YES_YES)
                    for case in self.cases.values()
                    if f"\n{case.instruction}\n" in prompt
                ),
                "no such instruction",
            )
        raise AssertionError(f"unexpected model {body['model']!r}")


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command line, to make the stand-in APIs' certificates")
    hosts = [host for scheme, host in API_HOSTS.values() if scheme == "https"]
    return make_certificates(tmp_path_factory.mktemp("certificates"), hosts)


@pytest.fixture
def internet(certificates: Certificates, monkeypatch: pytest.MonkeyPatch) -> Iterator[Internet]:
    """The stand-ins running, and the environment pointing at them through the standard variables only."""
    for name in (
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    with Internet(certificates) as running:
        for name, value in running.environ().items():
            monkeypatch.setenv(name, value)
        for (api, parameter), variable in KEY_VARIABLES.items():
            monkeypatch.setenv(variable, KEYS[api, parameter])
        yield running


@pytest.fixture
def real_data(pytester: pytest.Pytester, toolalpaca_dir: Path) -> Path:
    """The upstream data folder as the plugin reads it; prompt files the shared copy lacks get stand-in texts (the
    real subset reads only the judge's and retrieval's)."""
    pytester.makepyfile(test_toolalpaca=THIN_TEST)
    base = pytester.path / "data" / "toolalpaca"
    for source in toolalpaca_dir.rglob("*"):
        relative = source.relative_to(toolalpaca_dir)
        if source.is_file() and relative.parts[0] != "judged":
            (base / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, base / relative)
    for name, text in PROMPT_FILES.items():
        if not (base / "prompts" / name).exists():
            (base / "prompts" / name).write_text(text, encoding="utf-8")
    return base.parent


def run_args(pytester: pytest.Pytester, server: FakeOpenAI, data_root: Path, *extra: str) -> list[str]:
    return [
        "--tooleval-model",
        "agent-m",
        "--tooleval-base-url",
        server.base_url,
        "--tooleval-api-key",
        "sk-x",
        "--tooleval-toolalpaca-user-model=user-m",
        "--tooleval-judge-model=judge-m",
        "--tooleval-toolalpaca-subset=real",
        "--tooleval-toolalpaca-real",
        f"--tooleval-data-dir={data_root}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
        "--junitxml=junit.xml",
        *extra,
    ]


def agent_prompts(server: FakeOpenAI, cases: list[Case]) -> dict[str, str]:
    """Each case's last agent prompt (the one that has seen every observation), by case id."""
    by_instruction = {case.instruction: case.id for case in cases}
    last: dict[str, str] = {}
    for body in server.stats.bodies:
        if body and body["model"] == "agent-m":
            prompt = last_user_message(body)
            request = prompt.rsplit("\nUSER: ", 1)[1].split("\nAuthentication information: ")[0]
            case_id = by_instruction[request.split("\nASSISTANT Thought:", 1)[0]]
            if len(prompt) > len(last.get(case_id, "")):
                last[case_id] = prompt
    return last


def expected_observation(host: str, target: str) -> str:
    """What upstream's tool makes of the recorded answer: a pattern (images get a file name, long answers go to one)."""
    reply = recorded_answer(host, target)
    if reply.content_type.startswith("image/"):
        return (
            re.escape("Status Code: 200. Response: Recieved an image, saved in './images/")
            + r"\d{10}"
            + re.escape(".jpeg'.")
        )
    observation = re.escape(f"Status Code: {reply.status}. Response: {reply.text}")
    if not 200 <= reply.status < 300:
        observation += re.escape(ADVICE)
    if len(f"Status Code: {reply.status}. Response: {reply.text}") > 3000:
        observation = (
            re.escape(
                "The output is too long. You need to use the 'retrievalDataFromFile' function to "
                "retrieve the output from the file: ./tmp/retrieval_"
            )
            + r"\d+\.txt"
        )
    return observation


# ---------------------------------------------------------------------------------------------- tests


def test_the_real_subset_runs_end_to_end_against_the_stand_ins(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, internet: Internet, real_data: Path, toolalpaca_dir: Path
) -> None:
    cases = real_cases(toolalpaca_dir)
    assert len(cases) == 114 and {case.api for case in cases} == set(API_HOSTS) == {api for api, _ in EXPECTED}
    assert all(
        len(case.steps) == len(EXPECTED[case.api, case.index])
        for case in cases
        if EXPECTED[case.api, case.index] != [CRASH]
    )
    records = json.loads((toolalpaca_dir / "data" / "eval_real.json").read_text(encoding="utf-8"))
    servers = {record["Name"]: urlsplit(json.loads(record["Documentation"])["servers"][0]["url"]) for record in records}
    assert {api: (url.scheme, url.hostname) for api, url in servers.items()} == API_HOSTS
    fake_openai.responder = RealCast(cases)

    result = pytester.runpytest_subprocess(*run_args(pytester, fake_openai, real_data), "-n", "2", "-rf")

    # the run: the four Fruityvice episodes whose route lacks its slash crash, two verdicts are No
    crashed = {case.id for case in cases if EXPECTED[case.api, case.index] == [CRASH]}
    assert crashed == {"real-Fruityvice-0", "real-Fruityvice-8", "real-Fruityvice-9", "real-Fruityvice-10"}
    result.assert_outcomes(passed=108, failed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    samples = {sample["id"]: sample for sample in json.loads((pytester.path / "report.json").read_text())["samples"]}
    assert len(samples) == 114
    assert {sample_id for sample_id, sample in samples.items() if sample["error_type"] == "episode_error"} == crashed
    assert samples["real-apilayer_weatherstack-3"]["error_type"] == "response_no"
    assert samples["real-Cataas-4"]["error_type"] == "process_no"
    for sample_id in crashed:
        assert samples[sample_id]["error"].endswith(": Tunnel connection failed: 502 Bad Gateway")
    real = json.loads((pytester.path / "report.json").read_text())["summary"]["toolalpaca"]["subsets"]["real"]
    assert (real["error_num"], real["process"]["Yes"], real["response"]["Yes"], real["both"]) == (4, 109, 108, 108)
    result.stdout.fnmatch_lines(
        ["real  *114/114*0*4*0*95.6%*94.7%*94.7%", "real-documented  *108/108*0*4*0*95.4%*94.4%*94.4%"]
    )

    # every request reached its API, through the proxy, as upstream's tool sends it
    assert internet.handshake_failures == []
    expected: collections.Counter[tuple[str, str]] = collections.Counter()
    for (api, _), steps in EXPECTED.items():
        host = API_HOSTS[api][1]
        for target in steps:
            if target[0] == "/":  # a 5xx answer is sent three times in all
                expected[host, target] += 3 if recorded_answer(host, target).status >= 500 else 1
    assert (
        expected["api.wolframalpha.com", f"/v1/result?appid={WA}&i=what+the+average+temperature+is+in+Paris+in+July"]
        == 3
    )
    assert collections.Counter((request.host, request.target) for request in internet.received) == expected
    for request in internet.received:
        assert request.host == request.api  # the proxy took it to the stand-in of the host it named
        assert request.method == "GET" and request.body == b"" and "content-length" not in request.headers
        assert request.headers["content-type"] == "application/json"  # upstream's tool sets it on every call
        assert request.headers["user-agent"] == "python-requests/2.28.2"
        assert request.scheme == API_HOSTS_BY_HOST[request.host]
    https_hosts = {host for host, target in expected if API_HOSTS_BY_HOST[host] == "https"}
    assert set(internet.connects) == {f"{host}:443" for host in https_hosts} | {"www.fruityvice.comapi:443"}
    assert internet.connects.count("www.fruityvice.comapi:443") == 4
    assert collections.Counter(internet.forwarded) == collections.Counter(
        f"http://{host}{target}" for host, target in expected.elements() if API_HOSTS_BY_HOST[host] == "http"
    )

    # each answer was fed back to the agent as upstream's observation, in order
    prompts = agent_prompts(fake_openai, cases)
    for case in cases:
        host = API_HOSTS[case.api][1]
        steps = EXPECTED[case.api, case.index]
        if steps == [CRASH]:
            assert "ASSISTANT Observation:" not in prompts[case.id].rsplit("\nUSER: ", 1)[1]
            continue
        observations = [expected_observation(host, step) if step[0] == "/" else re.escape(step) for step in steps]
        pattern = "".join(
            rf"\nASSISTANT Observation: {observation}\nASSISTANT Thought:.*?" for observation in observations
        )
        assert re.search(pattern, prompts[case.id], re.DOTALL), (case.id, observations)

    # the judge was asked once for every episode that did not crash
    judged = collections.Counter(
        case.id
        for body in fake_openai.stats.bodies
        if body and body["model"] == "judge-m"
        for case in cases
        if f"\n{case.instruction}\n" in last_user_message(body)
    )
    assert judged == collections.Counter(case.id for case in cases if case.id not in crashed)
    retrievals = [body for body in fake_openai.stats.bodies if body and body["model"] == "user-m"]
    assert len(retrievals) == 1

    # the keys went to the APIs (above) and to the agent's prompt, and nowhere the run writes
    key_prompt = prompts["real-CurrencyBeacon-0"]
    assert f"\nAuthentication information: api_key={CB}\n" in key_prompt
    written = "\n".join(
        [
            result.stdout.str(),
            result.stderr.str(),
            (pytester.path / "report.json").read_text(),
            (pytester.path / "junit.xml").read_text(),
        ]
    )
    for key in KEYS.values():
        assert key not in written
    http = [entry for entry in samples["real-apilayer_weatherstack-0"]["transcript"] if entry["kind"] == "http"]
    assert [entry["url"] for entry in http] == [
        "http://api.weatherstack.com/current?access_key=***&query=Paris&units=f"
    ]
    assert (
        "Authentication information: access_key=***"
        in samples["real-apilayer_weatherstack-0"]["transcript"][0]["input"]
    )


def test_fixed_paths_reach_fruityvice_and_a_missing_key_skips_naming_its_variable(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    internet: Internet,
    real_data: Path,
    toolalpaca_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One process this time: --tooleval-scorer fixed gives Fruityvice's route its slash, and WolframAlpha, whose
    key is not set, skips without a request."""
    monkeypatch.delenv("TOOLEVAL_WOLFRAMALPHA_APPID")
    cases = real_cases(toolalpaca_dir)
    fake_openai.responder = RealCast(cases)
    result = pytester.runpytest_subprocess(
        *run_args(pytester, fake_openai, real_data),
        "--tooleval-scorer=fixed",
        "-k",
        "Fruityvice or WolframAlpha",
        "-rs",
    )
    result.assert_outcomes(passed=11, skipped=13)
    result.stdout.fnmatch_lines(["*WolframAlpha needs an API key: set TOOLEVAL_WOLFRAMALPHA_APPID*"])
    fruit = "/api/fruit/"
    names = [
        fruit + "mango",
        fruit + "apple",
        fruit + "apple",
        fruit + "banana",
        fruit + "apple",
        fruit + "orange",
        fruit + "banana",
    ]  # instructions 0, 8, 9 and 10
    others = [step for index in range(1, 8) for step in EXPECTED["Fruityvice", index] if step[0] == "/"]
    assert collections.Counter(request.target for request in internet.received) == collections.Counter(names + others)
    assert {request.host for request in internet.received} == {"www.fruityvice.com"}
    assert set(internet.connects) == {"www.fruityvice.com:443"}
    prompts = agent_prompts(fake_openai, cases)
    assert re.search(expected_observation("www.fruityvice.com", fruit + "mango"), prompts["real-Fruityvice-0"])


def test_a_certificate_the_system_does_not_trust_ends_the_episode(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    internet: Internet,
    real_data: Path,
    toolalpaca_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: without SSL_CERT_FILE naming the test CA, the stand-in's certificate is refused, the request never
    reaches the API and the episode ends as an error (upstream's client raised there too)."""
    monkeypatch.delenv("SSL_CERT_FILE")
    fake_openai.responder = RealCast(real_cases(toolalpaca_dir))
    result = pytester.runpytest_subprocess(*run_args(pytester, fake_openai, real_data), "-k", "real-Nager.Date-3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*real-Nager.Date-3: episode_error*", "*CERTIFICATE_VERIFY_FAILED*"])
    assert internet.received == [] and internet.connects == ["date.nager.at:443"]
    assert len(internet.handshake_failures) == 1


def test_keys_never_reach_the_cache_file_and_come_back_when_an_answer_is_read_from_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, internet: Internet, real_data: Path, toolalpaca_dir: Path
) -> None:
    """The agent copies a key from its prompt into its calls: the response cache stores a placeholder naming the
    key's variable, and a run answered from the cache sends the same requests, keys included, asking no model."""
    cases = real_cases(toolalpaca_dir)
    fake_openai.responder = RealCast(cases)
    keyed = "-k", "CurrencyBeacon or weatherstack"
    first = pytester.runpytest_subprocess(*run_args(pytester, fake_openai, real_data), *keyed)
    asked = [request.target for request in internet.received]
    assert any(CB in target for target in asked) and any(WS in target for target in asked)
    stored = b"".join(path.read_bytes() for path in (pytester.path / "cache").glob("responses.sqlite*"))
    assert stored and CB.encode() not in stored and WS.encode() not in stored
    assert b"tooleval-secret:TOOLEVAL_CURRENCYBEACON_API_KEY" in stored

    internet.received.clear()
    fake_openai.reset_stats()
    again = pytester.runpytest_subprocess(*run_args(pytester, fake_openai, real_data), *keyed, "--tooleval-cache=reuse")
    assert again.parseoutcomes() == first.parseoutcomes()
    assert [body["model"] for body in fake_openai.stats.bodies if body].count("agent-m") == 0
    assert collections.Counter(request.target for request in internet.received) == collections.Counter(asked)
