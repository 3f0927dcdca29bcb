"""A live status line while samples are answered ahead of their tests (pytest's dots stall meanwhile).

The process that answers (one process, or the xdist controller for all workers) shows how far the run is:
answered/total, requests in flight, requests waiting out a retry delay, errors, tokens, elapsed and ETA. On a
terminal the line is redrawn in place on the bottom row, which is kept out of pytest's scrolling output; in a
log (no terminal) it is a plain line every `--tooleval-progress-interval` seconds. `-q -q` or
`--tooleval-no-progress` silence it.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from .session import ToolevalSession

TTY_INTERVAL_S = 0.5
LOG_INTERVAL_S = 10.0


@dataclass(frozen=True)
class Progress:
    total: int
    answered: int
    in_flight: int
    resting: int  # requests waiting out a retry delay
    errors: int
    tokens: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        if not self.answered or self.answered >= self.total:
            return None
        return self.elapsed_s / self.answered * (self.total - self.answered)


def render(progress: Progress) -> str:
    """One line (pure)."""
    eta = progress.eta_s
    return (f"tooleval: {progress.answered}/{progress.total} answered, {progress.in_flight} in flight, "
            f"{progress.resting} retrying, {progress.errors} errors, {progress.tokens:,} tokens, "
            f"{progress.elapsed_s:.0f} s" + ("" if eta is None else f", ETA {eta:.0f} s"))


class ProgressLine:
    """Draws `snapshot()` until the answering is done or `stop` is called.

    Args:
        snapshot: the current Progress (from the answering pool).
        write: writes text to the terminal as is (escape sequences included) and flushes.
        tty: redraw in place on the bottom row, else a plain line every `interval_s`.
    """

    def __init__(self, snapshot: Callable[[], Progress], write: Callable[[str], None], *, tty: bool,
                 interval_s: float = LOG_INTERVAL_S, close: Callable[[], None] = lambda: None) -> None:
        self.snapshot = snapshot
        self.close = close
        self.interval_s = TTY_INTERVAL_S if tty else interval_s
        self.write = write
        self.tty = tty
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
        if not self._thread.is_alive() and not self._closed:
            self._closed = True
            self.close()

    def _run(self) -> None:
        interval = self.interval_s
        if self.tty:
            self._rows = shutil.get_terminal_size().lines
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

    def _show(self, line: str) -> None:
        if self.tty:
            width = shutil.get_terminal_size().columns
            self.write(f"\x1b7\x1b[{self._rows};1H\x1b[2K{line[: width - 1]}\x1b8")
        else:
            self.write(f"\n{line}\n")


def start_progress(config: pytest.Config, session: ToolevalSession) -> None:
    """Start the status line of `session` on pytest's terminal, unless silenced."""
    settings = session.settings
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or settings.no_progress or config.option.verbose <= -2:
        return

    # pytest captures output while a test runs, and this line is written from its own thread meanwhile: it goes
    # to a copy of the descriptor pytest saved before capturing (a copy of our own, so that no write can reach
    # a descriptor pytest closed and the process reused), else through the reporter (-s, sys capture)
    capturing = getattr(config.pluginmanager.getplugin("capturemanager"), "_global_capturing", None)
    saved = getattr(getattr(capturing, "out", None), "targetfd_save", None)
    fd = os.dup(saved) if isinstance(saved, int) else None

    def write(text: str) -> None:
        if fd is not None:
            os.write(fd, text.encode("utf-8", "replace"))
        else:
            reporter.write(text, flush=True)

    def close() -> None:
        if fd is not None:
            os.close(fd)

    session.show_progress(write, tty=bool(reporter.isatty()), interval_s=float(settings.progress_interval),
                          close=close)
