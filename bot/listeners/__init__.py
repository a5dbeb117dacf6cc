"""Slack listeners, one module per family of entry points; each has `register(app, ctx)`.

questions — @mentions, DMs, follow-ups in our threads, `/ask` (+ help, db)
actions   — the buttons under an answer (Show SQL, Details, CSV, 👍, 👎, Retry) and the 👎 modal
verified  — Verify / Unverify / Recheck, `/ask verified`, Refresh under a cached answer, stale notes
"""
