"""The API key never leaves the process: not in reports, cache, logs, JUnit XML, failure messages or the terminal,
even when the endpoint sends it back in an error body or as the model's answer."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from _reliability import KEY, read_report

from fake_openai import FakeOpenAI, Fault
from mini_acebench import SAMPLES as MINI_SAMPLES

# pieces a leak would show: the key, its random tail, and the header that carries it
FRAGMENTS = (KEY, KEY[-24:], KEY[-24:-12], KEY[-12:], f"Bearer {KEY[:10]}")


def hostile_endpoint(server: FakeOpenAI) -> None:
    """Three samples meet an endpoint that repeats the key; the other four are answered right."""
    server.replies["weather in Oslo"] = Fault.echo_auth()  # type: ignore[assignment]  # 401 quoting the header
    server.replies["book me a flight"] = Fault.http(  # type: ignore[assignment]  # a 5xx body quoting the key
        503, message=f"proxy: upstream refused key {KEY} (Authorization: Bearer {KEY})"
    )
    server.replies["weather in Lima"] = f"[get_weather(city='{KEY}')] Authorization: Bearer {KEY}"  # as the answer


def leaks(text: str) -> list[str]:
    return [fragment for fragment in FRAGMENTS if fragment in text]


def files_with_the_key(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.relative_to(folder)}: {fragment}" for fragment in FRAGMENTS if fragment.encode() in data]
    return found


def test_no_artefact_of_an_xdist_run_holds_the_key(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    hostile_endpoint(fake_openai)
    result = pytester.runpytest_subprocess(
        *live,
        "-n",
        "2",
        "--tooleval-max-retries=1",
        "--tooleval-report=report.json",
        "--junitxml=junit.xml",
        "-rA",
        "-vv",
        "-l",
        "--tb=long",
    )
    result.assert_outcomes(passed=4, failed=1, errors=2)
    assert leaks(result.stdout.str() + result.stderr.str()) == []
    assert files_with_the_key(pytester.path) == []  # report, JUnit XML, cache (and its WAL), run boards
    assert (pytester.path / "cache" / "responses.sqlite").exists()
    assert all(body["messages"] for body in fake_openai.stats.json_bodies)  # the key did go out, in the header only
    assert {headers["authorization"] for headers in fake_openai.stats.headers} == {f"Bearer {KEY}"}

    samples = {s["id"]: s for s in read_report(pytester.path / "report.json")["samples"]}
    echoed = samples["normal_multi_turn_user_adjust_0_0"]
    assert (echoed["outcome"], echoed["output"]) == ("failed", "[get_weather(city='***')] Authorization: Bearer ***")
    assert samples["normal_single_turn_single_function_0"]["error"].startswith(
        "InfrastructureError: model 'fake-model' at "
    )
    assert "Bearer ***" in samples["normal_single_turn_single_function_0"]["error"]
    assert "refused key ***" in samples["special_irrelevant_0"]["error"]


def test_logs_and_captured_output_never_hold_the_key(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process, so live logging reaches the terminal (xdist workers keep theirs); the key comes from the
    environment this time, and every logger speaks at DEBUG (openai's and httpx's included)."""
    hostile_endpoint(fake_openai)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    args = [arg for arg in live if not arg.startswith("--tooleval-api-key")]
    result = pytester.runpytest(
        *args,
        "--tooleval-max-retries=1",
        "-o",
        "log_cli=true",
        "--log-cli-level=DEBUG",
        "--log-level=DEBUG",
        "--log-file=run.log",
        "--log-file-level=DEBUG",
        "-rA",
    )
    result.assert_outcomes(passed=4, failed=1, errors=2)
    output = result.stdout.str() + result.stderr.str()
    assert "HTTP Request: POST" in output  # the loggers did speak
    assert "api-key=set (env OPENAI_API_KEY)" in output
    assert leaks(output) == []
    assert leaks((pytester.path / "run.log").read_text()) == []
    assert {headers["authorization"] for headers in fake_openai.stats.headers} == {f"Bearer {KEY}"}


def test_a_short_placeholder_key_is_not_taken_out_of_answers(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """Local servers take any key; a placeholder such as 'none' is no secret, and an answer that happens to
    contain it is scored and reported as it came."""
    answer = "Due to the limitations of the function, I cannot solve this problem: none of them books flights."
    fake_openai.replies["book me a flight"] = answer
    args = [arg for arg in live if not arg.startswith("--tooleval-api-key")]
    result = pytester.runpytest(*args, "--tooleval-api-key=none", "--tooleval-report=report.json")
    result.assert_outcomes(passed=MINI_SAMPLES)
    samples = {s["id"]: s for s in read_report(pytester.path / "report.json")["samples"]}
    assert samples["special_irrelevant_0"]["output"] == answer


def test_a_password_in_the_endpoint_url_is_not_printed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """Proxies that take credentials in the URL (https://user:password@host/v1): the header shows the URL without
    the password, and reports and errors name the endpoint by host and path only."""
    secret = "url-password-5Gk2Lq9Xw"
    url = fake_openai.base_url.replace("http://", f"http://tooleval:{secret}@")
    fake_openai.fail_first(MINI_SAMPLES, Fault.http(400))
    result = pytester.runpytest(
        *live, f"--tooleval-base-url={url}", "--tooleval-report=report.json", "--junitxml=junit.xml", "-rA"
    )
    result.assert_outcomes(errors=MINI_SAMPLES)
    result.stdout.fnmatch_lines([f"tooleval: *base-url=http://tooleval:***@127.0.0.1:{fake_openai.port}/v1 (cli)*"])
    assert secret not in result.stdout.str() + result.stderr.str()
    assert files_with_the_key(pytester.path) == [] and secret.encode() not in b"".join(
        path.read_bytes() for path in pytester.path.rglob("*") if path.is_file()
    )


URL_USER, URL_PASSWORD = "tooluser", "S3cret-Passw0rd-in-the-URL"
URL_FRAGMENTS = (
    URL_PASSWORD,
    f"{URL_USER}:{URL_PASSWORD}",
    base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode(),
)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_password_in_the_endpoint_url_reaches_no_artefact(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], workers: list[str]
) -> None:
    fake_openai.replies["weather in Oslo"] = Fault.echo_auth()  # type: ignore[assignment]  # echoes the header
    url = f"http://{URL_USER}:{URL_PASSWORD}@127.0.0.1:{fake_openai.port}/v1"
    result = pytester.runpytest_subprocess(
        *live,
        *workers,
        f"--tooleval-base-url={url}",
        "--tooleval-max-retries=0",
        "--tooleval-report=report.json",
        "--junitxml=junit.xml",
        "-rA",
        "-vv",
        "--tb=long",
    )
    result.assert_outcomes(passed=MINI_SAMPLES - 1, errors=1)
    sent = {headers.get("authorization", "") for headers in fake_openai.stats.headers}
    echoed = [fragment for fragment in URL_FRAGMENTS if any(fragment in header for header in sent)]
    assert echoed == [URL_FRAGMENTS[2]]  # the client sent user:password as Basic auth, and the server echoed it
    terminal = result.stdout.str() + result.stderr.str()
    assert [fragment for fragment in URL_FRAGMENTS if fragment in terminal] == []
    found = [
        f"{path.name}: {fragment}"
        for path in sorted(pytester.path.rglob("*"))
        if path.is_file()
        for fragment in URL_FRAGMENTS
        if fragment.encode() in path.read_bytes()
    ]
    assert found == []  # the report, the JUnit XML, the cache and the run board
    assert f"base-url=http://{URL_USER}:***@127.0.0.1:" in terminal  # the header shows where, not the password
    error = next(s for s in read_report(pytester.path / "report.json")["samples"] if s["outcome"] == "error")
    assert "HTTP 401: Incorrect API key provided: " in error["error"]


def test_credentials_of_any_shape_are_masked_in_what_is_written() -> None:
    from pytest_tooleval.settings.credentials import redact_all, safe_url, url_credentials

    secrets = url_credentials("https://me:hunter2-long-pw@example.com/v1")
    assert secrets == ["hunter2-long-pw", "me:hunter2-long-pw", "bWU6aHVudGVyMi1sb25nLXB3"]
    text = (
        "Authorization: Basic bWU6aHVudGVyMi1sb25nLXB3 and Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig, "
        "GET https://api.example.com/weather?q=Oslo&appid=0123456789abcdef&units=metric"
    )
    assert redact_all(text, secrets) == (
        "Authorization: Basic *** and Bearer ***, GET https://api.example.com/weather?q=Oslo&appid=***&units=metric"
    )
    assert safe_url("https://me:pw@example.com/v1?api_key=abc123") == "https://me:***@example.com/v1?api_key=***"
    assert safe_url("https://token@example.com/v1") == "https://***@example.com/v1"  # a user alone may be a key


def test_debug_with_a_key_on_the_command_line_is_warned_about(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = pytester.runpytest_subprocess(*live, "--debug=debug.log", "-k", "atom_bool")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "tooleval: warning: --debug writes the command line, --tooleval-api-key included, "
            "to its log file: pass keys by environment variable (*) instead"
        ]
    )
    without = [arg for arg in live if not arg.startswith("--tooleval-api-key")]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    quiet = pytester.runpytest_subprocess(*without, "--debug=debug2.log", "-k", "atom_bool")
    quiet.assert_outcomes(passed=2)
    assert "--debug writes" not in quiet.stdout.str()
    assert KEY not in (pytester.path / "debug2.log").read_text()  # by environment, the key is not in the log
