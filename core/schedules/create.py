"""Making a schedule, in any chat: only SQL that works now, as its owner, where it will post.

A schedule repeats SQL that already answered once. Before it is stored that SQL runs once more
through the engine (`Askbase.rerun`, purpose "schedule": access → guard → execute → audit) as the
owner in the place it will post in, so a query the owner may not run there, or that no longer
works, is refused now rather than at its first tick; what is stored is the guarded SQL that just
worked. Slack (bot/slack/listeners/schedules.py) and Teams (bot/teams/schedules.py) both make schedules
here; only how a refusal reads is theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.access import Principal
from core.answer import Outcome
from core.askbase import Askbase
from core.schedules import store
from core.schedules.conditions import Condition
from core.schedules.errors import ScheduleError
from core.schedules.store import Platform, Schedule
from core.schedules.triggers import TriggerSpec


@dataclass(frozen=True)
class Wanted:
    """A schedule someone asked for: the answer it repeats, and when it posts."""

    question: str
    sql: str
    database: str
    trigger: TriggerSpec
    condition: Condition
    source_trace: str | None = None  # the answer it was made from


def create_checked(
    askbase: Askbase,
    wanted: Wanted,
    *,
    principal: Principal,
    team: str,
    channel: str,
    owner: str,
    refusal: Callable[[Outcome], str],
    platform: Platform = "slack",
    address: dict[str, Any] | None = None,
) -> Schedule:
    """Store `wanted` once its SQL ran as the owner (`principal`: who they are in `channel`, with
    what access rules may name); ScheduleError, worded by `refusal` from the failed run, when it
    did not."""
    checked = askbase.rerun(
        wanted.sql,
        database=wanted.database,
        principal=principal,
        purpose="schedule",
        question=wanted.question,
    )
    if checked.status != "answer":
        raise ScheduleError(refusal(checked))
    return store.create(
        askbase.state,
        team=team,
        channel=channel,
        owner=owner,
        question=wanted.question,
        sql=checked.sql,
        database=checked.database,
        trigger=wanted.trigger,
        condition=wanted.condition,
        source_trace=wanted.source_trace,
        platform=platform,
        address=address,
    )
