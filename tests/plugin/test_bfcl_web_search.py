"""BFCL's web search categories through the plugin (docs/bfcl.md#the-web-search-run): a live run searches through
the backend it is given, a run that records a cassette is replayed from it offline with the very same requests,
the key reaches neither the cassette nor the report, and a live run without a backend stops before any request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, ToolCalls
from scripted_multi_turn import first_user, next_reply
from web_search_server import Page, SearchServer

KEY = "serp-test-key-0123456789abcdef"
QUESTIONS = ("web_search_base_0", "web_search_no_snippet_1")
PAGE = b"<html><body><h1>Notes</h1><p>The answer is <b>hidden</b> here.</p><script>x()</script></body></html>"


def scripted(server: SearchServer, answers: dict[str, str]) -> Any:
    """A model that searches, reads the first page, then answers: `answers` by the question's first words."""

    def replies(fc: bool, answer: str) -> tuple[Any, ...]:
        search = ("search_engine_query", {"keywords": "expensive tea billionaire", "max_results": 2})
        fetch = ("fetch_url_content", {"url": server.url("/page"), "mode": "markdown"})
        if fc:
            return ToolCalls.of(search), ToolCalls.of(fetch), answer
        render = [f"[{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})]" for name, args in (search, fetch)]
        return render[0], render[1], answer

    def respond(body: dict[str, Any]) -> Any:
        question = str(first_user(body["messages"]))
        answer = next((text for start, text in answers.items() if question.startswith(start)), "I do not know.")
        return next_reply(replies("tools" in body, answer), body)

    return respond


def run(pytester: pytest.Pytester, fake: FakeOpenAI, bfcl_args: list[str], search: str, report: str) -> Any:
    return pytester.runpytest(
        *[f"test_bfcl.py::test_bfcl[{question}{suffix}]" for question in QUESTIONS for suffix in ("", "-fc")],
        "--tooleval-bfcl-categories",
        "web_search",
        "--tooleval-mode",
        "both",
        "--tooleval-bfcl-search",
        search,
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-cache",
        "off",
        "--tooleval-report",
        report,
        *bfcl_args,
        "-n",
        "2",
        "-q",
    )


def test_a_recorded_run_replays_from_its_cassette_with_the_same_requests(
    pytester: pytest.Pytester,
    bfcl_args: list[str],
    fake_openai: FakeOpenAI,
    bfcl_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cassette = pytester.path / "searches.jsonl"
    with SearchServer(KEY, pages={"/page": Page(PAGE)}) as server:
        monkeypatch.setenv("SERPAPI_API_KEY", KEY)
        monkeypatch.setenv("TOOLEVAL_SERPAPI_URL", server.url("/search"))
        # web_search_0's accepted answer (the data's): that question passes, the other fails
        fake_openai.responder = scripted(server, {"Some countries": "It is Zhang Yiming."})
        recorded = run(pytester, fake_openai, bfcl_args, f"record:{cassette}", "recorded.json")
        searched = list(server.requests)
    live_bodies = fake_openai.stats.json_bodies
    assert len(searched) == 8  # a search and a page for each of the 4 tests
    # the model was shown what the services answered: results, then the page as markdown
    shown = [message["content"] for body in live_bodies for message in body["messages"] if message["role"] == "tool"]
    assert any("Notes" in text and "hidden" in text and "x()" not in text for text in shown), shown

    monkeypatch.delenv("SERPAPI_API_KEY")
    fake_openai.stats.received.clear()
    replayed = run(pytester, fake_openai, bfcl_args, f"cassette:{cassette}", "replayed.json")
    # the same requests, searches and pages read from the cassette (the workers' order may differ)
    assert sorted(map(json.dumps, fake_openai.stats.json_bodies)) == sorted(map(json.dumps, live_bodies))

    reports = [json.loads((pytester.path / name).read_text()) for name in ("recorded.json", "replayed.json")]
    outcomes = [{row["test_id"]: row["outcome"] for row in report["samples"]} for report in reports]
    assert outcomes[0] == outcomes[1] and len(outcomes[0]) == 4
    recorded.assert_outcomes(passed=2, failed=2)
    label = "cassette:" + hashlib.sha256(cassette.read_bytes()).hexdigest()
    recorded.stdout.fnmatch_lines(["*BFCL v4 web search (prompt) [[]web search: serpapi[]]*"])
    replayed.stdout.fnmatch_lines([f"*BFCL v4 web search (prompt) [[]web search: {label}[]]*"])
    for path in (cassette, pytester.path / "recorded.json", pytester.path / "replayed.json"):
        assert KEY not in path.read_text()


def test_a_live_run_without_a_search_backend_stops_before_any_request(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    result = pytester.runpytest(
        "--tooleval-bfcl-categories",
        "web_search_base",
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        *bfcl_args,
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*web search categories need a search backend: --tooleval-bfcl-search serpapi*"])
    assert fake_openai.stats.requests == 0


def test_the_oracle_passes_every_web_search_question_without_a_backend(
    pytester: pytest.Pytester, bfcl_args: list[str]
) -> None:
    result = pytester.runpytest(
        "--tooleval-model", "oracle", "--tooleval-bfcl-categories", "web_search", "--tooleval-mode", "both",
        *bfcl_args, "-q",
    )  # fmt: skip
    result.assert_outcomes(passed=2 * 2 * 100)
    result.stdout.fnmatch_lines(["*BFCL v4 web search (prompt)*", "*web_search_no_snippet*100/100*1.000*"])
