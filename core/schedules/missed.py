"""Scheduled times that passed while no worker ran, and that the next run stands for.

APScheduler's job store remembers each job's next run time, so a restarted worker runs a schedule
that fell due while it was down — once, however many times it fell due (`coalesce`). That run
counts the times it stands for from the schedule's last tick, and says so under the result.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from core.schedules.triggers import TriggerSpec, as_utc, fire_times

COUNT_CAP = 1000  # missed runs are counted up to this many


@dataclass(frozen=True)
class Missed:
    """Scheduled times that passed without a run (the worker was down) and that this run stands for."""

    count: int
    since: dt.datetime | None = None
    capped: bool = False

    def note(self) -> str:
        if not self.count:
            return ""
        n = f"{self.count:,}{'+' if self.capped else ''}"
        times = "time" if self.count == 1 else "times"
        return f"The scheduler was not running at {n} scheduled {times}; this one run covers them."


def missed_runs(spec: TriggerSpec, since: dt.datetime | None, tick: dt.datetime) -> Missed:
    if since is None:
        return Missed(0)
    times = [t for t in fire_times(spec, since, tick, limit=COUNT_CAP + 1) if t < as_utc(tick)]
    return Missed(min(len(times), COUNT_CAP), as_utc(since), capped=len(times) > COUNT_CAP)
