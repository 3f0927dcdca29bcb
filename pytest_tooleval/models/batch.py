"""--tooleval-batch: single requests of a sample sent through the provider's Batch API (docs/scaling.md#batch).

Before the first test, each qualifying sample (its suite's `batched_role`) is answered once while the lane of
that role collects: its request is recorded instead of sent (one already cached is served as usual), and the
suite's answer is cut short by `Deferred`. The model's request is a sample's first; a helper role's request
(ToolAlpaca's judge) comes after an episode the other roles play out as usual, their answers cached for the
test. The misses go out as one batch per role: a JSON Lines file of chat-completions bodies, exactly what
`complete` would send, each with the request's cache key as its custom_id. The answers land in the response
cache (and in memory), where the tests find them as cached answers and score them as usual. Entries that failed,
expired or came back malformed (not UTF-8, no completion) are asked as ordinary requests
(`--tooleval-batch-fallback ask`) or end as errors of their samples naming the reason (`error`): never scored.

What the endpoint sends is trusted no further than it was asked: only entries whose custom_id the batch was sent
with are read (the others are counted and ignored, never cached); a request with two entries is an error of its
sample naming both, never "the first wins"; every answer of the files and batches endpoints must be JSON of the
documented shape and a batch's status one of STATUSES, else the run stops with one line naming the endpoint.

The ledger (`<cache>/batches/`) makes a batch survive its run: a "creating" entry (the uploaded file's id) is
written before the create request leaves, and the batch's own entry the moment its id is known. A run finding a
"creating" entry looks in the endpoint's list of batches for one made from that file before it submits again,
and a lock file serializes the submissions of the runs that share a cache folder, so neither a kill during the
create nor two runs at once make a second batch. An entry whose batch the endpoint does not know (404) is
dropped with one line, and its requests are submitted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from ..errors import ToolevalUsageError
from ..json_value import JSONObject, JSONValue
from ..text import counted
from .base import ChatRequest, InfrastructureError, Reply
from .cache import cache_key, worth_keeping

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: runs sharing a cache folder are not serialized there
    fcntl = None  # type: ignore[assignment]  # None stands for "no fcntl module here" (checked before each use)

if TYPE_CHECKING:
    from .cache import ResponseCache
    from .openai_compat import OpenAIBackend

_Answer = TypeVar("_Answer")  # what a call of the files or batches endpoints gives (a raw response)
_Found = TypeVar("_Found")  # what a `before_retry` finds instead


class _Raw(Protocol):
    """A raw response of the files and batches endpoints, as far as it is read."""

    @property
    def content(self) -> bytes: ...

    @property
    def status_code(self) -> int: ...


@dataclass
class Collection:
    """What the collecting pass gathers: for each role collected, its requests (cache key -> body)."""

    roles: frozenset[str]
    wanted: dict[str, dict[str, JSONObject]] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)  # the keys this collection recorded (one case's, in a run)


#: while set, the lanes of its roles record each request they are given and raise Deferred instead of asking;
#: the other roles ask as usual (a ToolAlpaca episode runs, and only its judge's request is collected)
COLLECTING: ContextVar[Collection | None] = ContextVar("tooleval_batch_collecting", default=None)
ENDPOINT: Final = "/v1/chat/completions"
WINDOW: Final = "24h"  # the only completion window OpenAI offers
#: a batch's statuses, as OpenAI documents them; a poll answering anything else stops the run
STATUSES: Final = ("validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling",
                   "cancelled")
TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
PROGRESS_EVERY_S = 60.0  # a line at every change of status, and at least this often while waiting
POLL_FLOOR_S = 0.05  # --tooleval-batch-poll below this polls this often
LEDGER = "batches"  # the folder of the cache folder holding a file per batch submitted and not yet collected
LOCK = ".lock"  # the ledger's lock file: one submission at a time per cache folder
LIST_PAGES = 20  # pages of 100 batches searched for the batch an interrupted create may have made
LIST_SLACK_S = 3600.0  # the search stops at batches made this long before the interrupted create
_DETAIL_CHARS = 300  # what the endpoint says, as far as a message shows it
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")  # an object id as the endpoint may give it
_LABEL = re.compile(r"[A-Za-z0-9_. -]{1,40}")  # a failure's reason, as the summary counts it
_SUBMITTING: set[str] = set()  # the ledgers whose lock this process holds (another lane then waits quietly)


class Deferred(BaseException):
    """Raised through a suite's `answer` while requests are collected: not an Exception, so that a suite's own
    error handling cannot turn it into a verdict."""


@dataclass
class BatchSummary:
    """What the batch phase did (the report's `totals.batch`, and a line of the summary)."""

    batches: list[str] = field(default_factory=list)  # the ids waited for: submitted now, or resumed
    submitted: int = 0  # requests sent in a batch created by this run
    resumed: int = 0  # requests found in a batch an earlier run had submitted
    answered: int = 0  # requests whose one entry came back as an answer
    failed: dict[str, int] = field(default_factory=dict)  # requests whose entry did not, by reason
    duplicated: int = 0  # requests with more than one entry: errors of their samples, whatever the fallback
    unknown: int = 0  # entries whose custom_id the batch was not sent with: ignored
    unreadable: int = 0  # lines of the batch's files that name no request (not JSON, no custom_id): ignored
    dropped: int = 0  # batches of the ledger the endpoint did not know (404): their requests submitted again
    fallback: str = "ask"
    wait_s: float = 0.0
    unavailable: str | None = None  # the endpoint has no Batch API: every sample was asked as usual
    pending: int = 0  # requests of batches still running when --tooleval-batch-wait ran out (not run now)

    def as_dict(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def combined(cls, parts: list[BatchSummary]) -> BatchSummary:
        """The batch phase of several roles (each its own batches) as one."""
        whole = cls(fallback=parts[0].fallback)
        for part in parts:
            whole.batches += part.batches
            for name in ("submitted", "resumed", "answered", "duplicated", "unknown", "unreadable", "dropped",
                         "pending"):
                setattr(whole, name, getattr(whole, name) + getattr(part, name))
            for reason, count in part.failed.items():
                whole.failed[reason] = whole.failed.get(reason, 0) + count
            whole.wait_s = max(whole.wait_s, part.wait_s)
            whole.unavailable = whole.unavailable or part.unavailable
        return whole

    def line(self) -> str:
        if self.unavailable is not None:
            return f"tooleval batch: not used: {self.unavailable}; every sample was asked as an ordinary request"
        failed = sum(self.failed.values())
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(self.failed.items()))
        then = "asked as ordinary requests" if self.fallback == "ask" else "errors of their samples"
        tail = f"; {failed} did not ({reasons}): {then}" if failed else ""
        if self.duplicated:
            tail += (f"; {self.duplicated} came back more than once (duplicate_custom_id): errors of their samples, "
                     "naming every copy")
        if self.unknown:
            tail += (f"; {counted(self.unknown, 'entry', 'entries')} for requests not sent in the batch "
                     f"{'was' if self.unknown == 1 else 'were'} ignored")
        if self.unreadable:
            tail += (f"; {counted(self.unreadable, 'line')} naming no request "
                     f"{'was' if self.unreadable == 1 else 'were'} ignored")
        if self.pending:
            tail += (f"; {self.pending} still in progress when --tooleval-batch-wait ran out: their samples are not "
                     "run, and a rerun picks the batch up")
        return (f"tooleval batch: {counted(self.answered, 'answer')} from "
                f"{counted(len(self.batches), 'batch', 'batches')} ({counted(self.submitted, 'request')} submitted, "
                f"{self.resumed} resumed) in {self.wait_s:.0f} s{tail}")


@dataclass(frozen=True)
class _LedgerEntry:
    path: Path
    keys: frozenset[str]
    batch_id: str | None  # None while "creating": the batch made from `input_file_id` is not known yet
    input_file_id: str | None
    created: float


class BatchLane:
    """The model under test's backend with a batch lane beside it (between the response cache and the backend).

    Args:
        backend: the role's OpenAIBackend: its request bodies, its client, its reading of answers.
        role: "model" for the model under test, else the helper role's name (the judge).
        cache: the run's response cache, where the batch's answers are put.
        folder: the cache folder (the ledger of submitted batches lives in its `batches/`).
        poll_s: seconds between polls of a batch (at least POLL_FLOOR_S).
        fallback: "ask" (entries that failed are asked as ordinary requests) or "error".
        say: writes one line to the terminal (the lane takes the key out of it first).
        wait_s: how long the run waits for its batches (None: until they end).
    """

    def __init__(self, backend: OpenAIBackend, cache: ResponseCache | None, folder: Path, *, poll_s: float,
                 fallback: str, say: Callable[[str], None], role: str = "model",
                 wait_s: float | None = None) -> None:
        self.backend = backend
        self.role = role
        self.name = backend.name
        self.cache = cache
        self.poll_s = max(poll_s, POLL_FLOOR_S)
        self.fallback = fallback
        self.say: Callable[[str], None] = lambda line: say(backend.redact(line))
        self.ledger = _Ledger(folder / LEDGER, self.cache_identity, self.say)
        self.wait_s = wait_s  # how long the run waits for its batches (None: until they end)
        self.answers: dict[str, Reply] = {}  # this run's batch answers, by key
        self._uncached: dict[str, Reply] = {}  # those the response cache does not hold (an empty one), served here
        self.pending: dict[str, str] = {}  # key -> the batch still running it when the wait ran out
        self.failures: dict[str, str] = {}  # key -> why its entry came back without an answer (the fallback's)
        self.refused: dict[str, str] = {}  # key -> why its entries were refused (duplicates): always an error

    def cache_identity(self) -> JSONObject:
        return self.backend.cache_identity()  # the lane changes nothing about an answer: the same keys

    async def complete(self, request: ChatRequest) -> Reply:
        collecting = COLLECTING.get()
        if collecting is not None and self.role in collecting.roles:
            key = cache_key(self.cache_identity(), request)
            collecting.wanted.setdefault(self.role, {}).setdefault(key, self.backend.request_body(request))
            collecting.keys.append(key)
            raise Deferred
        # the batch's answers the cache in front holds never reach here: only those it does not keep (an empty
        # answer, or no cache), the refused ones and, with fallback error, the failures need the key again
        if self._uncached or self.refused or (self.failures and self.fallback == "error"):
            key = cache_key(self.cache_identity(), request)
            answer = self._uncached.get(key)
            if answer is not None:
                return answer
            if key in self.refused:
                raise InfrastructureError(f"{self.backend.label}: the batch's answer was refused: {self.refused[key]}")
            if key in self.failures and self.fallback == "error":
                raise InfrastructureError(f"{self.backend.label}: the batch gave no answer: {self.failures[key]} "
                                          "(--tooleval-batch-fallback error)")
        return await self.backend.complete(request)

    async def aclose(self) -> None:
        await self.backend.aclose()

    # -- the batch phase -----------------------------------------------------------------------------------

    async def run(self, wanted: dict[str, JSONObject]) -> BatchSummary:
        """Send the requests `wanted` (key -> body) that no earlier batch holds, wait for every batch holding
        one, and keep their answers."""
        started = time.monotonic()
        summary = BatchSummary(fallback=self.fallback)
        if not wanted:
            return summary
        async with self.ledger.submitting():  # what the ledger holds and what is submitted, one run at a time
            pending, first = await self._resumable(wanted, summary)
            covered = set().union(*pending.values()) if pending else set()
            summary.resumed = len(covered & wanted.keys())
            for batch_id, keys in pending.items():
                self.say(f"tooleval batch: resuming {batch_id}, submitted by an earlier run "
                         f"({len(keys & wanted.keys())} of its requests are this run's)")
            fresh = sorted(key for key in wanted if key not in covered)
            if fresh:
                try:
                    batch_id = await self._submit({key: wanted[key] for key in fresh})
                except _NoBatchApi as exc:
                    if pending:
                        raise ToolevalUsageError(self.backend.redact(
                            f"tooleval batch: cannot submit: {exc}; earlier batches are waiting: rerun when the "
                            "endpoint answers, or drop --tooleval-batch")) from None
                    summary.unavailable = str(exc)
                    self.say(summary.line())
                    return summary
                pending[batch_id] = set(fresh)
                summary.submitted = len(fresh)
        summary.batches = sorted(pending)
        deadline = None if self.wait_s is None else started + self.wait_s
        for batch_id, keys in sorted(pending.items()):
            await self._wait_and_collect(batch_id, keys, summary, deadline, first.get(batch_id))
        summary.wait_s = round(time.monotonic() - started, 1)
        self.say(summary.line())
        return summary

    async def _resumable(self, wanted: dict[str, JSONObject],
                         summary: BatchSummary) -> tuple[dict[str, set[str]], dict[str, JSONObject]]:
        """The batches of the ledger holding some of `wanted` that the endpoint knows (each with its first poll);
        a "creating" entry becomes the batch the endpoint made from its file, or is dropped (and its file
        deleted) when there is none; an entry whose batch the endpoint does not know is dropped."""
        pending: dict[str, set[str]] = {}
        first: dict[str, JSONObject] = {}
        for entry in self.ledger.entries():
            if not entry.keys & wanted.keys():
                continue
            batch_id = entry.batch_id
            if batch_id is None:
                assert entry.input_file_id is not None
                found = await self._find_created(entry.input_file_id, entry.created)
                if found is None:
                    deleted = await self._delete_file(entry.input_file_id)
                    _unlink(entry.path)
                    self.say(f"tooleval batch: an earlier run stopped while creating a batch from "
                             f"{entry.input_file_id}, and {self.backend.endpoint} holds none made from it: this run "
                             f"submits its {counted(len(entry.keys & wanted.keys()), 'request')} again{deleted}")
                    continue
                batch_id = str(found["id"])
                self.ledger.remember(batch_id, entry.keys)
                _unlink(entry.path)
                self.say(f"tooleval batch: found {batch_id}, created from {entry.input_file_id} by an earlier run "
                         "that stopped before the endpoint's answer came")
            if batch_id in pending:
                pending[batch_id] |= entry.keys
                continue
            try:
                first[batch_id] = await self._poll(batch_id)
            except _Unknown as exc:
                self.ledger.forget(batch_id)
                summary.dropped += 1
                self.say(f"tooleval batch: {batch_id}, submitted by an earlier run, is unknown to "
                         f"{self.backend.endpoint} ({exc}): dropped from the ledger; this run submits its "
                         f"{counted(len(entry.keys & wanted.keys()), 'request')} again")
                continue
            pending[batch_id] = set(entry.keys)
        return pending, first

    async def _submit(self, bodies: dict[str, JSONObject]) -> str:
        """Upload the requests and create their batch; the ledger holds it before the create request leaves."""
        lines = "".join(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body},
                                   ensure_ascii=False, separators=(",", ":")) + "\n" for key, body in bodies.items())
        client = self.backend.client()
        upload = functools.partial(client.files.with_raw_response.create,
                                   file=("tooleval-batch.jsonl", lines.encode("utf-8")), purpose="batch")
        try:
            file_id = str(_file_object(self._json(await self._call(upload, first=True)))["id"])
        except (_CallFailed, _Invalid) as exc:
            raise self._stop("upload the requests", exc, "nothing was submitted (or drop --tooleval-batch)") from None
        since = time.time()
        try:
            creating = self.ledger.write_entry(f"creating-{_safe(file_id)}.json", {
                "state": "creating", "input_file_id": file_id, "keys": sorted(bodies), "created": since})
        except OSError as exc:
            deleted = await self._delete_file(file_id)
            raise ToolevalUsageError(f"tooleval batch: cannot write the ledger {self.ledger.folder} ({exc}): nothing "
                                     f"was submitted{deleted}") from None
        create = functools.partial(client.batches.with_raw_response.create, input_file_id=file_id, endpoint=ENDPOINT,
                                   completion_window=WINDOW, metadata={"created_by": "pytest-tooleval"})

        async def made() -> JSONObject | None:  # before a create is tried again: did the last one make it?
            return await self._find_created(file_id, since)

        try:
            answer = await self._call(create, first=True, before_retry=made)
            batch = answer if isinstance(answer, dict) else _batch_object(self._json(answer))
        except (_NoBatchApi, _CallFailed) as exc:
            if isinstance(exc, _CallFailed) and not exc.definite:
                raise self._stop("create the batch", exc, _UNSURE.format(file=file_id)) from None
            # the endpoint said no: no batch exists, and neither the upload nor its ledger entry is kept
            deleted = await self._delete_file(file_id)
            _unlink(creating)
            if isinstance(exc, _NoBatchApi):
                raise _NoBatchApi(f"{exc}{deleted}") from None
            raise self._stop("create the batch", exc,
                             f"no batch was made{deleted} (or drop --tooleval-batch)") from None
        except _Invalid as exc:  # a 200 that is no batch: one may have been made
            raise self._stop("create the batch", exc, _UNSURE.format(file=file_id)) from None
        batch_id = str(batch["id"])
        self.ledger.remember(batch_id, bodies)  # before anything else can fail: a rerun then resumes it
        _unlink(creating)
        self.say(f"tooleval batch: submitted {batch_id} ({counted(len(bodies), 'request')}, window {WINDOW}); a run "
                 "stopped now "
                 "picks it up when started again")
        return batch_id

    async def _find_created(self, file_id: str, since: float) -> JSONObject | None:
        """The batch the endpoint made from `file_id`, if any (GET /v1/batches, newest first)."""
        client = self.backend.client()
        after: str | None = None
        for _ in range(LIST_PAGES):
            listing = client.batches.with_raw_response.list
            page = (functools.partial(listing, limit=100, after=after) if after
                    else functools.partial(listing, limit=100))
            try:
                items, more = _batch_page(self._json(await self._call(page)))
            except (_CallFailed, _Invalid) as exc:
                raise self._stop("list the batches", exc, _UNSURE.format(file=file_id)) from None
            for item in items:
                if item.get("input_file_id") == file_id:
                    return item
            made = [created for item in items if isinstance(created := item.get("created_at"), (int, float))]
            if not more or not items or (made and min(made) < since - LIST_SLACK_S):
                return None
            after = str(items[-1]["id"])
        return None

    async def _poll(self, batch_id: str) -> JSONObject:
        """The batch as the endpoint has it now; _Unknown when it does not know it (404)."""
        client = self.backend.client()
        try:
            batch = _batch_object(self._json(await self._call(_bound(client.batches.with_raw_response.retrieve,
                                                                     batch_id))))
        except _CallFailed as exc:
            if exc.status == 404:
                raise _Unknown(exc.detail) from None
            raise self._stop(f"poll {batch_id}", exc, _KEPT.format(batch=batch_id)) from None
        except _Invalid as exc:
            raise self._stop(f"poll {batch_id}", exc, _KEPT.format(batch=batch_id)) from None
        if batch["id"] != batch_id:
            raise self._stop(f"poll {batch_id}", _Invalid(f"the answer is batch {batch['id']}, not {batch_id}"),
                             _KEPT.format(batch=batch_id))
        return batch

    async def _wait_and_collect(self, batch_id: str, keys: set[str], summary: BatchSummary,
                                deadline: float | None, batch: JSONObject | None = None) -> None:
        client = self.backend.client()
        shown, shown_at = "", 0.0
        while True:
            if batch is None:
                try:
                    batch = await self._poll(batch_id)
                except _Unknown as exc:
                    self.ledger.forget(batch_id)
                    raise ToolevalUsageError(self.backend.redact(
                        f"tooleval batch: {batch_id} is unknown to {self.backend.endpoint} ({exc}): dropped from the "
                        "ledger; a rerun submits its requests again")) from None
            counts = batch.get("request_counts")
            if not isinstance(counts, dict):
                counts = None  # _batch_object lets only a dict or None through
            state = (f"{batch['status']}, {counts.get('completed', 0) if counts else 0} of "
                     f"{counts.get('total', 0) if counts else len(keys)} done, "
                     f"{counts.get('failed', 0) if counts else 0} failed")
            if state != shown or time.monotonic() - shown_at >= PROGRESS_EVERY_S:
                self.say(f"tooleval batch {batch_id}: {state}")
                shown, shown_at = state, time.monotonic()
            if batch["status"] in TERMINAL:
                break
            if deadline is not None and time.monotonic() + self.poll_s > deadline:
                # --tooleval-batch-wait: left running (and in the ledger) for a later run to collect
                self.pending.update(dict.fromkeys(keys, batch_id))
                summary.pending += len(keys)
                self.say(f"tooleval batch {batch_id}: still {batch['status']} after --tooleval-batch-wait; left for "
                         "a later run to collect")
                return
            await asyncio.sleep(self.poll_s)
            batch = None
        files: list[tuple[str, bytes]] = []
        for label, file_id in (("output file", batch["output_file_id"]), ("error file", batch["error_file_id"])):
            if isinstance(file_id, str) and file_id:  # a str or None (_batch_object)
                try:
                    raw = await self._call(_bound(client.files.with_raw_response.content, file_id))
                except _CallFailed as exc:
                    raise self._stop(f"download {file_id} of {batch_id}", exc, _KEPT.format(batch=batch_id)) from None
                files.append((f"{label} {file_id}", bytes(raw.content)))
        decided = self._read_results(files, keys, summary)
        reason = ("missing_entry: the batch's files hold no entry for it" if batch["status"] == "completed"
                  else _batch_reason(batch))
        for key in sorted(keys - decided):
            self._failed(key, reason, summary)
        if self.cache is not None:
            self.cache.flush()  # on disk before the ledger forgets the batch (and before the workers read it)
        self.ledger.forget(batch_id)

    def _read_results(self, files: list[tuple[str, bytes]], keys: set[str], summary: BatchSummary) -> set[str]:
        """Keep the answers of a batch's output and error files, reading only the entries of `keys` (the
        requests the batch was sent with); the keys decided (answered, failed or refused)."""
        copies: dict[str, list[tuple[str, JSONObject, bool]]] = {}  # key -> (where, entry, not UTF-8)
        for name, data in files:
            for number, raw in enumerate(data.split(b"\n"), start=1):
                if not raw.strip():
                    continue
                try:
                    text, garbled = raw.decode("utf-8"), False
                except UnicodeDecodeError:  # still read, to know whose entry is broken
                    text, garbled = raw.decode("utf-8", "replace"), True
                entry: JSONValue
                try:
                    entry = json.loads(text)
                except (ValueError, RecursionError):  # not JSON, an integer too long, nested too deeply
                    entry = None
                key = entry.get("custom_id") if isinstance(entry, dict) else None
                if not isinstance(key, str) or not isinstance(entry, dict):
                    summary.unreadable += 1
                elif key not in keys:
                    summary.unknown += 1  # never cached: the batch was not sent with it
                else:
                    copies.setdefault(key, []).append((f"{name} line {number}", entry, garbled))
        for key, found in sorted(copies.items()):
            if key in self.answers or key in self.refused:
                continue  # decided by another batch of this run holding the same request
            if len(found) > 1:
                named = "; ".join(f"{where}, {_entry_id(entry)}" for where, entry, _ in found)
                self._refuse(key, f"duplicate_custom_id: {len(found)} entries for this request ({named}): none "
                                  "is scored", summary)
                continue
            where, entry, garbled = found[0]
            response = entry.get("response")
            if not isinstance(response, dict):
                response = None
            status = response.get("status_code") if response else None
            if garbled:
                self._failed(key, f"malformed_entry: {where} is not UTF-8", summary)
            elif status == 200:
                try:
                    reply = self.backend.reply_from_completion(response.get("body") if response else None)
                except Exception as exc:  # a body that is no completion: not an answer
                    self._failed(key, f"malformed_entry: {where}: {exc}", summary)
                    continue
                self.answers[key] = reply
                if self.cache is not None and worth_keeping(reply):
                    self.cache.put_soon(key, reply)
                else:
                    self._uncached[key] = reply
                summary.answered += 1
            else:
                self._failed(key, _entry_reason(entry, response), summary)
        return set(copies)

    def _failed(self, key: str, reason: str, summary: BatchSummary) -> None:
        if key in self.failures or key in self.answers or key in self.refused:
            return
        reason = self._clean(reason)
        self.failures[key] = reason
        label = _label(reason)
        summary.failed[label] = summary.failed.get(label, 0) + 1

    def _refuse(self, key: str, reason: str, summary: BatchSummary) -> None:
        self.refused[key] = self._clean(reason, 2 * _DETAIL_CHARS)
        summary.duplicated += 1

    def _clean(self, text: str, limit: int = _DETAIL_CHARS) -> str:
        """What the endpoint said, as a message may show it: one line, clipped, without the key."""
        return self.backend.redact(" ".join(text.split())[:limit])

    # -- the files and batches endpoints -------------------------------------------------------------------

    async def _call(self, call: Callable[[], Awaitable[_Answer]], *, first: bool = False, retry: bool = True,
                    before_retry: Callable[[], Awaitable[_Found | None]] | None = None) -> _Answer | _Found:
        """One request to the files or batches endpoints (its raw answer), retried by the chat requests' own
        table and backoff (openai_compat.classify, OpenAIBackend.retry_delay); a 404 or 405 on the first ones
        means the endpoint has no Batch API (vLLM, Ollama). `before_retry` is asked before each retry: what it
        gives (not None) is returned instead. _CallFailed when it gave up."""
        import openai

        from .openai_compat import classify, describe

        retries = 0
        while True:
            try:
                return await call()
            except openai.OpenAIError as exc:
                decision = classify(exc)
                detail = self._clean(describe(exc))
                status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
            if first and status in (404, 405, 501):
                raise _NoBatchApi(f"{self.backend.endpoint} has no Batch API ({detail})")
            if not retry or not decision.retryable or retries >= self.backend.max_retries:
                raise _CallFailed(detail, status)
            await asyncio.sleep(self.backend.retry_delay(retries, decision))
            retries += 1
            if before_retry is not None and (instead := await before_retry()) is not None:
                return instead

    def _json(self, raw: _Raw) -> JSONValue:
        """The JSON of a raw answer; _Invalid when it is none (cut off, not UTF-8, HTML)."""
        data = bytes(raw.content)
        try:
            value: JSONValue = json.loads(data)
            return value
        except (ValueError, RecursionError):  # UnicodeDecodeError included; nested too deeply
            shown = self._clean(data[:60].decode("utf-8", "replace"), 60)
            raise _Invalid(f"the answer is not JSON (HTTP {raw.status_code}, {len(data)} bytes: {shown!r})") from None

    def _stop(self, what: str, exc: Exception, then: str) -> ToolevalUsageError:
        """The one line a failed call of the files and batches endpoints stops the run with (exit status 4)."""
        return ToolevalUsageError(self.backend.redact(
            f"tooleval batch: could not {what} at {self.backend.endpoint}: {exc}; {then}"))

    async def _delete_file(self, file_id: str) -> str:
        """Delete an uploaded file that no batch uses (best effort); what to add to the line that says so."""
        client = self.backend.client()
        try:
            await self._call(_bound(client.files.with_raw_response.delete, file_id), retry=False)
        except (_CallFailed, _NoBatchApi) as exc:
            return f" (deleting the uploaded {file_id} failed too: {exc})"
        return f", and the uploaded {file_id} was deleted"


class _Ledger:
    """A file per batch submitted (or being created) and not yet collected, in `<cache>/batches/`, and the lock
    that lets one run at a time submit from a cache folder (see the module's docstring)."""

    def __init__(self, folder: Path, identity: Callable[[], JSONObject], say: Callable[[str], None]) -> None:
        self.folder = folder
        self.identity = identity  # the model and endpoint the entries belong to: its lane's cache identity
        self.say = say

    @contextlib.asynccontextmanager
    async def submitting(self) -> AsyncIterator[None]:
        """The ledger's lock, held while this lane reads the ledger and submits: a run (or role) sharing the
        cache folder waits, then finds the batch this one made."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle = open(self.folder / LOCK, "a+b")  # noqa: SIM115 - closed below, which lets the lock go
        except OSError as exc:
            raise ToolevalUsageError(f"tooleval batch: cannot use the ledger {self.folder} ({exc}): point "
                                     "--tooleval-cache-dir at a folder this run can write") from None
        mine = str(self.folder.resolve())
        try:
            told = False
            while fcntl is not None:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if not told and mine not in _SUBMITTING:
                        self.say(f"tooleval batch: another run is submitting a batch from this cache folder; "
                                 f"waiting for it to finish ({self.folder / LOCK})")
                        told = True
                    await asyncio.sleep(POLL_FLOOR_S)
            _SUBMITTING.add(mine)
            try:
                yield
            finally:
                _SUBMITTING.discard(mine)
        finally:
            handle.close()

    def write_entry(self, name: str, content: Mapping[str, object]) -> Path:  # written as JSON
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / name
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({**content, "identity": self.identity()}), encoding="utf-8")
        os.replace(temporary, target)
        return target

    def remember(self, batch_id: str, bodies: Iterable[str]) -> None:
        try:
            self.write_entry(f"{_safe(batch_id)}.json", {"state": "submitted", "batch_id": batch_id,
                                                          "keys": sorted(bodies), "created": time.time()})
        except OSError as exc:
            raise ToolevalUsageError(f"tooleval batch: {batch_id} was created, but the ledger {self.folder} cannot "
                                     f"hold it ({exc}): a rerun finds it by its file if the creating entry "
                                     "is there") from None

    def entries(self) -> list[_LedgerEntry]:
        """The batches earlier runs submitted (or began to) to this model at this endpoint and did not collect."""
        found: list[_LedgerEntry] = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                if entry["identity"] != self.identity():
                    continue
                keys = frozenset(str(key) for key in entry["keys"])
                if entry.get("state") == "creating":
                    found.append(_LedgerEntry(path, keys, None, str(entry["input_file_id"]),
                                              float(entry["created"])))
                else:
                    found.append(_LedgerEntry(path, keys, str(entry["batch_id"]), None,
                                              float(entry.get("created") or 0)))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a torn or foreign file: not a batch to wait for
        return found

    def forget(self, batch_id: str) -> None:
        _unlink(self.folder / f"{_safe(batch_id)}.json")


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


_KEPT = "{batch} stays in the ledger, and a rerun resumes it (or drop --tooleval-batch)"
_UNSURE = ("whether a batch was made from {file} is unknown: the ledger keeps it, and a rerun looks for that batch "
           "before submitting again")


class _NoBatchApi(Exception):
    pass


class _CallFailed(Exception):
    """A call of the files or batches endpoints that gave up: what the endpoint said, and its HTTP status."""

    def __init__(self, detail: str, status: int | None) -> None:
        super().__init__(detail)
        self.detail, self.status = detail, status

    @property
    def definite(self) -> bool:
        """Whether the endpoint answered that it did nothing (a 4xx; a 5xx or no answer may hide a success)."""
        return self.status is not None and 400 <= self.status < 500 and self.status not in (408, 409)


class _Invalid(Exception):
    """An answer of the files or batches endpoints that is not JSON of the documented shape."""


class _Unknown(Exception):
    """The endpoint does not know the batch (404)."""


def _bound(function: Callable[[str], Awaitable[_Answer]], argument: str) -> Callable[[], Awaitable[_Answer]]:
    return lambda: function(argument)


def _safe(batch_id: str) -> str:
    return "".join(char if char.isalnum() or char in "-_" else "_" for char in batch_id)[:120]


def _shown(value: JSONValue) -> str:
    return "none" if value is None else json.dumps(value)[:40]


def _object_id(data: JSONObject, name: str = "id", *, optional: bool = False) -> None:
    value = data.get(name)
    if value is None and optional:
        return
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise _Invalid(f"the answer has no valid {name} ({_shown(value)})")


def _file_object(data: JSONValue) -> JSONObject:
    """A File object (POST /v1/files) as far as it is used: its id."""
    if not isinstance(data, dict):
        raise _Invalid(f"the answer is a JSON {type(data).__name__}, not a file object")
    _object_id(data)
    return data


def _batch_object(data: JSONValue) -> JSONObject:
    """A Batch object as far as it is used: id, status (one of STATUSES), its files' ids, counts and errors."""
    if not isinstance(data, dict):
        raise _Invalid(f"the answer is a JSON {type(data).__name__}, not a batch")
    if data.get("status") not in STATUSES:
        raise _Invalid(f"the answer has no valid batch status ({_shown(data.get('status'))}; expected one of "
                       f"{', '.join(STATUSES)})")
    _object_id(data)
    for name in ("output_file_id", "error_file_id", "input_file_id"):
        _object_id(data, name, optional=True)
    counts = data.get("request_counts")
    if counts is not None and not (isinstance(counts, dict) and all(
            isinstance(counts.get(name, 0), int) and not isinstance(counts.get(name, 0), bool)
            for name in ("total", "completed", "failed"))):
        raise _Invalid(f"the answer has no valid request_counts ({_shown(counts)})")
    errors = data.get("errors")
    if errors is not None and not (isinstance(errors, dict) and isinstance(errors.get("data") or [], list)):
        raise _Invalid(f"the answer has no valid errors ({_shown(errors)})")
    return data


def _batch_page(data: JSONValue) -> tuple[list[JSONObject], bool]:
    """A page of GET /v1/batches: its batches, and whether more follow."""
    if not isinstance(data, dict) or not isinstance(items := data.get("data"), list):
        raise _Invalid("the answer is not a list of batches")
    batches: list[JSONObject] = []
    for item in items:
        if not isinstance(item, dict):
            raise _Invalid(f"the list holds a JSON {type(item).__name__}, not a batch")
        _object_id(item)
        _object_id(item, "input_file_id", optional=True)
        batches.append(item)
    return batches, data.get("has_more") is True


def _entry_id(entry: JSONObject) -> str:
    value = entry.get("id")
    return f"id {value}" if isinstance(value, str) and _ID.fullmatch(value) else "no id"


def _label(reason: str) -> str:
    """How the summary counts a reason: its code, when it looks like one."""
    label = reason.split(":", 1)[0].strip()
    return label if _LABEL.fullmatch(label) else "error"


def _batch_reason(batch: JSONObject) -> str:
    """Why a batch's entries that neither file mentions have no answer."""
    # _batch_object let through errors that are None or a dict, whose data is a list or empty
    found = batch.get("errors") or {}
    data = found.get("data") if isinstance(found, dict) else None
    errors = data if isinstance(data, list) else []
    first = errors[0] if errors and isinstance(errors[0], dict) else None
    if first is not None:
        code, message = first.get("code"), first.get("message")
        return (f"batch_{batch['status']}: {code if isinstance(code, str) else ''} "
                f"{message if isinstance(message, str) else ''}").strip()
    return f"batch_{batch['status']}"


def _entry_reason(entry: JSONObject, response: JSONObject | None) -> str:
    error = entry.get("error")
    if isinstance(error, dict):
        return f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    body = response.get("body") if response else None
    said = body.get("error") if isinstance(body, dict) else None
    message = said.get("message") if isinstance(said, dict) else None
    status = response.get("status_code") if response else None
    return f"HTTP {status}: {message or 'no answer'}"
