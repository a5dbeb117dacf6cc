"""What a person may read of a database error: what went wrong, never where the server is or who we are.

Driver errors name the host, port, socket, account and database (`connection to server at
"10.0.0.5", port 5432 failed: FATAL: password authentication failed for user "askbase_ro"`,
`Access denied for user 'askbase'@'10.0.0.7'`). That maps the network for whoever reads it and
helps nobody asking a question, so the text people (and the model revising SQL) see has them
replaced by `…`; the full text goes to the log (core/execute.py logs it with the database name).
"""

from __future__ import annotations

import re

_SCRUB: tuple[tuple[re.Pattern[str], str], ...] = (
    # PostgreSQL (libpq): where it tried to connect
    (
        re.compile(r'connection to server (?:at "[^"]*"(?: \([^)]*\))?, port \d+|on socket "[^"]*") failed:'),
        "connection to the database server failed:",
    ),
    (re.compile(r"\s*Is the server running (?:on that host|locally)[^?]*\?"), ""),
    # accounts: PostgreSQL `user "x"`, `role "x"`; MySQL `user 'x'@'host'`
    (re.compile(r"""\b(user|role) (['"])[^'"]*\2(?:@(['"])[^'"]*\3)?"""), r"\1 …"),
    (re.compile(r'\bdatabase "[^"]*"'), 'database "…"'),
    # MySQL: `Can't connect to MySQL server on '10.0.0.5'`, `Unknown MySQL server host 'db'`
    (re.compile(r"\b(server on|server host) '[^']*'"), r"\1 '…'"),
    # anything left that looks like an address, a port or a server path
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "…"),
    (re.compile(r"\[[0-9a-fA-F:]{3,}\](?::\d+)?"), "…"),
    (re.compile(r"\bport \d+\b"), "port …"),
    (re.compile(r"(?<![\w.:/])/(?:[\w.-]+/)+[\w.-]*"), "…"),
)


def public_text(text: str) -> str:
    """`text` (a driver's error message) without hosts, ports, accounts, database names and paths."""
    for pattern, replacement in _SCRUB:
        text = pattern.sub(replacement, text)
    return text


def driver_text(exc: BaseException) -> str:
    """The driver's own message on one line, without the SQL and parameters SQLAlchemy appends."""
    orig = getattr(exc, "orig", None) or exc
    return " ".join(str(orig).split())[:800]


def public_error(exc: BaseException) -> str:
    """The first line of a driver error, fit to show a person."""
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    return public_text((lines[0] if lines else type(exc).__name__)[:300])
