"""--tooleval-batch: single requests of a sample sent through the provider's Batch API (docs/scaling.md#batch).

Before the first test, each qualifying sample (its suite's `batched_role`) is answered once while the lane of
that role collects: its request is recorded instead of sent (one already cached is served as usual), and the
suite's answer is cut short by `Deferred`. The model's request is a sample's first; a helper role's request
(ToolAlpaca's judge) comes after an episode the other roles play out as usual, their answers cached for the
test. The misses go out as one batch per role: a JSON Lines file of chat-completions bodies, exactly what
`complete` would send, each with the request's cache key as its custom_id. The batch's id is written to the
cache folder the moment it exists, so a run killed before the results came finds it and polls it again
instead of submitting another. The answers land in the response cache (and in memory), where the tests find
them as cached answers and score them as usual. Entries that failed or expired are asked as ordinary requests
(`--tooleval-batch-fallback ask`) or end as errors of their samples naming the reason (`error`): never scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import ToolevalUsageError
from .base import ChatRequest, InfrastructureError, Reply
from .cache import cache_key, worth_keeping

if TYPE_CHECKING:
    from .cache import ResponseCache
    from .openai_compat import OpenAIBackend

@dataclass
class Collection:
    """What the collecting pass gathers: for each role collected, its requests (cache key -> body)."""

    roles: frozenset[str]
    wanted: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)  # the keys this collection recorded (one case's, in a run)


#: while set, the lanes of its roles record each request they are given and raise Deferred instead of asking;
#: the other roles ask as usual (a ToolAlpaca episode runs, and only its judge's request is collected)
COLLECTING: ContextVar[Collection | None] = ContextVar("tooleval_batch_collecting", default=None)
ENDPOINT: Final = "/v1/chat/completions"
WINDOW: Final = "24h"  # the only completion window OpenAI offers
TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
PROGRESS_EVERY_S = 60.0  # a line at every change of status, and at least this often while waiting
LEDGER = "batches"  # the folder of the cache folder holding a file per batch submitted and not yet collected


class Deferred(BaseException):
    """Raised through a suite's `answer` while requests are collected: not an Exception, so that a suite's own
    error handling cannot turn it into a verdict."""


@dataclass
class BatchSummary:
    """What the batch phase did (the report's `totals.batch`, and a line of the summary)."""

    batches: list[str] = field(default_factory=list)  # the ids waited for: submitted now, or resumed
    submitted: int = 0  # requests sent in a batch created by this run
    resumed: int = 0  # requests found in a batch an earlier run had submitted
    answered: int = 0  # entries that came back as answers
    failed: dict[str, int] = field(default_factory=dict)  # entries that did not, by reason
    fallback: str = "ask"
    wait_s: float = 0.0
    unavailable: str | None = None  # the endpoint has no Batch API: every sample was asked as usual
    pending: int = 0  # requests of batches still running when --tooleval-batch-wait ran out (not run now)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def combined(cls, parts: list[BatchSummary]) -> BatchSummary:
        """The batch phase of several roles (each its own batches) as one."""
        whole = cls(fallback=parts[0].fallback)
        for part in parts:
            whole.batches += part.batches
            whole.submitted += part.submitted
            whole.resumed += part.resumed
            whole.answered += part.answered
            for reason, count in part.failed.items():
                whole.failed[reason] = whole.failed.get(reason, 0) + count
            whole.wait_s = max(whole.wait_s, part.wait_s)
            whole.pending += part.pending
            whole.unavailable = whole.unavailable or part.unavailable
        return whole

    def line(self) -> str:
        if self.unavailable is not None:
            return f"tooleval batch: not used: {self.unavailable}; every sample was asked as an ordinary request"
        failed = sum(self.failed.values())
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(self.failed.items()))
        then = "asked as ordinary requests" if self.fallback == "ask" else "errors of their samples"
        tail = f"; {failed} did not ({reasons}): {then}" if failed else ""
        if self.pending:
            tail += (f"; {self.pending} still in progress when --tooleval-batch-wait ran out: their samples are not "
                     "run, and a rerun picks the batch up")
        return (f"tooleval batch: {self.answered} answers from {len(self.batches)} batch"
                f"{'es' if len(self.batches) != 1 else ''} ({self.submitted} requests submitted, {self.resumed} "
                f"resumed) in {self.wait_s:.0f} s{tail}")


class BatchLane:
    """The model under test's backend with a batch lane beside it (between the response cache and the backend).

    Args:
        backend: the role's OpenAIBackend: its request bodies, its client, its reading of answers.
        role: "model" for the model under test, else the helper role's name (the judge).
        cache: the run's response cache, where the batch's answers are put.
        folder: the cache folder (the ledger of submitted batches lives in its `batches/`).
        poll_s: seconds between polls of a batch.
        fallback: "ask" (entries that failed are asked as ordinary requests) or "error".
        say: writes one line to the terminal.
    """

    def __init__(self, backend: OpenAIBackend, cache: ResponseCache | None, folder: Path, *, poll_s: float,
                 fallback: str, say: Callable[[str], None], role: str = "model",
                 wait_s: float | None = None) -> None:
        self.backend = backend
        self.role = role
        self.name = backend.name
        self.cache = cache
        self.ledger = folder / LEDGER
        self.poll_s = poll_s
        self.fallback = fallback
        self.say = say
        self.wait_s = wait_s  # how long the run waits for its batches (None: until they end)
        self.answers: dict[str, Reply] = {}  # this run's batch answers, by key
        self._uncached: dict[str, Reply] = {}  # those the response cache does not hold (an empty one), served here
        self.pending: dict[str, str] = {}  # key -> the batch still running it when the wait ran out
        self.failures: dict[str, str] = {}  # key -> why its entry came back without an answer

    def cache_identity(self) -> dict[str, str]:
        return self.backend.cache_identity()  # the lane changes nothing about an answer: the same keys

    async def complete(self, request: ChatRequest) -> Reply:
        collecting = COLLECTING.get()
        if collecting is not None and self.role in collecting.roles:
            key = cache_key(self.cache_identity(), request)
            collecting.wanted.setdefault(self.role, {}).setdefault(key, self.backend.request_body(request))
            collecting.keys.append(key)
            raise Deferred
        # the batch's answers the cache in front holds never reach here: only those it does not keep (an empty
        # answer, or no cache) and, with fallback error, the failures need the key again (the cache made it)
        if self._uncached or (self.failures and self.fallback == "error"):
            key = cache_key(self.cache_identity(), request)
            answer = self._uncached.get(key)
            if answer is not None:
                return answer
            if key in self.failures and self.fallback == "error":
                raise InfrastructureError(f"{self.backend.label}: the batch gave no answer: {self.failures[key]} "
                                          "(--tooleval-batch-fallback error)")
        return await self.backend.complete(request)

    async def aclose(self) -> None:
        await self.backend.aclose()

    # -- the batch phase -----------------------------------------------------------------------------------

    async def run(self, wanted: dict[str, dict[str, Any]]) -> BatchSummary:
        """Send the requests `wanted` (key -> body) that no earlier batch holds, wait for every batch holding
        one, and keep their answers."""
        started = time.monotonic()
        summary = BatchSummary(fallback=self.fallback)
        if not wanted:
            return summary
        pending = {batch_id: keys for batch_id, keys in self._submitted().items() if keys & wanted.keys()}
        covered = set().union(*pending.values()) if pending else set()
        summary.resumed = len(covered & wanted.keys())
        for batch_id, keys in pending.items():
            self.say(f"tooleval batch: resuming {batch_id}, submitted by an earlier run ({len(keys & wanted.keys())}"
                     " of its requests are this run's)")
        fresh = sorted(key for key in wanted if key not in covered)
        if fresh:
            try:
                batch_id = await self._submit({key: wanted[key] for key in fresh})
            except _NoBatchApi as exc:
                if pending:
                    raise ToolevalUsageError(f"tooleval batch: cannot submit: {exc}; earlier batches are waiting: "
                                             "rerun when the endpoint answers, or drop --tooleval-batch") from None
                summary.unavailable = str(exc)
                self.say(summary.line())
                return summary
            pending[batch_id] = set(fresh)
            summary.submitted = len(fresh)
        summary.batches = sorted(pending)
        deadline = None if self.wait_s is None else started + self.wait_s
        for batch_id, keys in sorted(pending.items()):
            await self._wait_and_collect(batch_id, keys, summary, deadline)
        summary.wait_s = round(time.monotonic() - started, 1)
        self.say(summary.line())
        return summary

    async def _submit(self, bodies: dict[str, dict[str, Any]]) -> str:
        lines = "".join(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body},
                                   ensure_ascii=False, separators=(",", ":")) + "\n" for key, body in bodies.items())
        client = self.backend.client()
        uploaded = await self._call("upload the requests", lambda: client.files.create(
            file=("tooleval-batch.jsonl", lines.encode("utf-8")), purpose="batch"), first=True)
        batch = await self._call("create the batch", lambda: client.batches.create(
            input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window=WINDOW,
            metadata={"created_by": "pytest-tooleval"}), first=True)
        self._remember(batch.id, bodies)  # before anything else can fail: a rerun then resumes it
        self.say(f"tooleval batch: submitted {batch.id} ({len(bodies)} requests, window {WINDOW}); a run stopped now "
                 "picks it up when started again")
        return str(batch.id)

    async def _wait_and_collect(self, batch_id: str, keys: set[str], summary: BatchSummary,
                                deadline: float | None) -> None:
        client = self.backend.client()
        shown, shown_at = "", 0.0
        while True:
            batch = await self._call(f"poll {batch_id}", lambda: client.batches.retrieve(batch_id))
            counts = batch.request_counts
            state = (f"{batch.status}, {counts.completed if counts else 0} of {counts.total if counts else len(keys)} "
                     f"done, {counts.failed if counts else 0} failed")
            if state != shown or time.monotonic() - shown_at >= PROGRESS_EVERY_S:
                self.say(f"tooleval batch {batch_id}: {state}")
                shown, shown_at = state, time.monotonic()
            if batch.status in TERMINAL:
                break
            if deadline is not None and time.monotonic() + self.poll_s > deadline:
                # --tooleval-batch-wait: left running (and in the ledger) for a later run to collect
                self.pending.update(dict.fromkeys(keys, batch_id))
                summary.pending += len(keys)
                self.say(f"tooleval batch {batch_id}: still {batch.status} after --tooleval-batch-wait; left for "
                         "a later run to collect")
                return
            await asyncio.sleep(self.poll_s)
        answered: set[str] = set()
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                content = await self._call(f"download {file_id}", _bound(client.files.content, file_id))
                answered |= self._read_results(content.text, summary)
        reason = _batch_reason(batch)
        for key in keys - answered - self.failures.keys():  # entries the files do not mention
            self._failed(key, reason, summary)
        if self.cache is not None:
            self.cache.flush()  # on disk before the ledger forgets the batch (and before the workers read it)
        self._forget(batch_id)

    def _read_results(self, text: str, summary: BatchSummary) -> set[str]:
        """Keep the answers of an output or error file; the keys it answered."""
        answered = set()
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            key = entry.get("custom_id") if isinstance(entry, dict) else None
            if not isinstance(key, str):
                continue
            response = entry.get("response") if isinstance(entry.get("response"), dict) else None
            status = response.get("status_code") if response else None
            if status == 200:
                try:
                    reply = self.backend.reply_from_completion(response.get("body") if response else None)
                except Exception as exc:  # a body that is no completion: not an answer
                    self._failed(key, f"malformed answer ({type(exc).__name__})", summary)
                    continue
                self.answers[key] = reply
                if self.cache is not None and worth_keeping(reply):
                    self.cache.put_soon(key, reply)
                else:
                    self._uncached[key] = reply
                answered.add(key)
                summary.answered += 1
            else:
                self._failed(key, _entry_reason(entry, response), summary)
        return answered

    def _failed(self, key: str, reason: str, summary: BatchSummary) -> None:
        if key in self.failures or key in self.answers:
            return
        self.failures[key] = reason
        label = reason.split(":", 1)[0]
        summary.failed[label] = summary.failed.get(label, 0) + 1

    async def _call(self, what: str, call: Callable[[], Any], *, first: bool = False) -> Any:
        """One request to the files or batches endpoints, retried by the chat requests' own table and backoff
        (openai_compat.classify, OpenAIBackend.retry_delay); a 404 or 405 on the first ones means the endpoint
        has no Batch API (vLLM, Ollama)."""
        import openai

        from .openai_compat import classify, describe

        retries = 0
        while True:
            try:
                return await call()
            except openai.OpenAIError as exc:
                decision = classify(exc)
                detail = self.backend.redact(describe(exc))
                if first and isinstance(exc, openai.APIStatusError) and exc.status_code in (404, 405, 501):
                    raise _NoBatchApi(f"{self.backend.endpoint} has no Batch API ({detail})") from None
            if not decision.retryable or retries >= self.backend.max_retries:
                raise ToolevalUsageError(f"tooleval batch: could not {what} at {self.backend.endpoint}: {detail}; "
                                         "a submitted batch is resumed when the run is started again (or drop "
                                         "--tooleval-batch)")
            await asyncio.sleep(self.backend.retry_delay(retries, decision))
            retries += 1

    # -- the ledger: a file per submitted batch, until its answers are kept -------------------------------

    def _remember(self, batch_id: str, bodies: Iterable[str]) -> None:
        self.ledger.mkdir(parents=True, exist_ok=True)
        target = self.ledger / f"{_safe(batch_id)}.json"
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"batch_id": batch_id, "identity": self.cache_identity(),
                                         "keys": sorted(bodies), "created": time.time()}), encoding="utf-8")
        os.replace(temporary, target)

    def _submitted(self) -> dict[str, set[str]]:
        """The batches earlier runs submitted to this model at this endpoint and did not collect."""
        found: dict[str, set[str]] = {}
        for path in sorted(self.ledger.glob("*.json")) if self.ledger.is_dir() else []:
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                if entry["identity"] == self.cache_identity():
                    found[str(entry["batch_id"])] = {str(key) for key in entry["keys"]}
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a torn or foreign file: not a batch to wait for
        return found

    def _forget(self, batch_id: str) -> None:
        with contextlib.suppress(OSError):
            (self.ledger / f"{_safe(batch_id)}.json").unlink()


class _NoBatchApi(Exception):
    pass


def _bound(function: Callable[[str], Any], argument: str) -> Callable[[], Any]:
    return lambda: function(argument)


def _safe(batch_id: str) -> str:
    return "".join(char if char.isalnum() or char in "-_" else "_" for char in batch_id)[:120]


def _batch_reason(batch: Any) -> str:
    """Why a batch's entries that neither file mentions have no answer."""
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    if errors:
        first = errors[0]
        return f"batch_{batch.status}: {getattr(first, 'code', None) or ''} {getattr(first, 'message', None) or ''}"
    return f"batch_{batch.status}"


def _entry_reason(entry: dict[str, Any], response: dict[str, Any] | None) -> str:
    error = entry.get("error") if isinstance(entry.get("error"), dict) else None
    if error is not None:
        return f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    body = response.get("body") if response else None
    message = (body.get("error") or {}).get("message") if isinstance(body, dict) and isinstance(
        body.get("error"), dict) else None
    status = response.get("status_code") if response else None
    return f"HTTP {status}: {message or 'no answer'}"
