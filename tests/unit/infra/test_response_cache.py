"""The sqlite response cache: keys, hits, concurrent writer processes, corrupt files; and CachedBackend over HTTP."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import sqlite3
import threading
import warnings
from pathlib import Path
from typing import Any

import cache_writer
import pytest

from fake_openai import FakeOpenAI, Fault
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.models import cache as cache_module
from pytest_tooleval.models.base import ChatRequest, InfrastructureError, Reply
from pytest_tooleval.models.cache import (
    CachedBackend,
    CacheRun,
    ResponseCache,
    ResponseCacheWarning,
    begin_run,
    cache_key,
    end_run,
)
from pytest_tooleval.models.openai_compat import OpenAIBackend

KEY = "sk-test-cache-0123456789SECRET"
IDENTITY = {"backend": "openai", "model": "m", "endpoint": "127.0.0.1:8000/v1"}
BASE = ChatRequest(
    messages=({"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}),
    temperature=0.0,
    top_p=1.0,
    max_tokens=100,
    stop=("\n\n",),
    extra={"seed": 1},
)


@pytest.fixture
def cache(tmp_path: Path) -> Any:
    with ResponseCache(tmp_path / "cache.sqlite") as c:
        yield c


# -- keys ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changed",
    [
        dataclasses.replace(BASE, messages=(*BASE.messages[:1], {"role": "user", "content": "hello!"})),
        dataclasses.replace(BASE, messages=(*BASE.messages[:1], {"role": "assistant", "content": "hello"})),
        dataclasses.replace(BASE, messages=BASE.messages[1:]),
        dataclasses.replace(BASE, temperature=0.7),
        dataclasses.replace(BASE, temperature=None),
        dataclasses.replace(BASE, top_p=0.9),
        dataclasses.replace(BASE, max_tokens=101),
        dataclasses.replace(BASE, stop=("\n",)),
        dataclasses.replace(BASE, stop=None),
        dataclasses.replace(BASE, extra={"seed": 2}),
        dataclasses.replace(BASE, extra={}),
    ],
    ids=[
        "content",
        "role",
        "messages",
        "temperature",
        "no-temperature",
        "top_p",
        "max_tokens",
        "stop",
        "no-stop",
        "extra",
        "no-extra",
    ],
)
def test_anything_that_changes_the_question_changes_the_key(changed: ChatRequest) -> None:
    assert cache_key(IDENTITY, changed) != cache_key(IDENTITY, BASE)


@pytest.mark.parametrize(
    "identity",
    [{**IDENTITY, "model": "m2"}, {**IDENTITY, "endpoint": "127.0.0.1:8001/v1"}, {**IDENTITY, "backend": "replay"}],
    ids=["model", "endpoint", "backend"],
)
def test_a_different_backend_identity_changes_the_key(identity: dict[str, str]) -> None:
    assert cache_key(identity, BASE) != cache_key(IDENTITY, BASE)


def test_spellings_of_the_same_question_share_a_key() -> None:
    assert cache_key(IDENTITY, dataclasses.replace(BASE, temperature=0)) == cache_key(IDENTITY, BASE)
    assert cache_key(IDENTITY, dataclasses.replace(BASE, stop=())) == cache_key(
        IDENTITY, dataclasses.replace(BASE, stop=None)
    )
    reordered: tuple[JSONObject, ...] = ({"content": "sys", "role": "system"}, {"content": "hello", "role": "user"})
    assert cache_key(IDENTITY, dataclasses.replace(BASE, messages=reordered)) == cache_key(IDENTITY, BASE)
    assert cache_key(dict(reversed(list(IDENTITY.items()))), BASE) == cache_key(IDENTITY, BASE)


def test_key_is_a_sha256_hex_digest() -> None:
    key = cache_key(IDENTITY, BASE)
    assert len(key) == 64 and int(key, 16) >= 0


# -- get and put ---------------------------------------------------------------------------------------------


def test_miss_then_hit_returns_everything_stored_marked_cached(cache: ResponseCache) -> None:
    key = cache_key(IDENTITY, BASE)
    assert cache.get(key) is None
    reply = Reply(text="[f(x=1)]", latency_s=1.25, prompt_tokens=12, completion_tokens=3, finish_reason="stop")
    cache.put(key, reply)
    assert cache.get(key) == dataclasses.replace(reply, cached=True)
    assert len(cache) == 1


def test_the_first_answer_stays(cache: ResponseCache) -> None:
    cache.put("k", Reply(text="first"))
    cache.put("k", Reply(text="second"))
    assert cache.get("k") == Reply(text="first", cached=True)


def test_entries_survive_reopening(tmp_path: Path) -> None:
    run = CacheRun("one-run")
    with ResponseCache(tmp_path / "c.sqlite", run=run) as first:
        first.put("k", Reply(text="kept", prompt_tokens=None))
    with ResponseCache(tmp_path / "c.sqlite", run=run) as second:
        assert second.get("k") == Reply(text="kept", cached=True)


def test_the_file_is_in_wal_mode(cache: ResponseCache) -> None:
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_eight_writer_processes_lose_nothing_and_corrupt_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"  # not created yet: the workers also race to create it
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [context.Process(target=cache_writer.write, args=(str(path), w, start)) for w in range(8)]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(timeout=60)
    assert [p.exitcode for p in workers] == [0] * 8
    with ResponseCache(path, run=cache_writer.RUN) as cache:
        rows = cache_writer.ROWS
        assert len(cache) == rows + 8 * rows
        for worker in range(8):
            for i in range(rows):
                assert cache.get(f"own-{worker}-{i}") == Reply(
                    text=f"own {worker} {i}", prompt_tokens=i, latency_s=worker, cached=True
                )
        for i in range(rows):
            shared = cache.get(f"shared-{i}")
            assert shared is not None and shared.text.startswith(f"shared {i} from ")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


# -- damaged files -------------------------------------------------------------------------------------------


def _filled_cache(path: Path, rows: int = 300) -> None:
    with ResponseCache(path) as cache:
        for i in range(rows):
            cache.put(f"k{i}", Reply(text=f"answer {i} " * 50))


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated, e.g. a disk that filled up mid-copy
        lambda data: data[:100] + b"\x00\xff" * 2000 + data[4100:],  # pages overwritten
        lambda data: b"this is not a database at all " * 100,
    ],
    ids=["truncated", "overwritten", "not-sqlite"],
)
def test_a_damaged_file_is_set_aside_with_a_warning_and_rebuilt(tmp_path: Path, damage: Any) -> None:
    path = tmp_path / "cache.sqlite"
    _filled_cache(path)
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    with pytest.warns(ResponseCacheWarning, match=r"cache\.sqlite is corrupt .*moved it to cache\.sqlite\.corrupt"):
        cache = ResponseCache(path)
    with cache:
        assert len(cache) == 0
        cache.put("k", Reply(text="new"))
        assert cache.get("k") == Reply(text="new", cached=True)
    assert (tmp_path / "cache.sqlite.corrupt").read_bytes() == damaged  # kept for inspection, byte for byte


def test_a_second_damaged_file_does_not_overwrite_the_first_one_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    for attempt in (b"first garbage " * 500, b"second garbage " * 500):
        path.write_bytes(attempt)
        with pytest.warns(ResponseCacheWarning):
            ResponseCache(path).close()
        path.unlink()
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
    assert (tmp_path / "cache.sqlite.corrupt").read_bytes().startswith(b"first")
    assert (tmp_path / "cache.sqlite.corrupt2").read_bytes().startswith(b"second")


def test_a_locked_file_is_an_error_not_corruption(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)  # rollback-journal mode: an exclusive lock bars readers
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            ResponseCache(path, busy_timeout_s=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not (tmp_path / "cache.sqlite.corrupt").exists()


# -- CachedBackend over HTTP ---------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_cached_backend_asks_once_and_never_again(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = "[f()]"
    async with OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY) as backend:
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            cached = CachedBackend(backend, cache)
            first = await cached.complete(BASE)
            fake_openai.default = "a different answer the cache must hide"
            second = await cached.complete(BASE)
            other = await cached.complete(dataclasses.replace(BASE, temperature=0.5))
    assert (first.text, first.cached) == ("[f()]", False)
    assert second == dataclasses.replace(first, cached=True)
    assert (other.text, other.cached) == ("a different answer the cache must hide", False)
    assert fake_openai.stats.requests == 2
    assert KEY.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())  # db, wal and shm alike


@pytest.mark.asyncio
async def test_cached_backend_does_not_store_failures(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = "ok"
    fake_openai.enqueue(Fault.http(400))
    async with OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY) as backend:
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            cached = CachedBackend(backend, cache)
            with pytest.raises(InfrastructureError):
                await cached.complete(BASE)
            assert len(cache) == 0
            assert (await cached.complete(BASE)).text == "ok"
    assert fake_openai.stats.requests == 2


def test_cached_backend_keys_on_the_backends_identity(tmp_path: Path) -> None:
    backend = OpenAIBackend("fake-model", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cached = CachedBackend(backend, cache)
    assert cached.cache_identity() == {"backend": "openai", "model": "fake-model", "endpoint": "127.0.0.1:9/v1"}
    assert cached.name == backend.name
    # what the endpoint serves joins the identity once it is known (models/served.py), before any request
    backend.served = {"listed": True, "entry": {"id": "fake-model", "root": "/ckpt/a"}}
    assert cached.cache_identity()["served"] == {"listed": True, "entry": {"id": "fake-model", "root": "/ckpt/a"}}


# -- which run's answers a run may use (CacheRun) ------------------------------------------------------------


def test_a_run_reads_only_its_own_answers_unless_it_reuses(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path, run=CacheRun("first")) as first:
        first.put("k", Reply(text="the first run's"))
    with ResponseCache(path, run=CacheRun("second")) as second:
        assert second.get("k") is None  # another run's answer: asked again
    with ResponseCache(path, run=CacheRun("third", "reuse")) as third:
        hit = third.get("k")
        assert hit == Reply(text="the first run's", cached=True)
        assert hit is not None and hit.cached_run == "first" and hit.cached_at is not None
    with ResponseCache(path, run=CacheRun("first")) as resumed:
        assert resumed.get("k") == Reply(text="the first run's", cached=True)


def test_a_later_runs_answer_replaces_an_earlier_runs_and_the_first_of_a_run_stays(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path, run=CacheRun("old")) as old:
        old.put("k", Reply(text="old model"))
    with ResponseCache(path, run=CacheRun("new")) as new:
        new.put("k", Reply(text="new model"))
        new.put("k", Reply(text="a second answer of the same run"))
        assert new.get("k") == Reply(text="new model", cached=True)
    with ResponseCache(path, run=CacheRun("old")) as old:
        assert old.get("k") is None


def test_an_answer_of_another_system_fingerprint_is_asked_again(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite", run=CacheRun("r")) as cache:
        cache.put("k", Reply(text="made by fp_a", system_fingerprint="fp_a"))
        assert cache.get("k", fingerprint="fp_b") is None
        assert cache.get("k", fingerprint="fp_a") == Reply(text="made by fp_a", cached=True, system_fingerprint="fp_a")
        assert cache.get("k") is not None  # the endpoint gave none now (no probe): nothing to hold it to


def test_begin_run_resumes_the_last_unfinished_run_of_the_same_scope(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    first = begin_run(path, "model-a", "resume")
    assert first.resumed is None
    again = begin_run(path, "model-a", "resume")  # the first never finished: this run finishes it
    assert again.id == first.id and again.resumed is not None
    assert begin_run(path, "model-b", "resume").id != first.id  # another model at another endpoint
    end_run(path, again)
    after = begin_run(path, "model-a", "resume")  # a finished run is not resumed
    assert after.id != first.id and after.resumed is None
    assert begin_run(path, "model-a", "fresh").id != after.id  # fresh resumes nothing
    reuse = begin_run(path, "model-a", "reuse")
    assert reuse.mode == "reuse" and reuse.id not in (after.id, first.id)


def test_begin_run_in_a_folder_that_cannot_be_written_still_gives_a_run(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    run = begin_run(blocked / "responses.sqlite", "model-a", "resume")
    assert run.resumed is None and run.mode == "resume"


def test_a_corrupt_cache_is_rebuilt_even_when_warnings_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"not a database" * 500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = ResponseCache(path)
    assert len(cache) == 0
    cache.close()
    assert (tmp_path / "responses.sqlite.corrupt").exists()
    assert "is corrupt" in capsys.readouterr().err


@pytest.mark.asyncio
@pytest.mark.parametrize("empty", [Fault.null_content(), ""], ids=["content-null", "empty-text"])
async def test_an_empty_reply_is_scored_but_not_kept(fake_openai: FakeOpenAI, tmp_path: Path, empty: Any) -> None:
    fake_openai.enqueue(empty)
    fake_openai.default = "[f()]"
    async with OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY) as backend:
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            cached = CachedBackend(backend, cache)
            assert (await cached.complete(BASE)).text == ""  # delivered as it came
            again = await cached.complete(BASE)
            cache.flush()
            assert len(cache) == 1
    assert (again.text, again.cached) == ("[f()]", False)  # asked again, and that answer kept
    assert fake_openai.stats.requests == 2


@pytest.mark.asyncio
async def test_a_held_write_lock_costs_no_answer(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = "[f()]"
    path = tmp_path / "c.sqlite"
    async with OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY) as backend:
        with ResponseCache(path) as cache:
            holder = sqlite3.connect(path, isolation_level=None)
            cached = CachedBackend(backend, cache)
            with contextlib.closing(holder):
                holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for the whole run
                replies = [await cached.complete(dataclasses.replace(BASE, temperature=t / 10)) for t in range(4)]
                again = await cached.complete(BASE)  # from memory: asked once only
                cache.flush()
                holder.execute("ROLLBACK")
            faults = cache.log.as_dicts()
    assert [reply.text for reply in replies] == ["[f()]"] * 4
    assert again.cached and fake_openai.stats.requests == 4
    assert faults[0]["store"] == "response cache" and faults[0]["skipped_locked"] == 4


@pytest.mark.asyncio
async def test_the_writes_wait_for_a_held_lock_in_their_own_thread_never_in_front_of_an_answer(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write waits for the lock up to WRITE_BUSY_S; made longer than the hang guard below, the writer is still
    # waiting for its first write when the answers are back, whatever the machine's load: an order, not a time.
    monkeypatch.setattr(cache_module, "WRITE_BUSY_S", 600.0)
    fake_openai.default = "[f()]"
    path = tmp_path / "c.sqlite"
    async with OpenAIBackend("fake-model", base_url=fake_openai.base_url, api_key=KEY) as backend:
        with ResponseCache(path) as cache:
            holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            cached = CachedBackend(backend, cache)
            released = threading.Lock()
            guard_fired = threading.Event()

            def release(*, by_guard: bool) -> None:
                with released:
                    if holder.in_transaction:
                        if by_guard:
                            guard_fired.set()
                        holder.execute("ROLLBACK")

            # the hang guard: writes waiting in front of the answers would wait for as long as the lock is held
            guard = threading.Timer(30.0, release, kwargs={"by_guard": True})
            with contextlib.closing(holder):
                holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock until the answers are back
                guard.start()
                try:
                    replies = [await cached.complete(dataclasses.replace(BASE, temperature=t / 10)) for t in range(4)]
                    again = await cached.complete(BASE)  # from memory: asked once only
                    waiting = cache.log.as_dicts()  # the writer's first write is still waiting for the lock
                    release(by_guard=False)
                finally:
                    guard.cancel()
                cache.flush()  # once the lock is free, the writes queued meanwhile go in
            written, faults = len(cache), cache.log.as_dicts()
    assert not guard_fired.is_set(), "an answer waited for the lock"
    assert [reply.text for reply in replies] == ["[f()]"] * 4
    assert again.cached and fake_openai.stats.requests == 4
    assert waiting == [] and faults == []  # nothing skipped and nothing lost: every answer came back first
    assert written == 4


def test_an_assistant_call_message_keys_alike_with_empty_or_null_content() -> None:
    """Tool-call messages are sent with `content: ""` since issue 26 (null before): answers cached then match."""
    call: JSONObject = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}

    def key(content: Any) -> str:
        messages: tuple[JSONObject, ...] = (
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": content, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": "r"},
        )
        return cache_key(IDENTITY, ChatRequest(messages, tools=({"type": "function"},)))

    assert key("") == key(None) != key("words")
