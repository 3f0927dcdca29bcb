"""A response cache in one sqlite file, shared by the xdist workers of a run (and by later runs).

Which cached answers a run may use is its `CacheRun`'s to say (docs/models.md#the-response-cache): by default
only those of the run it is (an xdist worker's, the hub's) or resumes (an unfinished run of the same model at the
same endpoint), so a model served anew under the same name is asked again; `--tooleval-cache reuse` takes any
earlier run's. Keys also hold what the endpoint says it serves (its `/v1/models` entry, models/served.py), and an
answer whose `system_fingerprint` differs from the one the endpoint gives now is asked again.

WAL mode lets readers and one writer work at once, and `busy_timeout` queues the other writers, so eight
worker processes can put answers concurrently. A file that fails `PRAGMA quick_check` on open is renamed
`<name>.corrupt` with a warning and rebuilt empty: a broken cache costs re-asking, never a failed run.
Keys hash what determines an answer (backend identity, messages, sampling parameters); never the API key.

During a run the cache never stands between an answer and its test (storage.py): a read gives up on a busy
file after READ_BUSY_S, writes are queued to a writer thread and the answer goes on at once. A write that
finds another process holding the write lock is skipped (that process is writing answers too); any other
failure (a full disk, a read-only file) turns writing off for the rest of the run. Either way the answer
stays in memory for the rest of the run and is counted in the summary as not cached.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import queue
import sqlite3
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..json_value import JSONObject, JSONValue
from ..settings.credentials import sealed, unsealed
from ..text import plain_data, plain_text
from .base import ChatRequest, ModelBackend, Reply, ToolCall
from .storage import CACHE, STORAGE_ERRORS, StorageLog

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock around the open-time check
    fcntl = None  # type: ignore[assignment]  # None stands for "no fcntl module here" (checked before each use)

__all__ = ["CACHE_MODES", "CacheRun", "CachedBackend", "ResponseCache", "ResponseCacheWarning", "begin_run",
           "cache_key", "end_run"]

# 2: the backend identity holds what the endpoint serves (models/served.py); entries keyed before it, which no
# check of the served model stood behind, stop matching
KEY_VERSION = 2
_TABLE = "replies_v1"  # a new layout gets a new table, and old files stay readable without migrations
_RUNS = "cache_runs_v1"  # one row per run that wrote answers: when it started, and ended (NULL: it never finished)
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
_ADDED_COLUMNS = (("reasoning", "TEXT"), ("reasoning_tokens", "INTEGER"), ("tool_calls", "TEXT"), ("run", "TEXT"),
                  ("fingerprint", "TEXT"), ("message", "TEXT"))
CACHE_MODES = ("resume", "reuse", "fresh", "off")  # --tooleval-cache
READ_BUSY_S = 2.0  # a read that finds the file busy this long turns reading off: the requests are asked instead
WRITE_BUSY_S = 2.0  # how long a write waits for another process's write lock before it is skipped
CLOSE_DEADLINE_S = 10.0  # at the end of a run, how long queued writes may take before they are given up


class ResponseCacheWarning(UserWarning):
    """The cache file was unusable and has been set aside."""


@dataclass(frozen=True)
class CacheRun:
    """Which cached answers a run may use, and the tag of those it writes (docs/models.md#the-response-cache).

    Attributes:
        id: the run's tag in the cache: the answers it writes carry it; an xdist run's processes share it.
        mode: `resume` (the run's own answers, and those of the unfinished run it resumes, whose id it took),
            `reuse` (any run's answers to the same request of the same served model), `fresh` (its own only).
        resumed: when the unfinished run it resumes started (epoch seconds), or None.
    """

    id: str
    mode: str = "resume"
    resumed: float | None = None

    def reads(self, written_by: str | None) -> bool:
        """Whether an answer the run `written_by` wrote is this run's to use."""
        return self.mode == "reuse" or written_by == self.id

    def as_dict(self) -> JSONObject:
        return {"id": self.id, "mode": self.mode, "resumed": self.resumed}

    @classmethod
    def from_dict(cls, value: Mapping[str, object]) -> CacheRun:
        resumed = value.get("resumed")
        return cls(str(value["id"]), str(value.get("mode") or "resume"),
                   float(resumed) if isinstance(resumed, (int, float)) else None)


def new_run(mode: str) -> CacheRun:
    return CacheRun(uuid.uuid4().hex, mode)


def begin_run(path: Path, scope: str, mode: str) -> CacheRun:
    """The CacheRun of a run starting now: under `resume`, the last run of `scope` (a model at an endpoint) when
    it never finished, else a new one, recorded in the cache file. A file that cannot say gives a new run that is
    not recorded (it resumes nothing; the cache's own open reports the fault)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a held write lock (another run's writer) costs this run WRITE_BUSY_S at most, and its resume
        conn = sqlite3.connect(path, timeout=WRITE_BUSY_S, isolation_level=None)
    except (*STORAGE_ERRORS, OSError):
        return new_run(mode)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(WRITE_BUSY_S * 1000)}")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {_RUNS} (id TEXT PRIMARY KEY, scope TEXT NOT NULL, "
                     "started REAL NOT NULL, ended REAL)")
        with _transaction(conn):
            if mode == "resume":
                last = conn.execute(f"SELECT id, started, ended FROM {_RUNS} WHERE scope = ? "
                                    "ORDER BY started DESC LIMIT 1", (scope,)).fetchone()
                if last is not None and last[2] is None:
                    return CacheRun(str(last[0]), mode, float(last[1]))
            run = new_run(mode)
            conn.execute(f"INSERT INTO {_RUNS} (id, scope, started) VALUES (?, ?, ?)", (run.id, scope, time.time()))
            return run
    except STORAGE_ERRORS:
        return new_run(mode)
    finally:
        with contextlib.suppress(*STORAGE_ERRORS):
            conn.close()


def end_run(path: Path, run: CacheRun) -> None:
    """Record that `run` finished (every sample it collected was answered): a later run does not resume it."""
    if not path.exists():
        return
    with contextlib.suppress(*STORAGE_ERRORS, OSError):
        conn = sqlite3.connect(path, timeout=WRITE_BUSY_S, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(WRITE_BUSY_S * 1000)}")
            conn.execute(f"UPDATE {_RUNS} SET ended = ? WHERE id = ?", (time.time(), run.id))
        finally:
            conn.close()


def cache_key(identity: Mapping[str, JSONValue], request: ChatRequest) -> str:
    """sha256 of the canonical JSON of everything that determines an answer.

    Args:
        identity: the backend's `cache_identity()` (kind, model, endpoint host and path); never the key.
        request: the request; messages, sampling parameters, stop and extra all count.
    """
    payload: JSONObject = {
        "v": KEY_VERSION,
        "backend": dict(identity),
        "messages": [_keyed(m) for m in request.messages],
        # 0 and 0.0 ask the same thing; JSON would spell them differently.
        "temperature": None if request.temperature is None else float(request.temperature),
        "top_p": None if request.top_p is None else float(request.top_p),
        "max_tokens": request.max_tokens,
        "stop": list(request.stop) if request.stop else None,  # () and None both send no stop
        "extra": request.extra,
    }
    if request.tools is not None:  # only then: the keys of text-protocol requests stay what they were
        payload["tools"] = list(request.tools)
    if request.repeat > 1:  # the first ask of a repeated run shares its key with a plain run's
        payload["repeat"] = request.repeat
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _keyed(message: JSONObject) -> JSONObject:
    """A message as its key sees it. An assistant message with `tool_calls` is sent with `content: ""` (issue 26:
    llama-cpp-python refuses null) and keyed as it was when it was sent with null, which asks the same: the
    answers cached then still match."""
    keyed = dict(message)
    if keyed.get("role") == "assistant" and keyed.get("tool_calls") and keyed.get("content") == "":
        keyed["content"] = None
    return keyed


class ResponseCache:
    """Replies by key in a sqlite file; safe for concurrent processes, each opening its own instance.

    Args:
        path: the sqlite file; its folder is created if missing.
        busy_timeout_s: how long a write waits for another process's write before failing.

    Open it in the process (and thread family) that uses it: a connection must not cross a fork.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 60.0,
                 log: StorageLog | None = None, run: CacheRun | None = None) -> None:
        self.path = Path(path)
        self.run = run if run is not None else new_run("fresh")  # whose answers are read, and the tag of writes
        self.busy_timeout_s = busy_timeout_s
        self.log = log if log is not None else StorageLog()
        self._lock = threading.Lock()  # one connection, possibly used from an engine thread and the main thread
        # the run's side (get_soon, put_soon): answers not (yet) written, a reader thread, a writer thread
        self._unwritten: dict[str, Reply] = {}
        self._reading = True
        self._writing = True
        self._read_conn: sqlite3.Connection | None = None
        self._writes: queue.SimpleQueue[tuple[str, Reply] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.path.with_name(self.path.name + ".lock")):
            try:
                self._conn = self._connect()
            except sqlite3.DatabaseError as exc:
                if not _is_corruption(exc):
                    raise
                aside = _set_aside(self.path)
                self._conn = self._connect()
                message = (f"response cache {self.path} is corrupt ({exc}); moved it to {aside.name} and started "
                           "an empty cache (answers will be asked again)")
                try:
                    warnings.warn(message, ResponseCacheWarning, stacklevel=2)
                except ResponseCacheWarning:  # warnings made errors (-W error): the cache is rebuilt all the
                    sys.stderr.write(f"warning: {message}\n")  # same, so say it and go on

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # in WAL mode: durable across crashes of the process
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise _Corrupt("; ".join(problems[:3]))
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} ("
                "key TEXT PRIMARY KEY, text TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, "
                "finish_reason TEXT, latency_s REAL NOT NULL, created REAL NOT NULL)"
            )
            conn.execute(f"CREATE TABLE IF NOT EXISTS {_RUNS} (id TEXT PRIMARY KEY, scope TEXT NOT NULL, "
                         "started REAL NOT NULL, ended REAL)")
            # columns added since: old files gain them (empty), and old plugins ignore them
            present = {row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})")}
            for column, kind in _ADDED_COLUMNS:
                if column not in present:
                    conn.execute(f"ALTER TABLE {_TABLE} ADD COLUMN {column} {kind}")
        except BaseException:
            conn.close()
            raise
        return conn

    def get(self, key: str, fingerprint: str | None = None) -> Reply | None:
        with self._lock:
            return self._select(self._conn, key, self.run, fingerprint)

    @staticmethod
    def _select(conn: sqlite3.Connection, key: str, run: CacheRun, fingerprint: str | None) -> Reply | None:
        """The answer under `key` when it is `run`'s to use, and made by the `system_fingerprint` the endpoint
        gives now (where both are known); else None, and the request is asked."""
        row = conn.execute(
            "SELECT text, prompt_tokens, completion_tokens, finish_reason, latency_s, reasoning, reasoning_tokens, "
            f"tool_calls, run, fingerprint, created, message FROM {_TABLE} WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        (text, prompt_tokens, completion_tokens, finish_reason, latency_s, reasoning, reasoning_tokens, calls,
         written_by, made_by, created, message) = row
        if not run.reads(written_by):
            return None
        if fingerprint and made_by and made_by != fingerprint:
            return None  # the endpoint serves another build of the model now
        tool_calls = _read_tool_calls(calls)
        if tool_calls is None:
            return None  # an entry this version cannot read back is asked again, never half-used
        return Reply(
            text=text,
            latency_s=latency_s,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
            cached=True,
            reasoning=reasoning,
            reasoning_tokens=reasoning_tokens,
            system_fingerprint=made_by,
            tool_calls=tool_calls,
            cached_at=float(created) if isinstance(created, (int, float)) else None,
            cached_run=written_by if isinstance(written_by, str) else None,
            message=_read_message(message),
        )

    def put(self, key: str, reply: Reply) -> None:
        """Store `reply` for this run. Within a run the first answer stays, so its processes see the same one; a
        later run's answer replaces an earlier run's (which that run no longer reads, unless it reuses)."""
        with self._lock:
            self._insert(self._conn, key, reply, self.run.id)

    @staticmethod
    def _insert(conn: sqlite3.Connection, key: str, reply: Reply, run_id: str) -> None:
        conn.execute(
            f"INSERT INTO {_TABLE} "
            "(key, text, prompt_tokens, completion_tokens, finish_reason, latency_s, created, reasoning, "
            "reasoning_tokens, tool_calls, run, fingerprint, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET text = excluded.text, prompt_tokens = excluded.prompt_tokens, "
            "completion_tokens = excluded.completion_tokens, finish_reason = excluded.finish_reason, "
            "latency_s = excluded.latency_s, created = excluded.created, reasoning = excluded.reasoning, "
            "reasoning_tokens = excluded.reasoning_tokens, tool_calls = excluded.tool_calls, run = excluded.run, "
            "fingerprint = excluded.fingerprint, message = excluded.message "
            f"WHERE {_TABLE}.run IS NOT excluded.run",
            # what an endpoint sent is stored as sqlite takes it: a count past its 64-bit integers (2**64-1, a
            # common server bug) as unknown, text with no lone surrogate half
            (key, plain_text(reply.text), _integer(reply.prompt_tokens), _integer(reply.completion_tokens),
             _text(reply.finish_reason), _real(reply.latency_s), time.time(), _text(reply.reasoning),
             _integer(reply.reasoning_tokens),
             json.dumps([plain_data(call.to_json()) for call in reply.tool_calls]) if reply.tool_calls else None,
             run_id, _text(reply.system_fingerprint),
             None if reply.message is None else json.dumps(plain_data(reply.message))),
        )

    # -- during a run: never in the way of an answer ---------------------------------------------------

    async def get_soon(self, key: str, fingerprint: str | None = None) -> Reply | None:
        """`get` for a run: None when the cache cannot answer (logged), and never a wait for a lock.

        It reads on the event loop, through a connection of its own that gives up on a busy file after
        READ_BUSY_S: a read in WAL mode does not wait for writers, and a thread hop per request cost one
        process with no latency a tenth of its throughput (perf/run.py)."""
        unwritten = self._unwritten.get(key)
        if unwritten is not None:  # this run's own answer, on its way to the file
            return dataclasses.replace(unwritten, cached=True, cached_at=time.time(), cached_run=self.run.id)
        if not self._reading:
            return None
        try:
            if self._read_conn is None:
                self._read_conn = sqlite3.connect(self.path, timeout=READ_BUSY_S, isolation_level=None,
                                                  check_same_thread=False)
                self._read_conn.execute(f"PRAGMA busy_timeout = {int(READ_BUSY_S * 1000)}")
            return self._select(self._read_conn, key, self.run, fingerprint)
        except STORAGE_ERRORS as exc:
            self._reading = False
            self.log.failed(CACHE, self.path.parent, exc)
            return None

    def put_soon(self, key: str, reply: Reply) -> None:
        """Queue `put` for the writer thread; the answer is served from memory meanwhile (and if it fails)."""
        self._unwritten[key] = reply
        if not self._writing:
            self.log.lost(CACHE, self.path.parent, "writing was turned off")
            return
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_queued, name="tooleval-cache-write", daemon=True)
            self._writer.start()
        self._writes.put((key, reply))

    def _write_queued(self) -> None:
        """The writer thread: what is queued goes in one transaction (one commit for a burst of answers)."""
        conn: sqlite3.Connection | None = None
        locked_until = 0.0
        ending = False
        while not ending:
            item = self._writes.get()
            batch: list[tuple[str, Reply]] = []
            while item is not None:
                batch.append(item)
                try:
                    item = self._writes.get_nowait()
                except queue.Empty:
                    break
            ending = item is None
            if not batch:
                continue
            if not self._writing or time.monotonic() < locked_until:  # off, or the lock was just held
                locked = self._writing
                self.log.lost(CACHE, self.path.parent, "another process held the write lock" if locked
                              else "writing was turned off", len(batch), locked=locked)
                continue
            try:
                if conn is None:
                    conn = sqlite3.connect(self.path, timeout=WRITE_BUSY_S, isolation_level=None,
                                           check_same_thread=False)
                    conn.execute(f"PRAGMA busy_timeout = {int(WRITE_BUSY_S * 1000)}")
                    conn.execute("PRAGMA synchronous = NORMAL")  # as the main connection: no fsync per answer
                with _transaction(conn):
                    for key, reply in batch:
                        self._insert(conn, key, reply, self.run.id)
                for key, _ in batch:
                    self._unwritten.pop(key, None)
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    locked_until = time.monotonic() + WRITE_BUSY_S
                    self.log.lost(CACHE, self.path.parent, "another process held the write lock", len(batch),
                                  locked=True)
                else:
                    self._stop_writing(exc, len(batch))
            except STORAGE_ERRORS as exc:
                self._stop_writing(exc, len(batch))
            except Exception as exc:  # anything else is this batch's fault, never the writer's end: it goes on
                self.log.lost(CACHE, self.path.parent, f"{type(exc).__name__}: {exc}", len(batch))
        if conn is not None:
            with contextlib.suppress(*STORAGE_ERRORS):
                conn.close()

    def _stop_writing(self, exc: BaseException, lost: int) -> None:
        self._writing = False
        self.log.lost(CACHE, self.path.parent, exc, lost)

    def flush(self) -> None:
        """Wait (up to CLOSE_DEADLINE_S) for the queued writes; later puts start the writer again."""
        if self._writer is None:
            return
        self._writes.put(None)
        self._writer.join(timeout=CLOSE_DEADLINE_S)
        if self._writer.is_alive():  # a hung disk: what is still queued is not cached
            self._writing = False
            left = self._writes.qsize()
            if left:
                self.log.lost(CACHE, self.path.parent, f"writes took over {CLOSE_DEADLINE_S:.0f} s at the end", left)
        self._writer = None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0])

    def close(self) -> None:
        self.flush()
        if self._read_conn is not None:
            with contextlib.suppress(*STORAGE_ERRORS):
                self._read_conn.close()
        with self._lock, contextlib.suppress(*STORAGE_ERRORS):  # a full disk may refuse the checkpoint
            self._conn.close()  # the last connection to close checkpoints the WAL into the main file

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@runtime_checkable
class _HasCacheIdentity(Protocol):
    def cache_identity(self) -> Mapping[str, JSONValue]: ...


class CachedBackend:
    """Wraps any backend: a request answered before is served from the cache (`cached=True`), never re-asked.

    Only answers are stored; an `InfrastructureError` passes through and the next run asks again.

    Args:
        backend: the backend that answers misses.
        cache: where answers are kept.
        identity: what names the backend in keys; default its `cache_identity()` at each request (it learns what
            the endpoint serves before the first), else its class and name.
        fingerprint: the `system_fingerprint` the endpoint gives now, if known: a cached answer made under
            another is asked again.
    """

    def __init__(self, backend: ModelBackend, cache: ResponseCache, *, identity: Mapping[str, JSONValue] | None = None,
                 fingerprint: Callable[[], str | None] = lambda: None):
        self.backend = backend
        self.cache = cache
        self.name = backend.name
        self._identity = None if identity is None else dict(identity)
        self._fingerprint = fingerprint

    def cache_identity(self) -> JSONObject:
        if self._identity is not None:
            return dict(self._identity)
        if isinstance(self.backend, _HasCacheIdentity):
            return dict(self.backend.cache_identity())
        return {"backend": type(self.backend).__name__, "name": self.backend.name}

    async def complete(self, request: ChatRequest) -> Reply:
        key = cache_key(self.cache_identity(), request)
        hit = await self.cache.get_soon(key, self._fingerprint())
        if hit is not None:
            return _with_secrets(hit, unsealed)
        reply = await self.backend.complete(request)
        if worth_keeping(reply):
            self.cache.put_soon(key, _with_secrets(reply, sealed))
        return reply

    async def aclose(self) -> None:
        aclose = getattr(self.backend, "aclose", None)
        if aclose is not None:
            await aclose()


def _with_secrets(reply: Reply, change: Callable[[str], str]) -> Reply:
    """`reply` with `change` applied to its text, reasoning, tool calls and message: `sealed` before it is stored
    (a third-party key the model copied from its prompt becomes a placeholder), `unsealed` once it is read."""
    return dataclasses.replace(
        reply, text=change(reply.text), reasoning=None if reply.reasoning is None else change(reply.reasoning),
        tool_calls=tuple(ToolCall(change(call.id), change(call.name), change(call.arguments))
                         for call in reply.tool_calls),
        message=None if reply.message is None else _changed_message(reply.message, change))


def _changed_message(message: JSONObject, change: Callable[[str], str]) -> JSONObject | None:
    """The message with `change` applied to every text, keys too; None (not kept) if too deep to walk."""
    def changed(value: JSONValue) -> JSONValue:
        if isinstance(value, str):
            return change(value)
        if isinstance(value, dict):
            return {change(key): changed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [changed(item) for item in value]
        return value

    try:
        return {change(key): changed(item) for key, item in message.items()}
    except RecursionError:
        return None


def _integer(value: int | None) -> int | None:
    return value if isinstance(value, int) and -(2**63) <= value < 2**63 else None


def _real(value: float) -> float:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def _text(value: str | None) -> str | None:
    return None if value is None else plain_text(value)


def worth_keeping(reply: Reply) -> bool:
    """An empty reply (`content: null` or "", and no tool calls) is scored as it is, but not kept: it is as
    often a passing fault of the endpoint as an answer, and a rerun should ask again."""
    return bool(reply.text or reply.tool_calls)


def _read_tool_calls(stored: object) -> tuple[ToolCall, ...] | None:
    """The stored tool_calls column: () when empty, None when it does not read back as calls."""
    if stored is None:
        return ()
    try:
        if not isinstance(stored, (str, bytes, bytearray)):
            raise TypeError(f"not JSON text: {type(stored).__name__}")  # as json.loads raises
        items = json.loads(stored)
        return tuple(ToolCall(str(item["id"]), str(item["name"]), str(item["arguments"])) for item in items)
    except (TypeError, KeyError, ValueError):
        return None


def _read_message(stored: object) -> JSONObject | None:
    """The stored message column: None when absent (an entry written before it was kept) or unreadable; the
    reply's other fields still stand, and a suite that needs the message rebuilds it from them."""
    if not isinstance(stored, str):
        return None
    try:
        message = json.loads(stored)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class _Corrupt(sqlite3.DatabaseError):
    """quick_check found damage that did not raise on its own."""


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    # OperationalError ("database is locked") is also a DatabaseError: contention must not discard a good file.
    if isinstance(exc, _Corrupt):
        return True
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    message = str(exc).lower()
    return "malformed" in message or "not a database" in message


def _set_aside(path: Path) -> Path:
    """Rename `path` (and its -wal/-shm, which must never be replayed onto a new file) to a free `.corrupt` name."""
    aside = path.with_name(path.name + ".corrupt")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.corrupt{n}")
    for suffix in ("-wal", "-shm", ""):
        source = path.with_name(path.name + suffix)
        if source.exists():
            os.replace(source, aside.with_name(aside.name + suffix))
    return aside


@contextlib.contextmanager
def _file_lock(lock_path: Path) -> Iterator[None]:
    """An exclusive inter-process lock, so only one process checks (and maybe replaces) the file at a time."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")  # the write lock up front: a held one fails here, after WRITE_BUSY_S
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(*STORAGE_ERRORS):
            conn.execute("ROLLBACK")
        raise
