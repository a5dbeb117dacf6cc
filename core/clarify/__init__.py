"""Ask back instead of guessing: Sphinteract's Summarize–Review–Ask, grounded in the data.

    transcript.py  Exchange / Transcript: questions asked back, answers, rejected SQL (JSON, prompt text)
    candidates.py  the competing readings the engine found (values in two columns, tied names, roles)
    sra.py         one Summarize–Review–Ask LLM round (prompts/clarify.md) → a Clarification or stop
    policy.py      when to ask (off / auto / always, after 👎), the round limit, no repeats, answers
    choice.py      LLM mode: two readings whose queries returned different rows, as buttons that run them

These are steps; the pipeline (core/pipeline.py) runs them. In LLM mode it asks after writing,
when the writer's two candidates return different rows and the judge calls the question
ambiguous (`choice.two_readings`); before writing only with `clarify: always`
(`policy.before_generating`). Keyword mode asks about its own tied
readings, held to the same rules (`policy.why_not_ask`); after 👎 one more round starts from the
rejected SQL (`policy.ask_about_rejection`). The adapters (Slack, console, benchmark) keep the
transcript — in the state database for Slack — and ask again with
`Askbase.ask(question, transcript=t)` (`after_rejection=True` after a 👎).
"""

from core.clarify.transcript import Exchange, Transcript

__all__ = ["Exchange", "Transcript"]
