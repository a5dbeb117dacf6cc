"""Slack listeners, one module per family of entry points; each has `register(app, ctx)`.

questions — @mentions, DMs, `/ask` (+ help, db); follow-ups without a mention with `slack.thread_followups`
assistant — the agent view (a DM opened, app_context_changed) or the assistant panel: greeting, prompts, titles
actions   — the buttons under an answer (Show SQL, Details, CSV, 👍 / 👎, Retry) and the 👎 modal
schedules — the Schedule button and modal, `/ask schedule(s)`, the schedule buttons
home      — the App Home tab: how to ask, databases with example questions, recent questions, schedules
clarify   — clarifying questions: option buttons, "Other…", replies in the thread, 👎 rounds
verified  — Verify / Unverify / Recheck, `/ask verified`, Refresh under a cached answer, stale notes
teaching  — "define X as Y", Approve / Reject / Undo, Correct this, "Always read …?", the Home queue,
            votes to review (Use as example)
"""
