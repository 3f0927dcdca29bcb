"""The fake server's Batch API (files and batches endpoints) through the real openai client.

Every object the server sends is validated strictly by the SDK's own pydantic models (the client itself parses
leniently, so a missing field would go unnoticed otherwise).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import openai
import pytest
from openai._legacy_response import LegacyAPIResponse
from openai.types import Batch, FileObject
from openai.types.chat import ChatCompletion

from fake_openai import TOOLS_REFUSED, FakeOpenAI, Fault, ToolCalls

FAKE_OPENAI = Path(__file__).parents[2] / "fake_openai.py"
ENDPOINT: Final = "/v1/chat/completions"


@pytest.fixture
def client(fake_openai: FakeOpenAI) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fake_openai.base_url, api_key="k", max_retries=0) as client:
        yield client


def line(custom_id: str, prompt: str, **overrides: Any) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    request = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    for name in ("custom_id", "method", "url", "body"):
        if name in overrides:
            request[name] = overrides.pop(name)
    body.update(overrides)
    return request


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in lines).encode()


def sent(response: LegacyAPIResponse[Any]) -> Any:
    """The JSON the server sent, to be validated strictly (`model_validate`), not parsed leniently by the client."""
    return json.loads(response.text)


def submit(client: openai.OpenAI, lines: list[dict[str, Any]] | bytes) -> Batch:
    data = lines if isinstance(lines, bytes) else jsonl(lines)
    uploaded = FileObject.model_validate(
        sent(client.files.with_raw_response.create(file=("requests.jsonl", data), purpose="batch"))
    )
    assert uploaded.bytes == len(data) and uploaded.purpose == "batch" and uploaded.status == "processed"
    created = client.batches.with_raw_response.create(
        input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h", metadata={"run": "t"}
    )
    return Batch.model_validate(sent(created))


def poll(client: openai.OpenAI, batch_id: str) -> Batch:
    return Batch.model_validate(sent(client.batches.with_raw_response.retrieve(batch_id)))


def poll_to_end(client: openai.OpenAI, batch_id: str, limit: int = 10) -> tuple[Batch, list[str]]:
    """The finished batch and the statuses seen on the way."""
    seen: list[str] = []
    for _ in range(limit):
        batch = poll(client, batch_id)
        seen.append(batch.status)
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch, seen
    raise AssertionError(f"batch {batch_id} still {seen[-1]} after {limit} polls")


def download(client: openai.OpenAI, file_id: str | None) -> dict[str, dict[str, Any]]:
    """The lines of an output or error file by custom_id (checking each custom_id comes once)."""
    assert file_id is not None
    lines = [json.loads(text) for text in client.files.content(file_id).text.splitlines()]
    by_id = {item["custom_id"]: item for item in lines}
    assert len(by_id) == len(lines)
    return by_id


def text_of(item: dict[str, Any]) -> str | None:
    assert item["response"]["status_code"] == 200 and item["error"] is None
    return ChatCompletion.model_validate(item["response"]["body"]).choices[0].message.content


def test_round_trip(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.replies = {"weather": "[get_weather(city='Paris')]"}
    fake_openai.default = "[]"
    lines = [line("a", "the weather?"), line("b", "hello"), line("c", "weather in Oslo, ünïcode\r\n")]
    created = submit(client, lines)
    assert created.status == "validating" and created.endpoint == ENDPOINT and created.metadata == {"run": "t"}
    assert created.output_file_id is None and created.error_file_id is None and created.errors is None
    assert fake_openai.file_content(created.input_file_id) == jsonl(lines)  # the upload, byte for byte

    finished, seen = poll_to_end(client, created.id)
    assert seen == ["in_progress", "completed"]
    assert finished.request_counts is not None and finished.request_counts.model_dump() == {
        "total": 3,
        "completed": 3,
        "failed": 0,
    }
    assert finished.completed_at is not None and finished.in_progress_at is not None
    assert finished.model == "m" and finished.error_file_id is None
    usage = finished.usage  # openai 1.x's Batch has no usage field: there it stays the JSON object the fake sent
    assert usage is not None and (usage["input_tokens"] if isinstance(usage, dict) else usage.input_tokens) > 0

    output = FileObject.model_validate(sent(client.files.with_raw_response.retrieve(str(finished.output_file_id))))
    assert output.purpose == "batch_output" and output.filename == f"{finished.id}_output.jsonl"
    answers = download(client, finished.output_file_id)
    assert {cid: text_of(item) for cid, item in answers.items()} == {
        "a": "[get_weather(city='Paris')]",
        "b": "[]",
        "c": "[get_weather(city='Paris')]",
    }
    assert list(answers) == ["c", "b", "a"]  # not in the input's order, so that clients cannot rely on it
    assert all(item["id"].startswith("batch_req_") and item["response"]["request_id"] for item in answers.values())
    assert poll(client, created.id).status == "completed"  # a finished batch stays so


def test_lines_are_answered_by_the_interactive_rules(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.replies = {"weather": "W"}
    fake_openai.default = "D"
    fake_openai.enqueue(ToolCalls.of(("get_weather", {"city": "Paris"})))  # the queue comes first
    batch = submit(client, [line("queued", "anything"), line("replied", "weather?"), line("default", "hi")])
    answers = download(client, poll_to_end(client, batch.id)[0].output_file_id)
    call = answers["queued"]["response"]["body"]["choices"][0]
    assert call["finish_reason"] == "tool_calls"
    assert call["message"]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert text_of(answers["replied"]) == "W" and text_of(answers["default"]) == "D"

    fake_openai.responder = lambda body: "R:" + body["messages"][-1]["content"]  # before `replies`
    fake_openai.reasoning_content = "thinking"
    batch = submit(client, [line("x", "weather?")])
    answer = download(client, poll_to_end(client, batch.id)[0].output_file_id)["x"]
    assert text_of(answer) == "R:weather?"
    assert answer["response"]["body"]["choices"][0]["message"]["reasoning_content"] == "thinking"
    interactive = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather?"}])
    assert interactive.choices[0].message.content == "R:weather?"


def test_refusals_apply_to_lines_too(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.default = "ok"
    fake_openai.tools_supported = False
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    batch = submit(client, [line("plain", "hi"), line("tools", "hi", tools=tools)])
    finished, _ = poll_to_end(client, batch.id)
    assert text_of(download(client, finished.output_file_id)["plain"]) == "ok"
    refused = download(client, finished.error_file_id)["tools"]["response"]
    assert refused["status_code"] == 400 and refused["body"]["error"]["message"] == TOOLS_REFUSED


def test_polls_to_complete(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    expected = {
        1: ["completed"],
        2: ["in_progress", "completed"],
        3: ["in_progress", "finalizing", "completed"],
        4: ["in_progress", "in_progress", "finalizing", "completed"],
    }
    for polls, statuses in expected.items():
        fake_openai.batch_polls_to_complete = polls
        fake_openai.reset_stats()
        batch = submit(client, [line("a", "hi")])
        assert poll_to_end(client, batch.id)[1] == statuses, polls
        assert fake_openai.stats.batch_polls == polls and fake_openai.stats.batch_entries_answered == 1


def test_hold_keeps_batches_in_progress_until_released(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.default = "late"
    fake_openai.hold_batches()
    batch = submit(client, [line("a", "hi"), line("b", "ho")])
    assert [poll(client, batch.id).status for _ in range(5)] == ["in_progress"] * 5
    assert fake_openai.stats.batch_entries_answered == 0 and poll(client, batch.id).output_file_id is None
    client.close()  # the run is killed between submit and download; a later one resumes by the batch id

    fake_openai.release_batches()
    with openai.OpenAI(base_url=fake_openai.base_url, api_key="k", max_retries=0) as resumed:
        finished = poll(resumed, batch.id)
        assert finished.status == "completed"
        assert {cid: text_of(item) for cid, item in download(resumed, finished.output_file_id).items()} == {
            "a": "late",
            "b": "late",
        }


def test_expiry_answers_the_first_lines_and_expires_the_rest(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.default = "ok"
    fake_openai.expire_batches(after=2)
    batch = submit(client, [line(f"c{i}", f"q{i}") for i in range(5)])
    finished, seen = poll_to_end(client, batch.id)
    assert seen == ["in_progress", "expired"] and finished.expired_at is not None and finished.completed_at is None
    assert finished.request_counts is not None
    assert (finished.request_counts.completed, finished.request_counts.failed) == (2, 3)
    assert {cid: text_of(item) for cid, item in download(client, finished.output_file_id).items()} == {
        "c0": "ok",
        "c1": "ok",
    }
    expired = download(client, finished.error_file_id)
    assert sorted(expired) == ["c2", "c3", "c4"]
    assert all(
        item["response"] is None
        and item["error"]
        == {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        }
        for item in expired.values()
    )
    assert fake_openai.stats.batch_entries_answered == 2  # the expired lines were never answered

    again = submit(client, [line("d", "q")])  # one batch expired, the next completes
    assert poll_to_end(client, again.id)[1][-1] == "completed"


def test_a_fault_puts_its_line_in_the_error_file(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.default = "fine"
    fake_openai.enqueue(Fault.rate_limit(), "fine", Fault.reset(), Fault.empty_choices())
    batch = submit(client, [line(f"c{i}", f"q{i}") for i in range(5)])
    finished, _ = poll_to_end(client, batch.id)
    assert finished.status == "completed" and finished.request_counts is not None
    assert (finished.request_counts.completed, finished.request_counts.failed) == (3, 2)
    errors = download(client, finished.error_file_id)
    assert errors["c0"]["response"]["status_code"] == 429 and errors["c0"]["error"] is None
    assert errors["c0"]["response"]["body"]["error"]["message"] == "Rate limit reached for requests"
    assert errors["c2"]["response"]["status_code"] == 500  # a transport fault has no form in a file
    answers = download(client, finished.output_file_id)
    assert sorted(answers) == ["c1", "c3", "c4"] and answers["c3"]["response"]["body"]["choices"] == []


def test_a_raising_responder_is_a_500_line(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.responder = lambda body: str(1 / 0)
    batch = submit(client, [line("a", "q")])
    errors = download(client, poll_to_end(client, batch.id)[0].error_file_id)
    assert errors["a"]["response"]["status_code"] == 500
    assert fake_openai.stats.errors == ["ZeroDivisionError: division by zero"]


INVALID_INPUTS = [  # (what is wrong, the file, the error code, the line it names)
    ("duplicate", jsonl([line("a", "q"), line("a", "r")]), "duplicate_custom_id", 2),
    ("malformed", jsonl([line("a", "q")]) + b"{not json\n", "invalid_json_line", 2),
    ("url", jsonl([line("a", "q", url="/v1/embeddings")]), "invalid_url", 1),
    ("method", jsonl([line("a", "q", method="GET")]), "invalid_method", 1),
    ("two models", jsonl([line("a", "q"), line("b", "q", model="other")]), "mismatched_model", 2),
    ("no model", jsonl([line("a", "q", body={"messages": []})]), "missing_required_parameter", 1),
    ("empty", b"\n", "empty_file", None),
]


def test_an_invalid_input_file_fails_the_batch(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    for case, data, code, line_number in INVALID_INPUTS:  # one server for all: each start/stop costs 50 ms
        batch = submit(client, data)
        assert batch.status == "validating", case
        failed = poll(client, batch.id)
        assert failed.status == "failed" and failed.failed_at is not None and failed.errors is not None, case
        assert failed.errors.object == "list" and failed.errors.data is not None, case
        assert [(e.code, e.line) for e in failed.errors.data] == [(code, line_number)], case
        assert failed.output_file_id is None and failed.error_file_id is None, case
        assert poll(client, batch.id).status == "failed", case
    assert fake_openai.stats.batch_entries_answered == 0


def test_fail_batches_fails_the_next_one(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.fail_batches("token_limit_exceeded", "Enqueued token limit reached.")
    batch = submit(client, [line("a", "q")])
    failed, seen = poll_to_end(client, batch.id)
    assert seen == ["in_progress", "failed"] and failed.errors is not None and failed.errors.data is not None
    assert [(e.code, e.message) for e in failed.errors.data] == [
        ("token_limit_exceeded", "Enqueued token limit reached.")
    ]
    assert failed.output_file_id is None and fake_openai.stats.batch_entries_answered == 0
    assert poll_to_end(client, submit(client, [line("a", "q")]).id)[0].status == "completed"


def test_cancel(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    batch = submit(client, [line("a", "q"), line("b", "r")])
    assert poll(client, batch.id).status == "in_progress"
    cancelling = Batch.model_validate(sent(client.batches.with_raw_response.cancel(batch.id)))
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    cancelled = poll(client, batch.id)
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    assert cancelled.output_file_id is None  # nothing had been answered
    errors = download(client, cancelled.error_file_id)
    assert sorted(errors) == ["a", "b"] and {e["error"]["code"] for e in errors.values()} == {"batch_cancelled"}
    with pytest.raises(openai.BadRequestError, match="Cannot cancel a batch with status 'cancelled'"):
        client.batches.cancel(batch.id)

    fake_openai.batch_polls_to_complete = 3  # cancelled while finalizing: everything was answered
    fake_openai.default = "done"
    batch = submit(client, [line("a", "q")])
    assert [poll(client, batch.id).status for _ in range(2)] == ["in_progress", "finalizing"]
    client.batches.cancel(batch.id)
    cancelled = poll(client, batch.id)
    assert cancelled.status == "cancelled" and cancelled.error_file_id is None
    assert text_of(download(client, cancelled.output_file_id)["a"]) == "done"


def test_stats_keep_batches_apart_from_interactive_requests(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "interactive"}])
    first = submit(client, [line("a", "batched"), line("b", "batched"), line("c", "other")])
    poll_to_end(client, first.id)
    second = submit(client, [line("a", "q")])
    stats = fake_openai.stats
    assert stats.requests == 1 and stats.by_prompt == {"interactive": 1} and len(stats.received) == 1
    assert stats.batch_by_prompt == {"batched": 2, "other": 1}
    assert (stats.files_uploaded, stats.batches_created, stats.batch_polls, stats.batch_entries_answered) == (
        2,
        2,
        2,
        3,
    )
    assert stats.batch_ids == [first.id, second.id] and first.id != second.id
    assert stats.in_flight == 0 and stats.peak_in_flight == 1
    listed = client.batches.list()
    assert [b.id for b in listed.data] == [second.id, first.id] and not listed.has_more

    fake_openai.reset_stats()
    assert fake_openai.stats.batches_created == 0 and fake_openai.stats.batch_by_prompt == {}
    assert poll_to_end(client, second.id)[0].status == "completed"  # the batches themselves are kept
    assert fake_openai.stats.batch_polls == 2


def test_unknown_ids_are_404(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="No such File object: file-404"):
        client.files.retrieve("file-404")
    with pytest.raises(openai.NotFoundError):
        client.files.content("file-404")
    with pytest.raises(openai.NotFoundError, match="No batch found with id 'batch_404'"):
        client.batches.retrieve("batch_404")
    with pytest.raises(openai.NotFoundError):
        client.batches.cancel("batch_404")
    with pytest.raises(openai.NotFoundError, match="file-404"):
        client.batches.create(input_file_id="file-404", endpoint=ENDPOINT, completion_window="24h")
    with pytest.raises(openai.NotFoundError) as raised:
        client.batches.retrieve("batch_404")
    assert raised.value.body == {
        "message": "No batch found with id 'batch_404'.",
        "type": "invalid_request_error",
        "param": "id",
        "code": None,
    }
    assert fake_openai.stats.batch_polls == 0 and fake_openai.stats.batches_created == 0


def test_files_endpoints(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    data = b'{"x": 1}\r\n\xff binary \x00 bytes\n'
    uploaded = client.files.create(file=("raw.bin", data), purpose="batch")
    assert client.files.content(uploaded.id).content == data
    with urllib.request.urlopen(f"{fake_openai.url}/files/{uploaded.id}/content", timeout=30) as response:
        assert response.headers["Content-Type"] == "application/octet-stream" and response.read() == data
    with urllib.request.urlopen(f"{fake_openai.url}/files/{uploaded.id}", timeout=30) as response:  # unprefixed
        assert json.loads(response.read())["filename"] == "raw.bin"
    deleted = client.files.delete(uploaded.id)
    assert deleted.deleted and deleted.id == uploaded.id and fake_openai.stats.files_deleted == 1
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(uploaded.id)
    with pytest.raises(openai.BadRequestError, match="purpose"):
        client.files.create(file=("raw.bin", data), purpose="nonsense")  # type: ignore[arg-type]
    tuning = client.files.create(file=("t.jsonl", jsonl([line("a", "q")])), purpose="fine-tune")
    with pytest.raises(openai.BadRequestError, match="purpose 'batch'"):
        client.batches.create(input_file_id=tuning.id, endpoint=ENDPOINT, completion_window="24h")
    with pytest.raises(openai.BadRequestError, match="only /v1/chat/completions"):
        client.batches.create(input_file_id=tuning.id, endpoint="/v1/embeddings", completion_window="24h")
    assert fake_openai.stats.files_uploaded == 2 and fake_openai.stats.batches_created == 0


def test_the_api_key_is_required() -> None:
    with FakeOpenAI(require_api_key="sk-right", default="ok") as server:
        with openai.OpenAI(base_url=server.base_url, api_key="sk-wrong", max_retries=0) as wrong:
            with pytest.raises(openai.AuthenticationError):
                wrong.files.create(file=("a.jsonl", jsonl([line("a", "q")])), purpose="batch")
            with pytest.raises(openai.AuthenticationError):
                wrong.batches.retrieve("batch_1")
        assert server.stats.files_uploaded == 0
        with openai.OpenAI(base_url=server.base_url, api_key="sk-right", max_retries=0) as right:
            batch = submit(right, [line("a", "q")])
            assert text_of(download(right, poll_to_end(right, batch.id)[0].output_file_id)["a"]) == "ok"


def test_standalone_batch_polls() -> None:
    process = subprocess.Popen(
        [sys.executable, str(FAKE_OPENAI), "--port", "0", "--reply", "[f()]", "--batch-polls", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        with openai.OpenAI(base_url=process.stdout.readline().strip(), api_key="k", max_retries=0) as client:
            batch = submit(client, [line("a", "q")])
            finished = poll(client, batch.id)
            assert finished.status == "completed"
            assert text_of(download(client, finished.output_file_id)["a"]) == "[f()]"
    finally:
        process.terminate()
        process.communicate(timeout=60)  # a hang guard: it ends at once on SIGTERM
    assert process.returncode == 0


# -- a provider that misbehaves (tests/reliability/test_batch_integrity.py) ---------------------------------


def raw_lines(client: openai.OpenAI, file_id: str | None) -> list[bytes]:
    assert file_id is not None
    return client.files.content(file_id).content.splitlines()


def test_duplicate_entries_put_a_copy_before_each_line(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.default = "right"
    fake_openai.duplicate_entries("wrong")
    finished, _ = poll_to_end(client, submit(client, [line("a", "q"), line("b", "r")]).id)
    lines = [json.loads(raw) for raw in raw_lines(client, finished.output_file_id)]
    assert [(item["custom_id"], text_of(item)) for item in lines] == [
        ("b", "wrong"),
        ("b", "right"),
        ("a", "wrong"),
        ("a", "right"),
    ]
    assert len({item["id"] for item in lines}) == 4 and fake_openai.stats.batch_entries_answered == 2
    fake_openai.duplicate_entries(None)
    again, _ = poll_to_end(client, submit(client, [line("c", "q")]).id)
    assert list(download(client, again.output_file_id)) == ["c"]


def test_planted_entries_come_with_batches_that_do_not_hold_them(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake_openai.default = "asked"
    fake_openai.plant_entries({"x": "planted", "a": "planted"})
    finished, _ = poll_to_end(client, submit(client, [line("a", "q")]).id)
    answers = download(client, finished.output_file_id)  # one line per custom_id: "a" is not planted twice
    assert {custom_id: text_of(item) for custom_id, item in answers.items()} == {"a": "asked", "x": "planted"}
    assert fake_openai.stats.batch_entries_answered == 1


def test_invalid_utf8_and_echo_auth_lines(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Fault.invalid_utf8(), Fault.echo_auth())
    finished, _ = poll_to_end(client, submit(client, [line("a", "q"), line("b", "r")]).id)
    (garbled,) = raw_lines(client, finished.output_file_id)
    assert b"caf\xe9 \xff\xfe" in garbled and json.loads(garbled.decode("utf-8", "replace"))["custom_id"] == "a"
    with pytest.raises(UnicodeDecodeError):
        garbled.decode("utf-8")
    echoed = download(client, finished.error_file_id)["b"]["response"]
    assert echoed["status_code"] == 401
    assert "Incorrect API key provided: Bearer k." in echoed["body"]["error"]["message"]


def test_failed_and_expired_batches_may_echo_the_authorization(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.fail_batches("token_limit_exceeded", "Enqueued token limit reached", echo_auth=True)
    failed, _ = poll_to_end(client, submit(client, [line("a", "q")]).id)
    assert failed.errors is not None and failed.errors.data is not None
    assert failed.errors.data[0].message == "Enqueued token limit reached (Authorization: Bearer k)"
    fake_openai.expire_batches(after=0, echo_auth=True)
    expired, _ = poll_to_end(client, submit(client, [line("b", "q")]).id)
    assert download(client, expired.error_file_id)["b"]["error"]["message"].endswith("(Authorization: Bearer k)")


def test_answer_batch_api_replaces_the_next_answers_of_a_route(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    batch = submit(client, [line("a", "q")])
    fake_openai.answer_batch_api("poll", {"status": 5}, times=2)
    for _ in range(2):
        response = client.batches.with_raw_response.retrieve(batch.id)
        assert response.status_code == 200 and json.loads(response.text) == {"status": 5}
    assert fake_openai.batch(batch.id)["status"] == "validating"  # not moved on
    assert poll(client, batch.id).status == "in_progress"
    fake_openai.answer_batch_api("upload", b"<html>", status=200)
    uploaded = client.files.with_raw_response.create(file=("a.jsonl", jsonl([line("a", "q")])), purpose="batch")
    assert uploaded.content == b"<html>" and fake_openai.stats.files_uploaded == 1
    fake_openai.answer_batch_api("create", {"error": {"message": "no"}}, status=400)
    with pytest.raises(openai.BadRequestError, match="no"):
        client.batches.create(input_file_id="file-1", endpoint=ENDPOINT, completion_window="24h")
    assert fake_openai.stats.batch_api_calls == {"upload": 2, "create": 2, "poll": 3}


def test_forget_batches_makes_known_ids_404(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    batch = submit(client, [line("a", "q")])
    fake_openai.forget_batches()
    with pytest.raises(openai.NotFoundError, match=f"No batch found with id '{batch.id}'"):
        client.batches.retrieve(batch.id)
    assert client.batches.list().data == [] and client.files.content(batch.input_file_id).content


def test_hold_creates_holds_the_answer_of_a_made_batch(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    uploaded = client.files.create(file=("a.jsonl", jsonl([line("a", "q")])), purpose="batch")
    fake_openai.hold_creates()
    created: list[Batch] = []
    thread = threading.Thread(
        target=lambda: created.append(
            client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
        )
    )
    thread.start()
    deadline = time.monotonic() + 30  # a hang guard
    while fake_openai.stats.creates_held != 1:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.01)
    assert [batch.input_file_id for batch in client.batches.list().data] == [uploaded.id] and created == []
    fake_openai.release_creates()
    thread.join(timeout=30)
    assert [batch.id for batch in created] == ["batch_1"] and fake_openai.stats.creates_held == 0
