"""A clock tests move instead of sleeping (the `clock` fixture in tests/conftest.py).

Code that reads the time takes a clock (workers, schedule runners, trusted answers) or reads one
module function a test can replace (clarifications). This one starts at the real time to the
second, or at a given moment, and moves only when a test says: `clock.advance(61)` instead of
`time.sleep(61)`.
"""

from __future__ import annotations

import datetime as dt


class Clock:
    def __init__(self, start: dt.datetime | None = None) -> None:
        self.now = start or dt.datetime.now(dt.UTC).replace(microsecond=0)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> dt.datetime:
        self.now += dt.timedelta(seconds=seconds)
        return self.now
