"""Scheduled questions: SQL that answered once, re-run on a schedule and posted when it matters.

A schedule is a `TriggerSpec` (an interval, or a cron rule in a timezone), a `Condition` (always /
not empty / changed / a test on a column) and the SQL of an answer; the owner's permissions and
the guard apply again at every run. Nothing here knows the chat: a run takes what it needs as
typed inputs and returns what to post (bot/slack/schedule_posts.py posts it in Slack), and the worker
(bot/worker.py) only holds the lease and runs APScheduler, which fires `tick.run_tick`.

Modules, from the words a person types to one run:

  errors.py      ScheduleError — what a person wrote that we cannot read, and how to write it
  triggers.py    TriggerSpec and its fire times (APScheduler's own triggers): the tick a run
                 belongs to, how often it fires, how long to back off after failures
  parse.py       "/ask schedule every weekday at 9:00 only when changed: …" → (when, condition, question)
  conditions.py  Condition: whether a run posts, and why
  results.py     a result as kept between runs: fingerprint and Snapshot
  diff.py        what changed since the last run, as lines a person reads
  missed.py      ticks that passed while no worker ran, which the next run stands for
  store.py       schedules and their runs in the state database; a tick is claimed once
  lease.py       the lease that lets one worker run the scheduler
  tick.py        run one tick: access → guard → execute → audit through Askbase.rerun, decide,
                 record, and say what to post
"""
