"""The web search environment against bfcl-eval's own `WebSearchAPI` on seeded calls to a local fake service, its
cassettes, and its entries against bfcl's loader (docs/bfcl.md#web-search; web_search_cases.py builds the calls,
record_web_search.py recorded upstream). Nothing here reaches past 127.0.0.1."""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from pytest_tooleval.errors import DataError, ToolevalUsageError
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.suites.bfcl.multi_turn.apis import api_methods, public_state
from pytest_tooleval.suites.bfcl.multi_turn.execute import Side, instance_variable
from pytest_tooleval.suites.bfcl.multi_turn.results import error_string, result_string
from pytest_tooleval.suites.bfcl.upstream import load_memory_prompts, load_web_search
from pytest_tooleval.suites.bfcl.web_search.api import Call, WebSearchAPI, canonical
from pytest_tooleval.suites.bfcl.web_search.cassette import (
    Cassette,
    CassetteMiss,
    Recorder,
    cassette_label,
    miss_result,
)
from pytest_tooleval.suites.bfcl.web_search.data import CATEGORIES, load_entries
from pytest_tooleval.suites.bfcl.web_search.serpapi import REDACTED, SearchUnavailable, SerpApi
from web_search_server import SearchServer

from . import web_search_cases as cases
from .record_web_search import entry_digest

RECORDED = json.loads(Path(__file__).with_name("web_search_digests.json").read_text(encoding="utf-8"))


def no_wait(seconds: float) -> None:
    pass


LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every connection and name look-up of a test here is to 127.0.0.1: anything else is refused and fails it."""
    reached: list[object] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not (isinstance(address, tuple) and address[0] in LOOPBACK):
            reached.append(address)
            raise OSError(f"the web search tests reach 127.0.0.1 only, not {address!r}")
        connect(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK:
            reached.append(host)
            raise OSError(f"the web search tests reach 127.0.0.1 only, not {host!r}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield
    assert not reached, f"a test tried to reach {reached}"


@pytest.fixture(scope="module")
def server() -> Any:
    with SearchServer(cases.KEY, cases.pages()) as serving:
        yield serving


def live(server: SearchServer, **options: Any) -> SerpApi:
    return SerpApi(cases.KEY, endpoint=server.url("/search"), sleep=no_wait, **options)


def our_results(api: WebSearchAPI, calls: list[cases.Call]) -> list[str]:
    return cases.run(api, calls, result_string, error_string)


def made(backend: Any, show_snippet: bool, scope: str = "") -> WebSearchAPI:
    api = WebSearchAPI(backend, scope)
    api.load_scenario({"show_snippet": show_snippet})
    return api


def test_every_call_is_upstreams() -> None:
    # a server of its own: the 429 directives count the times a query was asked, from the first sequence on
    outcomes: Counter[str] = Counter()
    with SearchServer(cases.KEY, cases.pages()) as server:
        sequences = cases.sequences()
        assert len(sequences) == len(RECORDED["sequences"])
        for number, (show_snippet, calls) in enumerate(sequences):
            bound = cases.bind(calls, server.url(""))
            results = [
                cases.normalized(text, server.port) for text in our_results(made(live(server), show_snippet), bound)
            ]
            recorded = RECORDED["sequences"][number]
            first = next(
                (
                    n
                    for n, (ours, theirs) in enumerate(zip(results, recorded, strict=True))
                    if cases.digest(ours) != theirs
                ),
                None,
            )
            assert first is None, (
                f"sequence {number}, call {first}: {bound[first]} differs; ours: {results[first][:800]} "
                f"(record_web_search.py --show {number} prints upstream's)"
            )
            for text in results:
                outcomes[_kind(text)] += 1
    # the sequences reach every kind of result: lists, pages in each mode, both error forms, exceptions
    assert sum(outcomes.values()) == RECORDED["calls"] > 500
    assert all(outcomes[kind] >= 10 for kind in ("list", "content", "fetch error", "search error", "raised")), outcomes


def _kind(text: str) -> str:
    if text.startswith("Error during execution: "):
        return "raised"
    if text.startswith("["):
        return "list"
    if text.startswith('{"content"'):
        return "content"
    return "fetch error" if "An error occurred while fetching" in text else "search error"


def test_a_failed_search_is_upstreams_without_the_key() -> None:
    api = made(SerpApi(cases.KEY, endpoint="http://127.0.0.1:1/search"), True)
    ours = result_string(api.search_engine_query("x"))
    key_forms = {cases.KEY, quote(cases.KEY, safe=""), quote_plus(cases.KEY)}
    assert any(form in RECORDED["refused_search"] for form in key_forms)  # upstream shows the key there
    expected = RECORDED["refused_search"]
    for form in key_forms:
        expected = expected.replace(form, REDACTED)
    assert cases.normalized(ours, 0) == expected
    assert not any(form in ours for form in key_forms)


def test_429s_are_waited_out_as_upstream_and_then_given_up(server: SearchServer) -> None:
    waits: list[float] = []
    backend = SerpApi(cases.KEY, endpoint=server.url("/search"), sleep=waits.append, jitter=random.Random(1))
    assert isinstance(made(backend, True).search_engine_query("!429x2 waited"), list)
    assert backend.rate_limited == 2 and 2 <= waits[0] < 4 <= waits[1] < 8  # backoff + jitter, doubled
    waits.clear()
    backend = SerpApi(cases.KEY, endpoint=server.url("/search"), sleep=waits.append, max_retries=3)
    with pytest.raises(SearchUnavailable, match="after 3 retries") as raised:
        made(backend, True).search_engine_query("!h429x99 never")
    assert len(waits) == 3 and cases.KEY not in str(raised.value)


def test_the_live_backend_needs_its_key_and_never_shows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with pytest.raises(ToolevalUsageError, match="SERPAPI_API_KEY"):
        SerpApi()
    monkeypatch.setenv("SERPAPI_API_KEY", cases.KEY)
    backend = SerpApi(endpoint="http://127.0.0.1:1/search")
    assert backend.label == "serpapi" and cases.KEY not in repr(backend) and cases.KEY not in str(vars(backend))


def test_the_public_methods_are_the_documented_api_with_upstreams_signatures(
    bfcl_dir: Path, bfcl_wheel: Path, tmp_path: Path
) -> None:
    """The executor offers the public methods to the model: they must be the functions bfcl documents, with the
    documented parameters (names, and which are required); the one public attribute is upstream's setting."""
    entry = load_entries(bfcl_dir, "web_search_base", load_web_search(tmp_path, True, wheel=bfcl_wheel))[0]
    (tmp_path / "empty.jsonl").write_text("")
    api = made(Cassette(tmp_path / "empty.jsonl"), False)
    methods = api_methods(api)
    assert sorted(methods) == sorted(str(doc["name"]) for doc in entry.functions)
    for doc in entry.functions:
        parameters = inspect.signature(methods[str(doc["name"])]).parameters
        properties = doc["parameters"]
        assert isinstance(properties, dict)
        assert list(parameters) == list(properties["properties"])  # type: ignore[arg-type]
        required = [name for name, parameter in parameters.items() if parameter.default is inspect.Parameter.empty]
        assert required == properties["required"]
    assert public_state(api) == {"show_snippet": False}


# -- cassettes ---------------------------------------------------------------------------------------------------


def test_a_recorded_run_replays_to_the_character_offline(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    recorded: list[list[str]] = []
    sequences = cases.sequences()[:25]
    with SearchServer(cases.KEY, cases.pages()) as server:
        base = server.url("")
        backend = Recorder(live(server), cassette)
        assert backend.label == "serpapi"
        for number, (show_snippet, calls) in enumerate(sequences):
            recorded.append(our_results(made(backend, show_snippet, f"s{number}"), cases.bind(calls, base)))
    # the server is gone: every answer now comes from the file
    replay = Cassette(cassette)
    replayed = [
        our_results(made(replay, show_snippet, f"s{number}"), cases.bind(calls, base))
        for number, (show_snippet, calls) in enumerate(sequences)
    ]
    assert replayed == recorded
    assert replay.counts.is_exact and replay.counts.exact == len(cassette.read_text().splitlines()) > 100
    assert replay.label == cassette_label(cassette) == "cassette:" + hashlib.sha256(cassette.read_bytes()).hexdigest()
    # what was raised is raised again with its text, and a returned value is a copy each time
    raised = [line for line in cassette.read_text().splitlines() if '"raised"' in line]
    assert raised, "the sequences raise in the live backend"


def _line(
    scope: str, method: str, arguments: dict[str, Any], settings: dict[str, Any], occurrence: int, **outcome: Any
) -> str:
    return json.dumps(
        {
            "scope": scope,
            "method": method,
            "arguments": canonical(arguments),
            "settings": canonical(settings),
            "occurrence": occurrence,
            **outcome,
        }
    )


def test_a_replay_takes_the_line_of_its_sample_and_occurrence_then_any_then_says_it_misses(tmp_path: Path) -> None:
    search = {"keywords": "k", "max_results": 10, "region": "wt-wt"}
    path = tmp_path / "c.jsonl"
    path.write_text(
        "\n".join(
            [
                _line("a", "search_engine_query", search, {"show_snippet": True}, 0, returned=[{"title": "first"}]),
                _line("a", "search_engine_query", search, {"show_snippet": True}, 1, returned=[{"title": "second"}]),
                _line("b", "search_engine_query", search, {"show_snippet": True}, 0, returned=[{"title": "b's"}]),
                _line("a", "fetch_url_content", {"url": "http://x/", "mode": "raw"}, {}, 0, raised="'snippet'"),
            ]
        )
        + "\n"
    )
    replay = Cassette(path)
    a = made(replay, True, "a")
    assert a.search_engine_query("k") == [{"title": "first"}]
    assert a.search_engine_query("k", 10, region="wt-wt") == [{"title": "second"}]  # the same call, written otherwise
    assert a.search_engine_query(keywords="k") == [{"title": "first"}]  # past the recorded ones: the key's first
    assert made(replay, True, "b").search_engine_query("k") == [{"title": "b's"}]
    assert made(replay, True, "c").search_engine_query("k") == [{"title": "first"}]  # another sample's
    assert replay.counts.exact == 3 and replay.counts.borrowed == 2
    assert error_string(_raised(lambda: a.fetch_url_content("http://x/"))) == "Error during execution: 'snippet'"
    # not recorded: another setting, argument or method form
    loose: Any = a  # arguments of the types a model may write, not the annotated ones
    missed: list[Any] = [
        made(replay, False, "a").search_engine_query("k"),
        loose.search_engine_query("k", 10.0),
        loose.search_engine_query(("k",)),
        a.fetch_url_content("http://x/", "markdown"),
    ]
    assert missed[0] == miss_result(Call("a", "search_engine_query", search, {"show_snippet": False}))
    assert all(set(result) == {"error"} and "No recorded result for " in result["error"] for result in missed)
    assert len(replay.counts.missed) == 4 and not replay.counts.is_exact
    assert replay.counts.missed[0] == "search_engine_query(keywords='k', max_results=10, region='wt-wt')"
    # the URL check needs no cassette: it raises before any backend is asked
    with pytest.raises(ValueError, match="Invalid URL: ftp://x"):
        a.fetch_url_content("ftp://x")
    strict = made(Cassette(path, strict=True), True, "z")
    with pytest.raises(CassetteMiss, match="holds no search_engine_query"):
        strict.search_engine_query("other")


def _raised(call: Any) -> BaseException:
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("nothing raised")


def test_a_replayed_value_is_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        _line("", "fetch_url_content", {"url": "http://x/", "mode": "raw"}, {}, 0, returned={"content": "c"})
    )
    api = made(Cassette(path), True)
    first = api.fetch_url_content("http://x/")
    assert isinstance(first, dict)
    first["content"] = "changed"
    assert api.fetch_url_content("http://x/") == {"content": "c"}


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[]",
        '{"scope": "a"}',
        '{"scope": "a", "method": "m", "arguments": {}, "occurrence": 0}',
        '{"scope": "a", "method": "m", "arguments": {}, "occurrence": 0, "returned": 1, "raised": "x"}',
    ],
)
def test_a_line_that_is_no_recorded_call_is_a_data_error(tmp_path: Path, line: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(DataError, match=r"c\.jsonl:1: not a recorded call"):
        Cassette(path)


def test_keys_tell_apart_what_python_tells_apart() -> None:
    values: list[object] = [1, True, 1.0, "1", [1], (1,), {1}, {"1": 1}, {1: 1}, b"1", None, [[1]], ((1,),)]
    keys = [json.dumps(canonical(value), sort_keys=True) for value in values]
    assert len(set(keys)) == len(values)
    assert canonical({3, 1, 2}) == canonical({2, 3, 1})


# -- entries -----------------------------------------------------------------------------------------------------


def test_the_entries_are_bfcls(bfcl_dir: Path, bfcl_wheel: Path, tmp_path: Path) -> None:
    files = load_web_search(tmp_path, True, wheel=bfcl_wheel)
    answer_format: JSONObject = {
        "role": "system",
        "content": load_memory_prompts(tmp_path, True, wheel=bfcl_wheel).answer_format,
    }
    for category in CATEGORIES:
        entries = load_entries(bfcl_dir, category, files)
        recorded = RECORDED["entries"][category]
        assert [entry.id for entry in entries] == list(recorded)
        assert len(entries) == 100
        for entry in entries:
            question = [list(turn) for turn in entry.turns]
            question[0].insert(0, answer_format)
            digest = entry_digest(
                ["WebSearchAPI"], entry.initial_config, question, entry.functions, list(entry.accepted)
            )
            assert digest == recorded[entry.id], entry.id


def test_questions_and_answers_out_of_step_are_a_data_error(bfcl_dir: Path, bfcl_wheel: Path, tmp_path: Path) -> None:
    files = load_web_search(tmp_path, True, wheel=bfcl_wheel)
    lines = files.answers.splitlines()
    swapped = type(files)(files.questions, "\n".join([lines[1], lines[0], *lines[2:]]), "q", "a")
    with pytest.raises(DataError, match="a:1: the possible answer of 'web_search_1'"):
        load_entries(bfcl_dir, "web_search_base", swapped)
    with pytest.raises(DataError, match="did you mean"):
        load_entries(bfcl_dir, "web_search_snippet", files)


def test_the_multi_turn_executor_runs_model_calls_on_it(tmp_path: Path) -> None:
    """Through the executor, as a model's call strings reach it: its result and error strings, and a call that does
    not bind reads as upstream's (the class and method names are upstream's)."""
    path = tmp_path / "c.jsonl"
    search = {"keywords": "k", "max_results": 2, "region": "wt-wt"}
    path.write_text(_line("s", "search_engine_query", search, {"show_snippet": False}, 0, returned=[{"title": "t"}]))
    api = made(Cassette(path), False, "s")
    variable = instance_variable("m_eval_s", "WebSearchAPI")
    side = Side({"WebSearchAPI": api}, {"WebSearchAPI": variable}, dict.fromkeys(api_methods(api), variable))
    assert side.execute(
        [
            "search_engine_query(keywords='k', max_results=2)",
            "fetch_url_content(url='ftp://x')",
            "search_engine_query(query='k')",
            "fetch_url_content(url='http://x/', mode='raw')",
        ]
    ) == [
        "[{'title': 't'}]",
        "Error during execution: Invalid URL: ftp://x",
        "Error during execution: WebSearchAPI.search_engine_query() got an unexpected keyword argument 'query'",
        "{\"error\": \"No recorded result for fetch_url_content(url='http://x/', mode='raw') in the cassette: the "
        'recorded run made no such call, so none can be replayed."}',
    ]


def test_the_files_are_kept_in_the_cache_for_offline_runs(bfcl_wheel: Path, tmp_path: Path) -> None:
    """Read once from the wheel, the pinned files are in the cache: an offline run without the wheel has them."""
    first = load_web_search(tmp_path, True, wheel=bfcl_wheel)
    assert load_web_search(tmp_path, True) == first and len(first.questions.splitlines()) == 100
    with pytest.raises(ToolevalUsageError, match=r"web search categories needs.*--tooleval-bfcl-wheel"):
        load_web_search(tmp_path / "empty", True)
