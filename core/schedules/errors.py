"""How a schedule says no to what a person wrote: `ScheduleError`, whose message says how to write it.

Raised while reading a schedule, a timezone, a cron line or a condition — from `/ask schedule …`,
the Schedule form or the creation check — and shown to the person as it is.
"""

from __future__ import annotations


class ScheduleError(ValueError):
    """A schedule or condition we cannot read; the message says how to write it."""
