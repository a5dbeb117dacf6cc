"""The Microsoft Teams adapter, on the Microsoft 365 Agents SDK (`python -m bot serve --teams`).

The SDK does what it is for: parsing activities, validating the JWTs Teams (the Bot Connector)
signs requests with, the connector client that sends replies and proactive messages, MSAL tokens.
These modules are only the Askbase side of it, one idea each; what Teams shares with Slack lives in
bot/ (answer_view.py: what an answer shows; progress.py: the steps shown; schedule_runs.py: a
scheduled run's flow; failures.py: what a failure tells people) and core/ (the conversation
service, core/conversation/: the life of a question, its stored turn, 👍 and 👎, verification,
claims and the answering queue; schedules/create.py, clarify/policy.py):

  config.py     settings → the SDK's configuration; refuse to start without an app id, or with a
                tenant or an allow list of Bot Connector addresses it cannot use
  auth.py       incoming JWTs (the SDK's validator), then their issuer, audience, caller and tenant,
                and the activity's serviceUrl and tenant against them: only what the token vouches for
  outbound.py   the allowed Bot Connector addresses, and the only maker of token-bearing clients
  incoming.py   an activity → who asks, where, about what, and whether it mentions the bot (pure)
  cards.py      outcomes → Adaptive Cards 1.5, laying out bot/answer_view.py (pure)
  links.py      signed download links: a CSV's expires, a chart's lives as long as its answer
  files.py      `/files/<token>`: the CSV and the chart, through Askbase.rerun (access, audit)
  proactive.py  posting to a stored conversation reference (web process and worker alike); the
                AI-generated label and Teams' feedback buttons on an activity
  streaming.py  Teams' informative updates naming each step, in a personal chat
  answering.py  a question → progress → the answer card, off the request, in the same conversation
  actions.py    the card buttons: Details, CSV, 👍/👎, clarification options, Retry
  private.py    Details, CSV and votes answered with a card for the presser alone; Teams' feedback
  clarify.py    a clarifying question's card once closed: answered, expired (the sweep), replaced
  schedules.py  schedules made and managed from Teams
  posts.py      the worker's side: a scheduled run posted proactively to its conversation
  app.py        the AgentApplication: routes activities to the above, duplicates answered once
  inflight.py   claims: made as an activity is acknowledged (briefly), recovered after a crash
  server.py     the aiohttp app (`POST /api/messages`, `GET /files/<token>`, `/healthz`) and `serve`
"""
