"""A live status line while samples are answered ahead of their tests (pytest's dots stall meanwhile).

The process that answers (one process, or the xdist controller for all workers) shows how far the run is:
answered/total, requests in flight, requests waiting out a retry delay, errors, tokens, elapsed and ETA. On a
terminal the line is redrawn in place on the bottom row, which is kept out of pytest's scrolling output; in a
log (no terminal) it is a plain line every `--tooleval-progress-interval` seconds, written between pytest's
rows of dots, never inside one (a row still open when the line is due gets it when the row ends). `-q -q` or
`--tooleval-no-progress` silence it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from ..answers.progress import Progress, render

if TYPE_CHECKING:
    from ..run.session import ToolevalSession

TTY_INTERVAL_S = 0.5
LOG_INTERVAL_S = 10.0
# a row of dots that stays open this long (tests that wait long for their answers) gets the line anyway: a CI log
# that says nothing for minutes looks hung
OPEN_ROW_PATIENCE_S = 60.0
MIN_ROWS = 3  # a terminal with fewer rows gets no status line: pytest's output keeps them all
ROW_HOOKS = "tooleval-progress-rows"
LINE_KEY = pytest.StashKey["ProgressLine"]()


class ProgressLine:
    """Draws `snapshot()` until the answering is done or `stop` is called.

    Args:
        snapshot: the current Progress (from the answering pool).
        write: writes text to the terminal as is (escape sequences included) and flushes.
        tty: redraw in place on the bottom row, else a plain line every `interval_s`.
    """

    def __init__(self, snapshot: Callable[[], Progress], write: Callable[[str], None], *, tty: bool,
                 interval_s: float = LOG_INTERVAL_S, close: Callable[[], None] = lambda: None,
                 row_state: Callable[[bool], str] = lambda finished: "empty",
                 broke_row: Callable[[], None] = lambda: None) -> None:
        self.snapshot = snapshot
        self.close = close
        self.interval_s = TTY_INTERVAL_S if tty else interval_s
        self.write = write
        self.tty = tty
        # in a log: where pytest's writer is ("empty": at the start of a line; "complete": after a whole row or
        # a test's whole line, the newline not written yet; "open": inside a row), given whether a test just
        # finished; and what to tell pytest when a line had to be written inside a row (it starts a new one)
        self.row_state = row_state
        self.broke_row = broke_row
        self._pending: str | None = None
        self._waited_s = 0.0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tooleval-progress", daemon=True)
        self._rows = 0
        self._closed = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if not self.tty:
            self.row_ended()  # a line still kept back: pytest's rows have ended by now
        if not self._thread.is_alive() and not self._closed:
            self._closed = True
            self.close()

    def _run(self) -> None:
        interval = self.interval_s
        if self.tty:
            self._rows = shutil.get_terminal_size().lines
            if self._rows < MIN_ROWS:  # no room for a row of its own (LINES=1 wrote ESC[1;0r): no status line
                return
            # keep the bottom row out of the scrolling region: pytest's output scrolls above the status line
            self.write(f"\n\x1b7\x1b[1;{self._rows - 1}r\x1b8")
        try:
            while not self._stopped.wait(interval):
                progress = self.snapshot()
                if progress.total:
                    self._show(render(progress))
                if progress.total and progress.answered >= progress.total:
                    break
        finally:
            if self.tty:  # give the row back: reset the scrolling region and clear the status line
                self.write(f"\x1b7\x1b[r\x1b[{self._rows};1H\x1b[2K\x1b8")
            else:
                self.row_ended()  # the last line, if a row was still open: once the row ends

    def _show(self, line: str) -> None:
        if self.tty:
            width = shutil.get_terminal_size().columns
            self.write(f"\x1b7\x1b[{self._rows};1H\x1b[2K{line[: width - 1]}\x1b8")
            return
        with self._lock:
            self._pending = line  # the newest: one kept back is replaced, never queued
            state = self.row_state(False)
            if state != "open":
                self._write_pending(state)
            elif self._waited_s >= OPEN_ROW_PATIENCE_S:
                self._write_pending(state)
                self.broke_row()
            else:
                self._waited_s += self.interval_s

    def row_ended(self) -> None:
        """A test's result is written (perhaps ending a row): a line kept back for it is written now."""
        with self._lock:
            state = self.row_state(True)
            if self._pending is not None and state != "open":
                self._write_pending(state)

    def _write_pending(self, state: str) -> None:
        line, self._pending, self._waited_s = self._pending, None, 0.0
        if state == "empty":
            self.write(f"{line}\n")
        elif state == "complete":
            # pytest ends the row it wrote with the newline it still owes, before its next output: that newline
            # ends this line too (writing one of ours as well left a blank line in CI logs)
            self.write(f"\n{line}")
        else:
            self.write(f"\n{line}\n")


def start_progress(config: pytest.Config, session: ToolevalSession) -> None:
    """Start the status line of `session` on pytest's terminal, unless silenced."""
    settings = session.settings
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or settings.no_progress or config.option.verbose <= -2 or LINE_KEY in config.stash:
        return

    # pytest captures output while a test runs, and this line is written from its own thread meanwhile: it goes
    # to a copy of the descriptor pytest saved before capturing (a copy of our own, so that no write can reach
    # a descriptor pytest closed and the process reused), else through the reporter (-s, sys capture)
    capturing = getattr(config.pluginmanager.getplugin("capturemanager"), "_global_capturing", None)
    saved = getattr(getattr(capturing, "out", None), "targetfd_save", None)
    fd = os.dup(saved) if isinstance(saved, int) else None
    closed = threading.Event()

    def write(text: str) -> None:
        # a status line never ends a run: once closed it writes nothing, and a write the pipe or file refuses
        # (a reader gone, a descriptor closed while a signal ended the run) is dropped
        if closed.is_set():
            return
        try:
            if fd is not None:
                os.write(fd, text.encode("utf-8", "replace"))
            else:
                reporter.write(text, flush=True)
        except (OSError, ValueError):  # ValueError: a file object already closed
            closed.set()

    def close() -> None:
        if not closed.is_set() and fd is not None:
            closed.set()
            with contextlib.suppress(OSError):
                os.close(fd)
        closed.set()

    verbose = config.option.verbose > 0

    def row_state(finished: bool) -> str:
        # what pytest's writer holds of its current line: nothing, a row or line ended by its "[ 42%]", or (after
        # a test finished, in -v) one test's whole line; anything else is a row of dots still being written
        text = str(getattr(getattr(reporter, "_tw", None), "_current_line", ""))
        if not text.strip():
            return "empty"
        return "complete" if text.rstrip().endswith("%]") or (finished and verbose) else "open"

    def broke_row() -> None:
        reporter.currentfspath = None  # so the next dot starts a new row with its file's name, as a row should

    isatty = reporter.isatty  # a bool up to pytest 8; since pytest 9, one that can also be called, as a method
    line = _line_of(session, write, tty=bool(isatty() if callable(isatty) else isatty),
                    interval_s=float(settings.progress_interval), close=close, row_state=row_state, broke_row=broke_row)
    if line is None:
        return
    config.stash[LINE_KEY] = line
    if not line.tty and not config.pluginmanager.has_plugin(ROW_HOOKS):
        config.pluginmanager.register(_RowEnds(line), ROW_HOOKS)


def stop_progress(config: pytest.Config) -> None:
    """Give the status row back (before pytest's own summary, and at the end in any case)."""
    line = config.stash.get(LINE_KEY, None)
    if line is not None:
        line.stop()


def _line_of(session: ToolevalSession, write: Callable[[str], None], *, tty: bool, interval_s: float,
             close: Callable[[], None], **rows: Callable[..., Any]) -> ProgressLine | None:
    """A started status line of the pool answering in this process (its own, or the hub's), or None when it
    answers nothing ahead; `rows`: how a log's line keeps out of pytest's rows of dots (ProgressLine's row_state
    and broke_row)."""
    if session.answering_pool() is None and session.hub is None:
        close()
        return None
    started = time.monotonic()

    def snapshot() -> Progress:
        current = session.answering_pool()
        if current is None:
            return Progress(0, 0, 0, 0, 0, 0, time.monotonic() - started)
        backends, limits = session.backends() or [], session.tally.concurrency
        return dataclasses.replace(
            current.progress(time.monotonic() - started),
            requests=sum(backend.in_flight() for backend in backends),
            timeouts=sum(backend.timed_out for backend in backends),
            # the first model's (the one under test): its limit, and why it last came down
            limit=limits[0]["limit"] if limits else None,
            limit_reason=limits[0]["cuts"][-1]["reason"] if limits and limits[0]["cuts"] else None)

    line = ProgressLine(snapshot, write, tty=tty, interval_s=interval_s, close=close, **rows)
    line.start()
    return line


class _RowEnds:
    """Tells the log's status line when pytest has finished writing a test's result (and perhaps a row)."""

    def __init__(self, line: ProgressLine) -> None:
        self.line = line

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self) -> None:
        self.line.row_ended()
