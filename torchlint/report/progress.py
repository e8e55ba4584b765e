"""`Checking 120/431 files` on a terminal's stderr while a long check runs: one line,
rewritten in place and cleared at the end, as ruff's progress is."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

# A run that ends sooner shows nothing. Time rather than a count of files: a warm run
# over thousands of files takes a fraction of a second, a cold one over twenty large files
# several; what a person waits through is time. Half a second is about where a silent
# terminal starts to look stuck.
DELAY_S = 0.5
# Rewrites at most this often: a terminal flooded with updates slows the run it reports.
INTERVAL_S = 0.1

_CLEAR_LINE = "\r\x1b[K"


class ProgressLine:
    """Called with (files done, files in all) as files are analysed; shows the count on
    ``stream`` once the run has lasted `DELAY_S`. ``finish()`` takes the line away: call it
    before anything else is written to the stream."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.drawn_at: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < DELAY_S:
            return
        if self.drawn_at is not None and now - self.drawn_at < INTERVAL_S and done < total:
            return
        self.stream.write(f"{_CLEAR_LINE}Checking {done}/{total} files")
        self.stream.flush()
        self.drawn_at = now

    def finish(self) -> None:
        if self.drawn_at is not None:
            self.stream.write(_CLEAR_LINE)
            self.stream.flush()
            self.drawn_at = None
