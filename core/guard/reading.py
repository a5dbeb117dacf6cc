"""Reading the text: the checks only raw text can answer, then exactly one statement, parsed.

Characters (control, invisible), comments (executable, hints, nested, holding a `;`), the number
of statements and strings that read differently under another server quoting mode are checked
on the text before sqlglot parses it (`parse_one`).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata

from sqlglot import Token, TokenType, exp
from sqlglot.errors import ParseError, SqlglotError

from core.guard.dialects import sqlglot_dialect
from core.guard.lexing import LEXINGS, Lexing, code_skeleton
from core.guard.tree import check_tree
from core.guard.verdict import Deny

MAX_SQL_CHARS = 100_000
MAX_NODES = 50_000


def parse_one(sql: str, dialect: str, *, check_lexing: bool = True) -> exp.Expr:
    """The one statement in `sql`, after the text checks; Deny for anything else."""
    text = sql.strip(" \t\r\n")  # str.strip() would also drop Unicode spaces a database may not
    if len(text) > MAX_SQL_CHARS:
        raise Deny(f"is longer than {MAX_SQL_CHARS:,} characters")
    _check_characters(sql, dialect)
    if check_lexing:
        _check_lexing(text, dialect)
    try:
        statements = _parse_statements(text, dialect)
    except SqlglotError as error:
        reason = f"could not be parsed as {dialect} SQL ({_first_line(error)})"
        raise Deny(reason, unparsable=True) from None
    found = [s for s in statements if s is not None and not isinstance(s, exp.Semicolon)]
    if not found:
        raise Deny("is empty")
    if len(found) > 1:
        raise Deny(f"has {len(found)} statements; only one query is allowed")
    return found[0]


def _parse_statements(text: str, dialect: str) -> list[exp.Expr | None]:
    tokens = sqlglot_dialect(dialect).tokenize(text)
    try:
        return sqlglot_dialect(dialect).parser(max_nodes=MAX_NODES).parse(tokens, text)
    except ParseError as error:
        bracketed = _bracket_limit_arithmetic(tokens)
        if bracketed is not tokens:
            with contextlib.suppress(ParseError):
                return sqlglot_dialect(dialect).parser(max_nodes=MAX_NODES).parse(bracketed, text)
        raise error


# Where a LIMIT/OFFSET expression ends, at its own nesting depth.
_LIMIT_END = frozenset(
    {
        TokenType.OFFSET,
        TokenType.LIMIT,  # OFFSET may come first (PostgreSQL, Trino)
        TokenType.FETCH,
        TokenType.FOR,
        TokenType.UNION,
        TokenType.INTERSECT,
        TokenType.EXCEPT,
        TokenType.SEMICOLON,
        TokenType.COMMA,
    }
)


def _bracket_limit_arithmetic(tokens: list[Token]) -> list[Token]:
    """`LIMIT 2 - n % 2` → `LIMIT (2 - n % 2)`; the same list when there is nothing to bracket.

    sqlglot stops a LIMIT expression at `%` (it reads `LIMIT 10 %` as a percentage, which other
    dialects have), so it rejects valid PostgreSQL/SQLite/MySQL queries such as a median over an
    even count. Brackets change nothing for the database and the result is checked like any tree.
    """
    out: list[Token] = []
    changed = False
    i = 0
    while i < len(tokens):
        out.append(tokens[i])
        if tokens[i].token_type not in (TokenType.LIMIT, TokenType.OFFSET):
            i += 1
            continue
        end, depth, modulo = i + 1, 0, False
        while end < len(tokens):
            kind = tokens[end].token_type
            if kind == TokenType.L_PAREN:
                depth += 1
            elif kind == TokenType.R_PAREN:
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and kind in _LIMIT_END:
                break
            elif depth == 0 and kind == TokenType.MOD:
                modulo = True
            end += 1
        if modulo and end > i + 1:
            first, last = tokens[i + 1], tokens[end - 1]
            out.append(Token(TokenType.L_PAREN, "(", first.line, first.col, first.start, first.start))
            out.extend(tokens[i + 1 : end])
            out.append(Token(TokenType.R_PAREN, ")", last.line, last.col, last.end, last.end))
            changed = True
            i = end
        else:
            i += 1
    return out if changed else tokens


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    line = re.sub(r"\x1b\[[0-9;]*m", "", lines[0] if lines else type(error).__name__)
    line = re.sub(r"<Token token_type: TokenType\.(\w+)[^>]*>", lambda m: m.group(1).lower(), line)
    return line[:160]


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_INVISIBLE = frozenset({"Cf", "Cs", "Co", "Zl", "Zp", "Zs"})


def _check_characters(text: str, dialect: str) -> None:
    """Control characters never; invisible ones (zero-width, bidi, odd spaces) only inside strings.

    Outside strings, engines disagree on them: MySQL reads U+00A0 as part of a name, others as an
    error, and a reader sees nothing at all.
    """
    control = _CONTROL.search(text)
    if control:
        raise Deny(f"contains a control character (U+{ord(control.group()):04X})")
    if text.isascii():
        return
    if not any(char != " " and unicodedata.category(char) in _INVISIBLE for char in text):
        return
    code = code_skeleton(text, LEXINGS[dialect][0])[0]  # strings and comments removed
    for char in code:
        if char != " " and unicodedata.category(char) in _INVISIBLE:
            raise Deny(f"contains an invisible character outside a string (U+{ord(char):04X})")


def _check_lexing(text: str, dialect: str) -> None:
    """Comments that execute, nest, hint or hold a `;`, and strings that read differently by mode.

    sqlglot drops comments, so these are found on the text. A `;` in a comment is harmless to the
    database but not to every client that splits scripts. When another server quoting mode
    (backslash escapes on/off) would read the strings differently, that reading must be harmless
    too: either not SQL at all, or a query that passes the same checks.
    """
    if not any(mark in text for mark in ("/*", "--", "#", "\\", "//")):
        return
    primary, *alternates = LEXINGS[dialect]
    skeleton = _check_reading(text, primary)
    for lexing in alternates:
        try:
            other = _check_reading(text, lexing)
        except Deny as deny:
            if deny.unparsable:  # an unterminated string or comment: the database refuses it
                continue
            raise Deny(f"{deny.reason} {_OTHER_READING}") from None
        if other == skeleton:
            continue
        try:  # sqlglot failing to parse it proves nothing: MySQL would run INTO OUTFILE
            check_tree(parse_one(other, dialect, check_lexing=False), dialect)
        except Deny as deny:
            raise Deny(f"reads differently {_OTHER_READING}, and then {deny.reason}") from None


_OTHER_READING = "when backslashes are read the other way (a server setting)"


def _check_reading(text: str, lexing: Lexing) -> str:
    """Check comments and statement count under one way of reading; return the code skeleton."""
    skeleton, comments, nested = code_skeleton(text, lexing)
    for body in comments:
        if body.lstrip().upper().startswith(("!", "M!", "+")):
            raise Deny("contains an executable comment or optimizer hint (/*! */, /*+ */)")
        if ";" in body:
            raise Deny("has a ';' inside a comment (it could hide a second statement)")
    if nested:
        raise Deny("contains a comment inside a comment (databases disagree on where it ends)")
    if len([part for part in skeleton.split(";") if part.strip()]) > 1:
        raise Deny("has several statements; only one query is allowed")
    return skeleton
