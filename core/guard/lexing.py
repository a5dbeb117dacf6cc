"""How each database reads quotes and comments: the code of a text with its strings and comments taken out.

sqlglot drops comments and follows one way of reading backslashes; the checks in
`core.guard.reading` need the comments themselves and every way a server may be set to read the
text. This is the small lexer that gives them both (`code_skeleton`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.guard.verdict import Deny


@dataclass(frozen=True)
class Lexing:
    """How a database reads quotes and comments (only what matters to find code, strings, comments)."""

    backslash_escapes: bool  # '\'' escapes a quote in ordinary strings
    double_quote_strings: bool  # "..." is a string (MySQL), not an identifier
    hash_comments: bool  # '#' starts a comment (MySQL)
    dash_needs_space: bool  # '--' is a comment only when followed by a space (MySQL)
    dollar_quotes: bool  # $tag$...$tag$ (PostgreSQL)
    e_strings: bool  # E'...' strings always take backslash escapes (PostgreSQL)
    bracket_identifiers: bool  # [name] (SQLite)
    slash_comments: bool = False  # '//' starts a comment (Snowflake)


# The way each database reads text by default, then the way it reads it under another server mode
# (MySQL NO_BACKSLASH_ESCAPES; PostgreSQL standard_conforming_strings=off). sqlglot follows the
# first; a query whose code differs under the second could do something else than what we checked.
_SQLITE = Lexing(
    backslash_escapes=False,
    double_quote_strings=False,
    hash_comments=False,
    dash_needs_space=False,
    dollar_quotes=False,
    e_strings=False,
    bracket_identifiers=True,
)
_POSTGRES = replace(_SQLITE, dollar_quotes=True, e_strings=True, bracket_identifiers=False)
_MYSQL = replace(
    _SQLITE,
    backslash_escapes=True,
    double_quote_strings=True,
    hash_comments=True,
    dash_needs_space=True,
    bracket_identifiers=False,
)
# DuckDB and Trino read strings the standard way only; Snowflake always takes backslash escapes
# and `//` comments; BigQuery and Databricks (Spark SQL) read "..." as strings, with backslash
# escapes, and BigQuery `#` comments; Redshift takes backslash escapes (sqlglot writes `\'`), and is
# read the standard way too.
_STANDARD = replace(_SQLITE, bracket_identifiers=False)
_SNOWFLAKE = replace(_POSTGRES, backslash_escapes=True, e_strings=False, slash_comments=True)
_BIGQUERY = replace(_MYSQL, dash_needs_space=False)
_DATABRICKS = replace(_MYSQL, hash_comments=False, dash_needs_space=False)
LEXINGS: dict[str, tuple[Lexing, ...]] = {
    "sqlite": (_SQLITE,),
    "postgres": (_POSTGRES, replace(_POSTGRES, backslash_escapes=True)),
    "mysql": (_MYSQL, replace(_MYSQL, backslash_escapes=False)),
    "duckdb": (_POSTGRES,),
    "snowflake": (_SNOWFLAKE,),
    "bigquery": (_BIGQUERY,),
    "databricks": (_DATABRICKS,),
    "trino": (_STANDARD,),
    "redshift": (replace(_POSTGRES, backslash_escapes=True), _POSTGRES),
}
_SPECIAL = re.compile(r"""['"`#$/\-\[]""")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$")


def code_skeleton(text: str, lx: Lexing) -> tuple[str, list[str], bool]:
    """`text` with every string as '' and every comment as a space; block-comment bodies; nesting.

    The skeleton is still SQL the dialect's parser reads, with the same code as `text` under `lx`.
    """
    out: list[str] = []
    comments: list[str] = []
    nested = False
    i, n = 0, len(text)
    while i < n:
        match = _SPECIAL.search(text, i)
        if match is None:
            out.append(text[i:])
            break
        j = match.start()
        out.append(text[i:j])
        char = text[j]
        if char == "'" or (char == '"' and lx.double_quote_strings):
            e_string = lx.e_strings and j > 0 and text[j - 1] in "eE" and (j < 2 or not _word(text[j - 2]))
            end = _string_end(text, j, char, lx.backslash_escapes or e_string)
            out.append("''")
            i = end
        elif char in '"`' or (char == "[" and lx.bracket_identifiers):
            close = "]" if char == "[" else char
            end = _string_end(text, j, close, False)
            out.append(text[j:end])
            i = end
        elif (
            (char == "#" and lx.hash_comments)
            or (char == "/" and lx.slash_comments and text.startswith("//", j))
            or (
                char == "-"
                and text.startswith("--", j)
                and (not lx.dash_needs_space or j + 2 >= n or text[j + 2] in " \t\r\n")
            )
        ):
            i = _line_comment(text, j, out, comments)
        elif char == "/" and text.startswith("/*", j):
            end = text.find("*/", j + 2)
            if end < 0:
                raise Deny("has a comment that never ends", unparsable=True)
            body = text[j + 2 : end]
            comments.append(body)
            nested = nested or "/*" in body
            out.append(" ")
            i = end + 2
        elif char == "$" and lx.dollar_quotes and (j == 0 or not _word(text[j - 1])):
            tag = _DOLLAR_TAG.match(text, j)
            if tag is None:
                out.append(char)
                i = j + 1
                continue
            end = text.find(tag.group(0), tag.end())
            if end < 0:
                raise Deny("has a string that never ends", unparsable=True)
            out.append("''")
            i = end + len(tag.group(0))
        else:
            out.append(char)
            i = j + 1
    return "".join(out), comments, nested


def _line_comment(text: str, start: int, out: list[str], comments: list[str]) -> int:
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    comments.append(text[start:end])
    out.append(" ")
    return end


def _string_end(text: str, start: int, quote: str, backslash: bool) -> int:
    """Index just past the quoted run that opens at `start` (doubled quotes escape themselves)."""
    i, n = start + 1, len(text)
    while i < n:
        char = text[i]
        if backslash and char == "\\":
            i += 2
            continue
        if char == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    raise Deny("has a string or quoted name that never ends", unparsable=True)


def _word(char: str) -> bool:
    return char.isalnum() or char in "_$"
