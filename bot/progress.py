"""The steps a person sees while a question is answered, named once for every chat surface.

The pipeline reports stage names as they start (core.request.StageCallback: "understand",
"retrieve", "link", "view", "generate", "guard", "execute", "revise", "keyword"); people see six
steps — understand, find values, join, write SQL, check, run — in words. Slack shows them as an
assistant status, a streamed plan or a status message (bot/slack/progress.py); Teams as typing
and informative updates. Platform-neutral: no chat imports.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.conversation.queue import Position


@dataclass(frozen=True)
class Step:
    key: str
    doing: str  # while it runs: "Writing SQL"
    task: str  # as a task in a plan: "Write the SQL"


QUEUED = Step("queued", "Waiting for a free worker", "Wait for a free worker")
UNDERSTAND = Step("understand", "Understanding the question", "Understand the question")
FIND = Step("find", "Searching the data", "Find the tables and values it names")
JOIN = Step("join", "Choosing the joins", "Choose how to join the tables")
WRITE = Step("write", "Writing SQL", "Write the SQL")
CHECK = Step("check", "Checking the SQL", "Check the SQL is read-only and allowed")
RUN = Step("run", "Running it", "Run it on the database")
FIX = Step("fix", "Fixing the SQL", "Fix the SQL")

STEPS: tuple[Step, ...] = (UNDERSTAND, FIND, JOIN, WRITE, CHECK, RUN)

# Pipeline stage → the step a person sees (stages not listed add nothing new to say).
STAGE_STEPS: dict[str, Step] = {
    "queued": QUEUED,
    "understand": UNDERSTAND,
    "retrieve": FIND,
    "keyword": FIND,
    "link": JOIN,
    "view": JOIN,
    "generate": WRITE,
    "expand": WRITE,
    "guard": CHECK,
    "execute": RUN,
    "revise": FIX,
}


def stage_in_line(position: Position) -> str:
    """The first stage a question shows, by where it stands in the answering queue: it starts at
    once ("understand"), waits for a free worker ("queued"), or — a full round of answers ahead
    of it — waits long enough to be told how many are ahead ("queued:N")."""
    if position.starts_now:
        return "understand"
    return f"queued:{position.ahead}" if position.long else "queued"


def step_for(stage: str | None) -> Step | None:
    name, _, ahead = (stage or "").partition(":")
    if name == "queued" and ahead.isdigit():
        n = int(ahead)
        return Step("queued", f"Queued — {n} ahead of you", f"Wait for the {n} questions ahead")
    return STAGE_STEPS.get(stage or "")


class StepTracker:
    """Turns a stream of stage names into step changes: the same step twice is one change."""

    def __init__(self) -> None:
        self.seen: list[Step] = []

    @property
    def current(self) -> Step | None:
        return self.seen[-1] if self.seen else None

    def advance(self, stage: str) -> Step | None:
        """The new step `stage` starts, or None when it continues the current one."""
        step = step_for(stage)
        if step is None or step == self.current:
            return None
        self.seen.append(step)
        return step
