"""Ask back instead of guessing: Sphinteract's Summarize–Review–Ask, grounded in the data.

    transcript.py  Exchange / Transcript: questions asked back, answers, rejected SQL (JSON, prompt text)
    candidates.py  the competing readings the engine found (values in two columns, tied names, roles)
    sra.py         one Summarize–Review–Ask LLM round (prompts/clarify.md) → a Clarification or stop
    policy.py      when to ask (off / auto / always, after 👎), the round limit, no repeats, answers

The pipeline asks before writing SQL when the data shows competition (`policy.before_generating`);
keyword mode asks about its own tied readings, held to the same rules (`policy.keyword_answer`);
after 👎 one more round starts from the rejected SQL (`policy.after_rejection`). The adapters
(Slack, console, benchmark) keep the transcript — in the state database for Slack — and ask
again with `Request(question, choices=t.choices, clarifications=t.exchanges,
rejected_sql=t.rejected_sql)`.

This package's __init__ imports only the transcript types: core.pipeline imports them, and the
rest of the package imports core.pipeline.
"""

from core.clarify.transcript import Exchange, Transcript

__all__ = ["Exchange", "Transcript"]
