"""Progress of an index build, for the command line (`python -m bot index build`) and benchmarks."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Progress:
    """One step of a build: phase is 'plan', 'read', 'index', 'write' or 'done'."""

    phase: str
    done: int = 0
    total: int | None = None
    detail: str = ""


ProgressFn = Callable[[Progress], None]


def text_progress(stream: TextIO | None = None, every_s: float = 1.0) -> ProgressFn:
    """A progress callback that prints a line per phase change and at most one per `every_s` seconds."""
    out = stream or sys.stderr
    last_t, last_phase = 0.0, ""

    def report(p: Progress) -> None:
        nonlocal last_t, last_phase
        now = time.monotonic()
        if p.phase == last_phase and now - last_t < every_s and p.phase != "done":
            return
        last_t, last_phase = now, p.phase
        amount = f"{p.done:,}" + (f"/{p.total:,}" if p.total else "")
        print(f"[index] {p.phase:<5} {amount:>21}  {p.detail}", file=out, flush=True)

    return report


def no_progress(_: Progress) -> None:
    """The callback when nobody is watching."""
    pass
