"""A one-line progress display on a terminal, for conversions that take a while.

The work reports what it is doing (``stage("optimizing")``, ``advance(done, total)`` for
bytes written); nothing is shown unless a display is active. The CLI activates one when
stderr is a terminal (never when it is piped or redirected, never with ``-q``). The line
appears only after ``DELAY`` seconds, so quick conversions print nothing extra, and it is
erased before any log message and at the end. It is redrawn when what it says changes (a new
stage or title: at once, in the caller's thread, so what is shown never depends on when a
timer thread gets to run) and, for the elapsed time and byte counts, every ``_TICK`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

DELAY = float(os.environ.get("PD2ONNX_PROGRESS_DELAY", "1.5"))  # seconds before the line appears
_TICK = 0.2


class _Display:
    def __init__(self, stream: TextIO, title: str, clock: Callable[[], float], tick: float | None):
        self.stream = stream
        self.title = title
        self.stage = ""
        self.done: int | None = None
        self.total: int | None = None
        self.clock = clock
        self.started = clock()
        self.drawn_at: float | None = None
        self.shown = False
        self.lock = threading.Lock()
        self.tick = tick
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="pd2onnx-progress", daemon=True) if tick else None

    def _line(self) -> str:
        elapsed = self.clock() - self.started
        text = f"{self.title}: {self.stage}" if self.stage else self.title
        if self.done is not None and self.total:
            text += f" {_mb(self.done)}/{_mb(self.total)} ({100 * self.done // self.total}%)"
        text = f"{text} [{elapsed:.0f} s]"
        width = _width(self.stream)
        return text if len(text) < width else text[: width - 4] + "..."

    def _run(self) -> None:
        while not self.stop.wait(self.tick):
            self.refresh()

    def due(self) -> bool:
        return self.clock() - self.started >= DELAY

    def refresh(self, changed: bool = True) -> None:
        """Draw the line if it is due: always once ``DELAY`` has passed when what it says
        changed, else (byte counts) at most every ``_TICK`` seconds."""
        if not self.due():
            return
        if changed or self.drawn_at is None or self.clock() - self.drawn_at >= (self.tick or _TICK):
            self.draw()

    def draw(self) -> None:
        with self.lock:
            self.stream.write("\r\x1b[2K" + self._line())
            self.stream.flush()
            self.shown = True
            self.drawn_at = self.clock()

    def erase(self) -> None:
        with self.lock:
            if self.shown:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
                self.shown = False


_active: _Display | None = None


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 10e6 else f"{n / 1e6:.1f} MB"


def _width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        return 80


def wanted(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (stderr by default) is a terminal."""
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def display(title: str, enabled: bool = True, stream: TextIO | None = None, *,
            clock: Callable[[], float] = time.monotonic, tick: float | None = _TICK) -> Iterator[None]:
    """Show a progress line titled ``title`` while the block runs (if ``enabled``; stderr by
    default). Nested displays keep the outer one and retitle nothing. ``clock`` and ``tick``
    (``None``: no timer, the line changes only with what the work reports) are for tests."""
    global _active
    if not enabled or _active is not None:
        yield
        return
    shown = _Display(stream or sys.stderr, title, clock, tick)
    _active = shown
    if shown.thread is not None:
        shown.thread.start()
    shown.refresh()
    try:
        yield
    finally:
        shown.stop.set()
        if shown.thread is not None:
            shown.thread.join()
        shown.erase()
        _active = None


def stage(text: str) -> None:
    """What the work does now (no effect without an active display)."""
    shown = _active
    if shown is not None:
        shown.stage, shown.done, shown.total = text, None, None
        shown.refresh()


def retitle(title: str) -> None:
    """Change the display's title (many-models mode: how many are done)."""
    shown = _active
    if shown is not None:
        shown.title = title
        shown.refresh()


def advance(done: int, total: int) -> None:
    """Bytes (or items) done of ``total`` in the current stage."""
    shown = _active
    if shown is not None:
        shown.done, shown.total = done, total
        shown.refresh(changed=False)


def erase() -> None:
    """Erase the line (it comes back on the next tick)."""
    shown = _active
    if shown is not None:
        shown.erase()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Erase the line and keep it away while the block prints something."""
    shown = _active
    if shown is None:
        yield
        return
    with shown.lock:
        if shown.shown:
            shown.stream.write("\r\x1b[2K")
            shown.stream.flush()
            shown.shown = False
        yield


def echo(text: str, stream: TextIO | None = None) -> None:
    """Print a line (stdout by default) without mixing it into the progress line."""
    with paused():
        print(text, file=stream or sys.stdout, flush=True)


class LogHandler(logging.StreamHandler):
    """A stderr log handler that keeps its messages clear of the progress line."""

    def emit(self, record: logging.LogRecord) -> None:
        with paused():
            super().emit(record)
