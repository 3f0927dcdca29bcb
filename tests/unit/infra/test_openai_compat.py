"""OpenAIBackend against a real HTTP server (tests/fake_openai.py) through the real openai client."""

from __future__ import annotations

import asyncio
import email.utils
import gc
import random
import time
import traceback
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

try:
    import httpx2  # what openai's client speaks now
except ImportError:  # an older openai speaks httpx (the oldest supported: .ci/oldest-constraints.txt)
    import httpx as httpx2  # type: ignore[no-redef,import-not-found,unused-ignore]  # the one mypy sees is httpx2
import openai
import pytest
import pytest_asyncio

from fake_openai import FakeOpenAI, Fault
from pytest_tooleval.errors import MalformedReply
from pytest_tooleval.models.base import ChatRequest, InfrastructureError
from pytest_tooleval.models.breaker import STOPPED, Breaker
from pytest_tooleval.models.limits import Resting
from pytest_tooleval.models.openai_compat import (
    MalformedResponse,
    OpenAIBackend,
    RetryDecision,
    classify,
    endpoint_label,
    parse_retry_after,
    redact,
)

MakeBackend = Callable[..., OpenAIBackend]
KEY = "sk-test-0123456789abcdefSECRET7890"
ASK = ChatRequest(messages=({"role": "user", "content": "What is the weather in Paris?"},))


class SleepRecorder:
    """Stands in for asyncio.sleep: records each backoff and yields once, so tests do not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest_asyncio.fixture
async def make_backend(fake_openai: FakeOpenAI, sleeps: SleepRecorder) -> AsyncIterator[MakeBackend]:
    made: list[OpenAIBackend] = []

    def make(**overrides: Any) -> OpenAIBackend:
        options: dict[str, Any] = dict(
            base_url=fake_openai.base_url, api_key=KEY, max_retries=3, timeout=30.0, sleep=sleeps, rng=random.Random(0)
        )  # the timeout is a hang guard (the fake answers in milliseconds); the timeout tests set their own
        options.update(overrides)
        backend = OpenAIBackend("fake-model", **options)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


async def infrastructure_error(backend: OpenAIBackend, request: ChatRequest = ASK) -> InfrastructureError:
    with pytest.raises(InfrastructureError) as info:
        await backend.complete(request)
    return info.value


# -- answers -------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_answer_carries_text_usage_latency_and_finish_reason(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    fake_openai.replies = {"Paris": "[get_weather(city='Paris')]"}
    fake_openai.latency_s = 0.05
    reply = await make_backend().complete(ASK)
    assert reply.text == "[get_weather(city='Paris')]"
    assert (reply.prompt_tokens, reply.completion_tokens) == (6, 1)  # the fake counts whitespace words
    assert reply.finish_reason == "stop"
    assert reply.latency_s >= 0.05
    assert reply.cached is False
    assert fake_openai.stats.requests == 1


@pytest.mark.asyncio
async def test_request_sends_sampling_params_stop_and_extra_body(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    fake_openai.default = "[a()] END ignored"
    request = ChatRequest(
        messages=({"role": "system", "content": "be terse"}, {"role": "user", "content": "hi"}),
        temperature=0.0,
        top_p=0.9,
        max_tokens=64,
        stop=(" END",),
        extra={"seed": 7, "top_k": 3},
    )
    reply = await make_backend().complete(request)
    assert reply.text == "[a()]"  # the stop sequence reached the server and was honoured
    (body,) = fake_openai.stats.bodies
    assert body == {
        "model": "fake-model",
        "messages": [{"role": "system", "content": "be terse"}, {"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "top_p": 0.9,
        "max_tokens": 64,
        "stop": [" END"],
        "seed": 7,
        "top_k": 3,
    }


@pytest.mark.asyncio
async def test_unset_params_are_not_sent(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    await make_backend().complete(ASK)
    (body,) = fake_openai.stats.json_bodies
    assert set(body) == {"model", "messages"}


@pytest.mark.asyncio
async def test_null_content_is_an_empty_answer_not_an_error(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.enqueue(Fault.null_content())
    reply = await make_backend().complete(ASK)
    assert reply.text == ""
    assert fake_openai.stats.requests == 1  # a model answering nothing is an answer: not retried


@pytest.mark.asyncio
async def test_a_one_megabyte_answer_arrives_whole(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.enqueue(Fault.huge(1_000_000))
    reply = await make_backend().complete(ASK)
    assert reply.text == Fault.huge_text(1_000_000)


# -- retried faults ------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_429_without_retry_after_backs_off_with_full_jitter(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder
) -> None:
    fake_openai.default = "ok"
    fake_openai.fail_first(3, Fault.rate_limit())
    reply = await make_backend(backoff_base_s=0.5, backoff_cap_s=1.5).complete(ASK)
    assert reply.text == "ok"
    assert fake_openai.stats.requests == 4
    assert len(sleeps.delays) == 3
    # min(cap, base * 2**n), the cap reached at n=2
    for ceiling, delay in zip((0.5, 1.0, 1.5), sleeps.delays, strict=True):
        assert 0.0 <= delay <= ceiling


@pytest.mark.asyncio
@pytest.mark.parametrize(("retry_after", "expected"), [("7", 7.0), ("0.25", 0.25), ("3600", 60.0)])
async def test_429_retry_after_seconds_is_honoured_and_capped(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder, retry_after: str, expected: float
) -> None:
    fake_openai.fail_first(1, Fault.rate_limit(retry_after=retry_after))
    await make_backend(max_retry_after_s=60.0).complete(ASK)
    assert sleeps.delays == [expected]


@pytest.mark.asyncio
async def test_retry_after_http_date_is_honoured(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder
) -> None:
    before = time.time()
    when = email.utils.formatdate(before + 30, usegmt=True)
    fake_openai.fail_first(1, Fault.rate_limit(retry_after=when))
    await make_backend().complete(ASK)
    waited = time.time() - before  # however long the machine took, the delay is the date less the time it was read
    (delay,) = sleeps.delays
    assert 29.0 - waited <= delay <= 30.0  # the date has one-second resolution


@pytest.mark.asyncio
async def test_retry_after_is_really_waited_with_the_default_sleep(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    fake_openai.fail_first(1, Fault.rate_limit(retry_after="0.3"))
    await make_backend(sleep=asyncio.sleep).complete(ASK)
    first, second = fake_openai.stats.received
    assert second.at - first.at >= 0.3


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
async def test_transient_statuses_are_retried(fake_openai: FakeOpenAI, make_backend: MakeBackend, status: int) -> None:
    fake_openai.default = "ok"
    fake_openai.fail_first(2, Fault.http(status))
    assert (await make_backend().complete(ASK)).text == "ok"
    assert fake_openai.stats.requests == 3


@pytest.mark.asyncio
async def test_503_retry_after_is_honoured(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder
) -> None:
    fake_openai.fail_first(1, Fault.http(503, retry_after=4))
    await make_backend().complete(ASK)
    assert sleeps.delays == [4.0]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "fault",
    [
        Fault.reset(),
        Fault.malformed_json(),
        Fault.empty_choices(),
        Fault.invalid_utf8(),
        Fault.nameless_call(),
        Fault.content_not_text(),
        Fault.tool_calls_object(),
        Fault.error_in_body(),
    ],
    ids=lambda f: f.kind,
)
async def test_broken_responses_are_retried(fake_openai: FakeOpenAI, make_backend: MakeBackend, fault: Fault) -> None:
    fake_openai.default = "ok"
    fake_openai.fail_first(1, fault)
    assert (await make_backend().complete(ASK)).text == "ok"
    assert fake_openai.stats.requests == 2


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.http(503), "gave up after 3 attempts; last error: HTTP 503: Simulated HTTP 503"),
        (Fault.reset(), "gave up after 3 attempts; last error: connection error (ReadError)"),
        (Fault.malformed_json(), "last error: malformed response body (JSONDecodeError"),
        (Fault.invalid_utf8(), "last error: malformed response body (UnicodeDecodeError"),
        (
            Fault.error_in_body("Provider returned error", 502),
            "last error: HTTP 200 with an error instead of an answer: Provider returned error (code 502)",
        ),
    ],
    ids=lambda v: v.kind if isinstance(v, Fault) else "",
)
async def test_persistent_faults_end_as_infrastructure_errors(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder, fault: Fault, expected: str
) -> None:
    fake_openai.fault_rate, fake_openai.fault = 1.0, fault
    error = await infrastructure_error(make_backend(max_retries=2))
    assert expected in str(error)
    assert str(error).startswith(f"model 'fake-model' at 127.0.0.1:{fake_openai.port}/v1: ")
    assert fake_openai.stats.requests == 3
    assert len(sleeps.delays) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        (Fault.empty_choices(), "the response has no choices"),
        (Fault.nameless_call(), "tool_calls[0] has no function name"),
        (Fault.content_not_text(), "the message content is a list, not text"),
        (Fault.content_not_text("42"), "the message content is a int, not text"),
        (Fault.tool_calls_object(), "tool_calls is a dict, not a list"),
    ],
    ids=["empty-choices", "nameless-call", "content-list", "content-number", "tool-calls-object"],
)
async def test_a_reply_malformed_every_time_is_the_models_answer(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder, fault: Fault, problem: str
) -> None:
    """Whole JSON that is no completion, on every attempt: retried as a glitch, then `MalformedReply` (the
    sample fails), never an infrastructure error; the usage the reply reported is kept."""
    fake_openai.fault_rate, fake_openai.fault = 1.0, fault
    with pytest.raises(MalformedReply) as info:
        await make_backend(max_retries=2).complete(ASK)
    assert not isinstance(info.value, InfrastructureError)
    assert info.value.problem == problem
    assert str(info.value) == (
        f"model 'fake-model' at 127.0.0.1:{fake_openai.port}/v1: malformed reply: {problem} (asked 3 times)"
    )
    assert info.value.tokens == {"prompt": 6, "completion": 0}  # the usage the malformed reply reported
    assert fake_openai.stats.requests == 3 and len(sleeps.delays) == 2


@pytest.mark.asyncio
async def test_only_a_malformed_last_attempt_makes_a_malformed_reply(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    """The last failure decides: malformed replies then a reset is the transport's fault; a reset then
    malformed replies is the model's answer."""
    fake_openai.enqueue(Fault.nameless_call(), Fault.nameless_call(), Fault.reset())
    error = await infrastructure_error(make_backend(max_retries=2))
    assert "last error: connection error" in str(error)
    fake_openai.enqueue(Fault.reset(), Fault.nameless_call(), Fault.nameless_call())
    with pytest.raises(MalformedReply, match="no function name"):
        await make_backend(max_retries=2).complete(ASK)


@pytest.mark.asyncio
async def test_a_timeout_is_retried(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.default = "ok"
    fake_openai.fail_first(1, Fault.delay(60))
    # the delayed attempt always times out; the retry is answered in milliseconds, well within 2 s however busy
    # the machine is (with 0.3 s, a busy machine timed it out too, and asked a third time)
    assert (await make_backend(timeout=2.0).complete(ASK)).text == "ok"
    assert fake_openai.stats.requests == 2


@pytest.mark.asyncio
async def test_persistent_timeouts_end_as_infrastructure_error(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    fake_openai.fault_rate, fake_openai.fault = 1.0, Fault.delay(10)
    error = await infrastructure_error(make_backend(timeout=0.2, max_retries=1))
    assert "gave up after 2 attempts; last error: the request timed out (timeout 0.2 s per attempt)" in str(error)
    assert fake_openai.stats.requests == 2


# -- permanent faults ----------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_4xx_are_not_retried(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder, status: int
) -> None:
    fake_openai.fail_first(1, Fault.http(status, message="nope"))
    error = await infrastructure_error(make_backend())
    assert fake_openai.stats.requests == 1
    assert sleeps.delays == []
    assert f"HTTP {status}: nope (not retried" in str(error)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "fault",
    [
        Fault.insufficient_quota(),
        Fault.no_credits(),
        Fault.http(403, message="Your credit balance is too low to access the API."),
        Fault.http(400, code="insufficient_balance", message="Insufficient Balance"),
    ],
    ids=["429-insufficient-quota", "402-openrouter", "403-credit-balance", "400-insufficient-balance"],
)
async def test_an_account_out_of_quota_trips_the_breaker_at_its_first_refusal(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, sleeps: SleepRecorder, fault: Fault
) -> None:
    """No retry heals it, and quota runs out mid-run: the first refusal stops the run, answered before or not."""
    breaker = Breaker()
    trips: list[str] = []
    breaker.on_trip = trips.append
    backend = make_backend(breaker=breaker)
    fake_openai.enqueue("[f()]", fault)
    assert (await backend.complete(ASK)).text == "[f()]"  # it answered: only connection failures would wait
    error = await infrastructure_error(backend)
    assert fake_openai.stats.requests == 2 and sleeps.delays == []
    [trip] = trips
    assert str(error) == trip and trip.startswith(
        f"{STOPPED}model 'fake-model' at 127.0.0.1:{fake_openai.port}/v1 refused a request (HTTP {fault.status}: "
    )
    assert trip.endswith(
        "): the account has no quota left: check the plan and billing of the key's account, or "
        "use a key that has quota (--tooleval-api-key or OPENAI_API_KEY)"
    )


@pytest.mark.asyncio
async def test_a_rate_limit_that_names_a_quota_is_still_a_rate_limit(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    """Gemini's per-minute limits say "You exceeded your current quota" too, without OpenAI's code: retried."""
    fake_openai.default = "ok"
    fake_openai.fail_first(
        1,
        Fault.http(
            429, message="You exceeded your current quota, please check your plan and billing details.", code=429
        ),
    )
    assert (await make_backend(breaker=Breaker()).complete(ASK)).text == "ok"
    assert fake_openai.stats.requests == 2


@pytest.mark.asyncio
async def test_unknown_path_is_a_permanent_404(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    error = await infrastructure_error(make_backend(base_url=fake_openai.url + "/wrong"))
    assert "HTTP 404" in str(error)


@pytest.mark.asyncio
async def test_missing_key_401_says_how_to_set_one(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.require_api_key = KEY
    error = await infrastructure_error(make_backend(api_key=None))
    assert "HTTP 401" in str(error) and "set OPENAI_API_KEY" in str(error)


# -- secrets -------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_an_echoed_key_never_reaches_the_error(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.enqueue(Fault.echo_auth())
    error = await infrastructure_error(make_backend())
    assert fake_openai.stats.headers[0]["authorization"] == f"Bearer {KEY}"  # the server did see (and echo) it
    assert "HTTP 401: Incorrect API key provided: Bearer ***" in str(error)
    assert error.__cause__ is None and error.__context__ is None
    rendered = "".join(traceback.TracebackException.from_exception(error, capture_locals=True).format())
    assert "SECRET" not in rendered  # not in the message, the chain, nor any frame's locals (`pytest -l`)
    assert KEY not in repr(make_backend())


@pytest.mark.asyncio
async def test_a_partially_echoed_key_is_masked(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.enqueue(Fault.http(401, message=f"Incorrect API key provided: {KEY[:14]}****{KEY[-4:]}."))
    error = await infrastructure_error(make_backend())
    assert KEY[:14] not in str(error)
    assert "Incorrect API key provided: ***." in str(error)


# -- concurrency and event loops -----------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("limit", [1, 4, 8])
async def test_concurrency_limit_bounds_what_the_server_sees(
    fake_openai: FakeOpenAI, make_backend: MakeBackend, limit: int
) -> None:
    fake_openai.latency_s = 0.3  # long enough for every slot to fill, even on a busy machine
    backend = make_backend(max_concurrency=limit)
    # enough rounds for the slow start (from two, latency flat) to reach the ceiling
    requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(6 * limit + 1)]
    await asyncio.gather(*(backend.complete(r) for r in requests))
    assert fake_openai.stats.requests == len(requests)
    assert fake_openai.stats.peak_in_flight == limit  # never above it, and the limit is actually reached


@pytest.mark.asyncio
async def test_a_backing_off_request_does_not_hold_a_slot(fake_openai: FakeOpenAI, make_backend: MakeBackend) -> None:
    fake_openai.responder = lambda body: Fault.http(503) if "flaky" in str(body) else "ok"
    backing_off, resume = asyncio.Event(), asyncio.Event()

    async def sleep(seconds: float) -> None:  # the flaky request's backoff lasts until the test ends it
        backing_off.set()
        await resume.wait()

    backend = make_backend(max_concurrency=1, max_retries=1, sleep=sleep)
    flaky = asyncio.create_task(backend.complete(ChatRequest(messages=({"role": "user", "content": "flaky"},))))
    await asyncio.wait_for(backing_off.wait(), timeout=30)  # it has failed once and is now backing off
    # a request holding the one slot through its backoff would keep this one waiting for ever (30 s, the guard)
    reply = await asyncio.wait_for(backend.complete(ASK), timeout=30)
    assert reply.text == "ok" and not flaky.done()  # answered while the flaky request still backs off
    resume.set()
    with pytest.raises(InfrastructureError):
        await flaky


@pytest.mark.asyncio
async def test_a_request_waiting_out_a_retry_is_counted_as_resting(
    fake_openai: FakeOpenAI, make_backend: MakeBackend
) -> None:
    fake_openai.fail_first(1, Fault.http(503))
    fake_openai.default = "ok"
    seen: list[int] = []
    resting = Resting()

    async def sleep(seconds: float) -> None:
        seen.append(resting.count)

    backend = make_backend(max_retries=1, sleep=sleep, resting=resting)
    assert (await backend.complete(ASK)).text == "ok"
    assert seen == [1]  # resting while it waited; the pool starts another sample meanwhile
    assert resting.count == 0


def test_one_backend_serves_several_event_loops_in_turn(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = "ok"
    backend = OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY)

    async def ask_and_close() -> str:
        text = (await backend.complete(ASK)).text
        await backend.aclose()
        return text

    assert [asyncio.run(ask_and_close()) for _ in range(3)] == ["ok", "ok", "ok"]
    assert fake_openai.stats.requests == 3


def test_a_loop_closed_without_aclose_does_not_break_the_next(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = "ok"
    backend = OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY)
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(backend.complete(ASK)).text == "ok"
    loop.close()

    async def ask_and_close() -> str:
        try:
            return (await backend.complete(ASK)).text
        finally:
            await backend.aclose()

    assert asyncio.run(ask_and_close()) == "ok"
    # The first loop's connection was abandoned with its loop (the caller skipped aclose): finalize it here,
    # quietly, rather than at a random later moment.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


# -- pure parts ----------------------------------------------------------------------------------------------


def _status_error(status: int, headers: dict[str, str] | None = None, body: object = None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, request=request)
    return openai.APIStatusError(f"Error code: {status}", response=response, body=body)


@pytest.mark.parametrize(
    ("exc", "kind", "retry_after"),
    [
        (_status_error(429), "rate_limit", None),
        (_status_error(429, {"retry-after": "2"}), "rate_limit", 2.0),
        (_status_error(429, {"retry-after-ms": "1500", "retry-after": "9"}), "rate_limit", 1.5),
        (_status_error(408), "transient", None),
        (_status_error(409), "transient", None),
        (_status_error(500), "transient", None),
        (_status_error(503, {"retry-after": "5"}), "transient", 5.0),
        (_status_error(599), "transient", None),
        (_status_error(400), "permanent", None),
        (_status_error(401), "permanent", None),
        (_status_error(403), "permanent", None),
        (_status_error(404), "permanent", None),
        (_status_error(422), "permanent", None),
        (_status_error(402), "permanent", None),
        (_status_error(429, body={"code": "insufficient_quota", "type": "insufficient_quota"}), "permanent", None),
        (_status_error(429, body={"code": "429", "message": "You exceeded your current quota"}), "rate_limit", None),
        (openai.APITimeoutError(request=httpx2.Request("POST", "http://x")), "transient", None),
        (openai.APIConnectionError(request=httpx2.Request("POST", "http://x")), "transient", None),
        (MalformedResponse("no choices"), "transient", None),
        (ValueError("not ours to retry"), "permanent", None),
    ],
)
def test_classify(exc: BaseException, kind: str, retry_after: float | None) -> None:
    decision = classify(exc)
    assert (decision.kind, decision.retry_after) == (kind, retry_after)
    assert decision.retryable is (kind != "permanent")


@pytest.mark.parametrize(
    ("status", "body", "no_quota"),
    [
        (402, None, True),
        (402, {"code": 402, "message": "Insufficient credits. Add more using https://openrouter.ai/credits"}, True),
        (429, {"code": "insufficient_quota", "type": "insufficient_quota", "message": "You exceeded ..."}, True),
        (429, {"code": None, "type": "insufficient_quota", "message": "..."}, True),
        (429, {"code": "billing_not_active", "message": "Your account is not active"}, True),
        (429, {"code": "rate_limit_exceeded", "message": "You exceeded your current quota"}, False),
        (403, {"message": "Your credit balance is too low to access the Anthropic API."}, True),
        (403, {"message": "Country, region, or territory not supported"}, False),
        (403, {"message": "This API method requires billing to be enabled."}, True),
        (400, {"message": "Your credit balance is too low to access the Anthropic API."}, True),
        (400, {"code": "insufficient_balance", "message": "Insufficient Balance"}, True),
        # a 400 may quote the request: its words about balances are no refusal of the account
        (400, {"message": "Invalid schema for function 'pay_bill': billing: insufficient balance is no type"}, False),
        (400, {"message": "Invalid 'messages': empty array"}, False),
        (500, {"code": "insufficient_quota"}, False),
    ],
)
def test_no_quota(status: int, body: object, no_quota: bool) -> None:
    decision = classify(_status_error(status, body=body))
    assert (decision.reason == "no quota") is no_quota


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),  # `now` below is 07:28:00
        ({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),  # already past
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    assert parse_retry_after(headers, now=lambda: now) == expected


def test_backoff_is_full_jitter_under_an_exponential_ceiling_and_a_cap() -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", backoff_base_s=0.5, backoff_cap_s=60.0)
    transient = RetryDecision.transient("HTTP 500")
    for retry, ceiling in [(0, 0.5), (1, 1.0), (4, 8.0), (7, 60.0), (5000, 60.0)]:
        delays = [backend.retry_delay(retry, transient) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # the whole range is used: jitter is full, not ±25 %
    assert backend.retry_delay(0, RetryDecision.rate_limit("HTTP 429", 3.0)) == 3.0
    assert backend.retry_delay(0, RetryDecision.rate_limit("HTTP 429", 900.0)) == backend.max_retry_after_s


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {KEY} here", "key *** here"),
        (f"Bearer {KEY}", "Bearer ***"),
        (f"provided: {KEY[:10]}***{KEY[-4:]}", "provided: ***"),
        ("nothing secret here, sk-other-key", "nothing secret here, sk-other-key"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text, KEY) == expected


def test_endpoint_label_drops_scheme_credentials_query_and_trailing_slash() -> None:
    assert endpoint_label("https://user:pw@API.Example.com:8443/v1/?api-version=2") == "api.example.com:8443/v1"
    assert endpoint_label("http://127.0.0.1:8000/v1") == "127.0.0.1:8000/v1"
