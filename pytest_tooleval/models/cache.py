"""A response cache in one sqlite file, shared by the xdist workers of a run (and by later runs).

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
import os
import queue
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .base import ChatRequest, ModelBackend, Reply, ToolCall
from .storage import CACHE, STORAGE_ERRORS, StorageLog

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock around the open-time check
    fcntl = None  # type: ignore[assignment]  # None stands for "no fcntl module here" (checked before each use)

__all__ = ["CachedBackend", "ResponseCache", "ResponseCacheWarning", "cache_key"]

KEY_VERSION = 1  # bump when the key payload changes, so old entries stop matching
_TABLE = "replies_v1"  # a new layout gets a new table, and old files stay readable without migrations
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
_ADDED_COLUMNS = (("reasoning", "TEXT"), ("reasoning_tokens", "INTEGER"), ("tool_calls", "TEXT"))
READ_BUSY_S = 2.0  # a read that finds the file busy this long turns reading off: the requests are asked instead
WRITE_BUSY_S = 2.0  # how long a write waits for another process's write lock before it is skipped
CLOSE_DEADLINE_S = 10.0  # at the end of a run, how long queued writes may take before they are given up


class ResponseCacheWarning(UserWarning):
    """The cache file was unusable and has been set aside."""


def cache_key(identity: Mapping[str, Any], request: ChatRequest) -> str:
    """sha256 of the canonical JSON of everything that determines an answer.

    Args:
        identity: the backend's `cache_identity()` (kind, model, endpoint host and path); never the key.
        request: the request; messages, sampling parameters, stop and extra all count.
    """
    payload = {
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


def _keyed(message: Mapping[str, Any]) -> dict[str, Any]:
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
                 log: StorageLog | None = None) -> None:
        self.path = Path(path)
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
            # columns added since: old files gain them (empty), and old plugins ignore them
            present = {row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})")}
            for column, kind in _ADDED_COLUMNS:
                if column not in present:
                    conn.execute(f"ALTER TABLE {_TABLE} ADD COLUMN {column} {kind}")
        except BaseException:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> Reply | None:
        with self._lock:
            return self._select(self._conn, key)

    @staticmethod
    def _select(conn: sqlite3.Connection, key: str) -> Reply | None:
        row = conn.execute(
            "SELECT text, prompt_tokens, completion_tokens, finish_reason, latency_s, reasoning, reasoning_tokens, "
            f"tool_calls FROM {_TABLE} WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        text, prompt_tokens, completion_tokens, finish_reason, latency_s, reasoning, reasoning_tokens, calls = row
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
            tool_calls=tool_calls,
        )

    def put(self, key: str, reply: Reply) -> None:
        """Store `reply` unless `key` is already there: the first answer stays, so reruns see the same one."""
        with self._lock:
            self._insert(self._conn, key, reply)

    @staticmethod
    def _insert(conn: sqlite3.Connection, key: str, reply: Reply) -> None:
        conn.execute(
            f"INSERT OR IGNORE INTO {_TABLE} "
            "(key, text, prompt_tokens, completion_tokens, finish_reason, latency_s, created, reasoning, "
            "reasoning_tokens, tool_calls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, reply.text, reply.prompt_tokens, reply.completion_tokens, reply.finish_reason, reply.latency_s,
             time.time(), reply.reasoning, reply.reasoning_tokens,
             json.dumps([call.to_json() for call in reply.tool_calls]) if reply.tool_calls else None),
        )

    # -- during a run: never in the way of an answer ---------------------------------------------------

    async def get_soon(self, key: str) -> Reply | None:
        """`get` for a run: None when the cache cannot answer (logged), and never a wait for a lock.

        It reads on the event loop, through a connection of its own that gives up on a busy file after
        READ_BUSY_S: a read in WAL mode does not wait for writers, and a thread hop per request cost one
        process with no latency a tenth of its throughput (benchmarks/perf)."""
        unwritten = self._unwritten.get(key)
        if unwritten is not None:
            return dataclasses.replace(unwritten, cached=True)
        if not self._reading:
            return None
        try:
            if self._read_conn is None:
                self._read_conn = sqlite3.connect(self.path, timeout=READ_BUSY_S, isolation_level=None,
                                                  check_same_thread=False)
                self._read_conn.execute(f"PRAGMA busy_timeout = {int(READ_BUSY_S * 1000)}")
            return self._select(self._read_conn, key)
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
                        self._insert(conn, key, reply)
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
    def cache_identity(self) -> Mapping[str, Any]: ...


class CachedBackend:
    """Wraps any backend: a request answered before is served from the cache (`cached=True`), never re-asked.

    Only answers are stored; an `InfrastructureError` passes through and the next run asks again.

    Args:
        backend: the backend that answers misses.
        cache: where answers are kept.
        identity: what names the backend in keys; default its `cache_identity()`, else its class and name.
    """

    def __init__(self, backend: ModelBackend, cache: ResponseCache, *, identity: Mapping[str, Any] | None = None):
        self.backend = backend
        self.cache = cache
        self.name = backend.name
        if identity is None:
            if isinstance(backend, _HasCacheIdentity):
                identity = backend.cache_identity()
            else:
                identity = {"backend": type(backend).__name__, "name": backend.name}
        self.identity = dict(identity)

    def cache_identity(self) -> dict[str, Any]:
        return dict(self.identity)

    async def complete(self, request: ChatRequest) -> Reply:
        key = cache_key(self.identity, request)
        hit = await self.cache.get_soon(key)
        if hit is not None:
            return hit
        reply = await self.backend.complete(request)
        if worth_keeping(reply):
            self.cache.put_soon(key, reply)
        return reply

    async def aclose(self) -> None:
        aclose = getattr(self.backend, "aclose", None)
        if aclose is not None:
            await aclose()


def worth_keeping(reply: Reply) -> bool:
    """An empty reply (`content: null` or "", and no tool calls) is scored as it is, but not kept: it is as
    often a passing fault of the endpoint as an answer, and a rerun should ask again."""
    return bool(reply.text or reply.tool_calls)


def _read_tool_calls(stored: Any) -> tuple[ToolCall, ...] | None:
    """The stored tool_calls column: () when empty, None when it does not read back as calls."""
    if stored is None:
        return ()
    try:
        items = json.loads(stored)
        return tuple(ToolCall(str(item["id"]), str(item["name"]), str(item["arguments"])) for item in items)
    except (TypeError, KeyError, ValueError):
        return None


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
