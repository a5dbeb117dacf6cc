"""The SQL guard: only one read-only, bounded query that the asker may see ever reaches a database.

Why a parsed-tree allowlist rather than keyword lists: comments, quoting, nesting and dialect quirks
defeat `startswith("SELECT")` and blocklists. We parse with sqlglot in the target database's dialect
and accept a statement only if *every* node of its tree is a known read-only construct and every
function is known to be side-effect free. What runs is regenerated from the checked tree (comments
dropped, LIMIT applied) — never the text we were given.

Decisions the executor, the access rules and the tests rely on:
- Exactly one statement; a trailing `;` is fine. Blank or comment-only input → DENY "is empty".
  Anything sqlglot cannot parse, or parses only as an opaque command, is denied.
- The statement must be a SELECT, a set operation (UNION/INTERSECT/EXCEPT) or PostgreSQL `TABLE t`.
  SHOW, EXPLAIN, DESCRIBE and top-level VALUES are denied: they answer no question about the data,
  SHOW leaks server settings, and EXPLAIN ANALYZE executes its statement.
- DML/DDL anywhere (data-modifying CTEs included), SELECT INTO, locking clauses (FOR UPDATE/SHARE,
  LOCK IN SHARE MODE), transaction and session commands are denied.
- Functions: the ones sqlglot models are allowed except those that reveal identity, server state or
  version (current_user, version(), database()...), touch sequences, files or other services; the
  ones it does not model only from `ALLOWED_FUNCTIONS` (ordinary analytics functions of SQLite,
  PostgreSQL and MySQL). `DANGEROUS_FUNCTIONS` names the known bad ones (sleep, files, dblink,
  query_to_xml, set_config, locks...) for a precise reason; `current_setting` is among them because
  it leaks configuration. Schema-qualified calls are denied: they can reach user-defined functions.
- System catalogs are denied: pg_catalog, information_schema, mysql, performance_schema, sys, any
  `pg_*`, `sqlite_*` or `pragma_*` table. The bot answers questions about business data, the schema
  it needs comes from its own catalog, and these views leak other users, sessions and settings.
- Other databases are denied: three-part names everywhere, `db.table` in MySQL, attached schemas in
  SQLite (only `main.` is accepted). PostgreSQL `schema.table` is fine.
- MySQL user variables (`@x`, `:=`) and system variables (`@@x`) are denied; so are PostgreSQL's bare
  `user`, `current_role`... (quote a column of that name).
- Executable comments (`/*! */`, `/*M! */`), optimizer hints (`/*+ */`, e.g. MySQL SET_VAR), comments
  inside comments and comments holding a `;` are denied. Strings are read both ways a server may
  read backslashes (MySQL NO_BACKSLASH_ESCAPES, PostgreSQL standard_conforming_strings); the other
  reading must be harmless too (not SQL at all, or a query that passes). Control characters are
  denied; invisible ones (zero-width, bidi, non-breaking spaces) are denied outside strings.
- A recursive CTE whose recursive step has no WHERE or JOIN ... ON on a column and no LIMIT can never
  stop and is denied. Other runaway queries (huge cross joins, WHERE clauses that are always true
  in effect) are the executor's statement timeout's job.
- LIMIT: the outermost query gets `LIMIT policy.limit` when it has none; a larger literal LIMIT or
  FETCH FIRST (or LIMIT ALL / NULL / negative) is lowered to it; a LIMIT expression keeps its value
  inside a wrapping query that is limited.
- Policy: `deny_tables` / `allowed_tables` match a table by name or `schema.name`; CTE names hide a
  table only where SQL scoping says they do. `deny_columns` ("table.column") denies any reference
  that could reach the column (selected, filtered, joined on, sorted, unqualified or with an
  unknown qualifier), `*` or `t.*` over its table, whole-row references (`SELECT t FROM t`) and
  NATURAL JOIN over it. Reasons name the rule, never data values.

`python -m core.guard check --dialect D` reads one statement per line from stdin and prints one
`ALLOW` or `DENY <reason>` line per input line (a blank line → DENY "is empty"; a line that is
not UTF-8 → DENY); exit code 0, or 2 on bad usage such as an unknown dialect. `python -m core.guard
bench` measures speed against a bare sqlglot baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import re
import statistics
import sys
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import Token, TokenType

MAX_SQL_CHARS = 100_000
MAX_NODES = 50_000

# Dialect names we accept → sqlglot's name. Dialect-specific rules below are written for these.
DIALECTS = {
    "sqlite": "sqlite",
    "postgres": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
}


@dataclass(frozen=True)
class GuardPolicy:
    limit: int | None = 1000  # LIMIT added when missing; a larger LIMIT is lowered to it
    deny_tables: frozenset[str] = frozenset()  # lowercase "table" or "schema.table"
    deny_columns: frozenset[str] = frozenset()  # lowercase "table.column"
    allowed_tables: frozenset[str] | None = None  # when set, every referenced table must be in it


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    sql: str  # the SQL to run (LIMIT applied), in the target dialect; "" when denied
    reason: str = ""  # when denied, plain English that follows "it": "writes data (UPDATE)"
    tables: tuple[str, ...] = ()


class UnknownDialectError(ValueError):
    """The guard only knows the rules of the dialects in DIALECTS."""


class _Deny(Exception):
    def __init__(self, reason: str, *, unparsable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unparsable = unparsable  # the text is not SQL at all (the database would refuse it too)


# --------------------------------------------------------------------------------------------
# What a read-only query may contain
# --------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    """Long name lists stay readable as whitespace-separated text."""
    return tuple(text.split())


# Every node that is not a function must be one of these (exact types). Anything else — including
# node types added by future sqlglot versions — is denied until someone looks at it.
_ALLOWED_NODE_NAMES = _words("""
Select Union Intersect Except Subquery With CTE RecursiveWithSearch Values Tuple
Table TableAlias From Join Where Group Having Order Ordered Limit Offset Fetch LimitOptions
Window WindowSpec Qualify Distinct Lateral TableSample GroupingSets Cube Rollup
Filter WithinGroup IgnoreNulls RespectNulls HavingMax
Column Identifier Star Literal Null Boolean Var Placeholder Parameter Paren Alias Aliases
DataType DataTypeParam PseudoType Interval IntervalSpan
Add Sub Mul Div IntDiv Mod DPipe EQ NEQ GT GTE LT LTE NullSafeEQ NullSafeNEQ Is In Between
Like ILike SimilarTo Glob Escape Any All Not Neg BitwiseNot BitwiseAnd BitwiseOr BitwiseXor
BitwiseLeftShift BitwiseRightShift Dot Bracket Slice AtTimeZone FromTimeZone Overlaps
Adjacent ExtendsLeft ExtendsRight Distance Kwarg Lambda Variadic ColumnDef
JSONPath JSONPathKey JSONPathRoot JSONPathSubscript JSONPathSelector JSONPathSlice JSONPathUnion
JSONPathWildcard JSONPathFilter JSONPathRecursive JSONPathPart JSONPathScript
JSONKeyValue JSONValue JSONColumnDef JSONSchema FormatJson OnCondition
HexString BitString ByteString RawString UnicodeString National Introducer CharacterSet
IndexTableHint Partition PartitionId Version
""")
_ALLOWED_NODES: frozenset[type] = frozenset(
    getattr(exp, name) for name in _ALLOWED_NODE_NAMES if hasattr(exp, name)
)

# Nodes that are never allowed, with the reason a person reads. Looked up along the class hierarchy.
_NODE_REASONS: tuple[tuple[str, str], ...] = (
    ("Insert", "writes data (INSERT)"),
    ("Update", "writes data (UPDATE)"),
    ("Delete", "writes data (DELETE)"),
    ("Merge", "writes data (MERGE)"),
    ("MultitableInserts", "writes data (INSERT)"),
    ("TruncateTable", "deletes data (TRUNCATE)"),
    ("LoadData", "loads data from a file (LOAD DATA)"),
    ("Copy", "copies data to or from files (COPY)"),
    ("Export", "writes data to files (EXPORT)"),
    ("Put", "copies files (PUT)"),
    ("Get", "copies files (GET)"),
    ("Directory", "writes to a directory"),
    ("Into", "writes query results into a table or variable (SELECT ... INTO)"),
    ("Returning", "writes data (RETURNING)"),
    ("OnConflict", "writes data (ON CONFLICT)"),
    ("Lock", "locks rows (FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE)"),
    ("LockingStatement", "locks tables (LOCKING)"),
    ("Create", "changes the schema (CREATE)"),
    ("Drop", "changes the schema (DROP)"),
    ("Alter", "changes the schema (ALTER)"),
    ("Comment", "changes the schema (COMMENT)"),
    ("Refresh", "changes the schema (REFRESH)"),
    ("Cache", "changes the schema (CACHE)"),
    ("Uncache", "changes the schema (UNCACHE)"),
    ("Grant", "changes permissions (GRANT)"),
    ("Revoke", "changes permissions (REVOKE)"),
    ("Transaction", "controls transactions (BEGIN)"),
    ("Commit", "controls transactions (COMMIT)"),
    ("Rollback", "controls transactions (ROLLBACK)"),
    ("Set", "changes session settings (SET)"),
    ("SetItem", "changes session settings (SET)"),
    ("Pragma", "changes database settings (PRAGMA)"),
    ("Use", "switches database (USE)"),
    ("Attach", "attaches a database (ATTACH)"),
    ("Detach", "detaches a database (DETACH)"),
    ("Install", "installs an extension (INSTALL)"),
    ("Kill", "stops other sessions (KILL)"),
    ("Analyze", "changes statistics (ANALYZE)"),
    ("Describe", "is not a query (DESCRIBE)"),
    ("Show", "is not a query (SHOW)"),
    ("Execute", "runs stored code (EXECUTE)"),
    ("ExecuteSql", "runs SQL from a string (EXECUTE)"),
    ("StoredProcedure", "runs a stored procedure"),
    ("Declare", "declares variables (DECLARE)"),
    ("Hint", "carries an optimizer hint"),
    ("SessionParameter", "reads server or session variables (@@...)"),
    ("PropertyEQ", "assigns a variable (:=)"),
    ("Block", "is procedural code"),
    ("IfBlock", "is procedural code"),
    ("WhileBlock", "is procedural code"),
)
_REASON_BY_CLASS: dict[type, str] = {
    getattr(exp, name): reason for name, reason in _NODE_REASONS if hasattr(exp, name)
}

# Functions sqlglot models but that reveal who/where/what the server is, touch sequences, read
# files or reach other services. (All others it models are pure value functions.)
_DENIED_FUNCTION_CLASSES: dict[str, str] = {
    **dict.fromkeys(
        _words("""CurrentUser CurrentUserId SessionUser CurrentRole CurrentRoleType CurrentAvailableRoles
        CurrentSecondaryRoles CurrentAccount CurrentAccountName CurrentOrganizationName
        CurrentOrganizationUser CurrentVersion CurrentSession CurrentStatement CurrentTransaction
        CurrentIpAddress CurrentClient CurrentWarehouse CurrentRegion CurrentSchema CurrentSchemas
        CurrentDatabase CurrentCatalog"""),
        "reads server or session information",
    ),
    **dict.fromkeys(_words("ReadCSV ReadParquet ToFile"), "reads or writes files"),
    **dict.fromkeys(
        _words("""AIAgg AIClassify AIEmbed AIForecast AIGenerate AISimilarity AISummarizeAgg MLForecast
        MLTranslate Predict GenerateEmbedding GenerateText VectorSearch FeaturesAtTime"""),
        "calls an external service",
    ),
    "NextValueFor": "advances a sequence",
    "DynamicIdentifier": "builds a table or column name at run time",
    "Secret": "reads secrets",
}

# Functions sqlglot does not model (it parses them as "anonymous"): only these are accepted. Ordinary,
# side-effect-free analytics functions of SQLite, PostgreSQL and MySQL/MariaDB; one list for all
# three, because a name that is harmless in one is harmless in the others (the dangerous ones are
# below and never appear here).
ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    _words("""
    abs avg count sum min max total group_concat string_agg array_agg listagg median mode
    stddev stddev_pop stddev_samp std variance var_pop var_samp variance_pop variance_samp
    corr covar_pop covar_samp regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope
    regr_sxx regr_sxy regr_syy percentile_cont percentile_disc bit_and bit_or bit_xor bit_count
    bool_and bool_or every any_value count_if countif grouping
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    acos acosh asin asinh atan atan2 atanh cbrt ceil ceiling cos cosh cot degrees div exp
    factorial floor gcd lcm ln log log10 log2 mod pi pow power radians random rand round sign
    sin sinh sqrt tan tanh trunc truncate width_bucket scale min_scale trim_scale conv bin oct
    crc32 erf
    ascii bit_length btrim char chr char_length character_length concat concat_ws format
    initcap insert instr lcase left length len locate lower lpad ltrim md5 mid octet_length ord
    overlay position printf quote quote_ident quote_literal quote_nullable regexp regexp_count
    regexp_instr regexp_like regexp_match regexp_matches regexp_replace regexp_split_to_array
    regexp_split_to_table regexp_substr repeat replace reverse right rpad rtrim sha sha1 sha2
    sha224 sha256 sha384 sha512 soundex difference levenshtein similarity word_similarity
    metaphone dmetaphone space split_part starts_with strcmp strpos substr substring
    substring_index field find_in_set elt make_set export_set to_ascii to_hex translate trim
    ucase unhex unicode unistr upper hex glob like likelihood likely unlikely string_to_array
    array_to_string to_base64 from_base64 encode decode convert convert_from convert_to normalize
    weight_string char_length lengthb casefold
    age clock_timestamp current_date current_time current_timestamp localtime localtimestamp now
    statement_timestamp transaction_timestamp timeofday date time datetime julianday unixepoch
    strftime timediff date_part date_trunc date_bin extract isfinite justify_days justify_hours
    justify_interval make_date make_time make_timestamp make_timestamptz make_interval to_char
    to_date to_number to_timestamp date_format time_format str_to_date datediff timestampdiff
    timestampadd date_add date_sub adddate subdate addtime subtime curdate curtime sysdate
    utc_date utc_time utc_timestamp unix_timestamp from_unixtime year month day dayofmonth
    dayofweek dayofyear dayname monthname weekday week weekofyear yearweek quarter hour minute
    second microsecond last_day makedate maketime period_add period_diff sec_to_time time_to_sec
    to_days from_days to_seconds convert_tz get_format timestamp inet_aton inet_ntoa
    coalesce ifnull isnull nullif nvl nvl2 if iif greatest least typeof num_nulls num_nonnulls
    interval cast try_cast
    json json_array json_array_length json_extract json_insert json_object json_patch json_remove
    json_replace json_set json_type json_valid json_quote json_group_array json_group_object
    json_each json_tree jsonb jsonb_array jsonb_extract jsonb_object jsonb_group_array
    jsonb_group_object json_unquote json_contains json_contains_path json_keys json_length
    json_depth json_search json_value json_table json_pretty json_merge_patch json_merge_preserve
    json_arrayagg json_objectagg json_overlaps json_build_object json_build_array
    jsonb_build_object jsonb_build_array json_agg jsonb_agg json_object_agg jsonb_object_agg
    json_array_elements json_array_elements_text jsonb_array_elements jsonb_array_elements_text
    json_each_text jsonb_each jsonb_each_text json_object_keys jsonb_object_keys json_extract_path
    json_extract_path_text jsonb_extract_path jsonb_extract_path_text json_typeof jsonb_typeof
    json_strip_nulls jsonb_strip_nulls to_json to_jsonb row_to_json array_to_json jsonb_pretty
    jsonb_set jsonb_insert jsonb_path_query jsonb_path_query_array jsonb_path_query_first
    jsonb_path_exists jsonb_path_match jsonb_array_length json_scalar json_serialize
    array_length array_lower array_upper array_ndims array_dims array_position array_positions
    array_append array_prepend array_cat array_remove array_replace array_fill trim_array
    cardinality unnest generate_series generate_subscripts all any some
    timezone string_to_table unaccent jsonb_to_recordset jsonb_to_record json_to_recordset
    json_to_record jsonb_populate_record jsonb_populate_recordset json_populate_record
    json_populate_recordset json_array_append json_array_insert json_storage_size
    to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
    ts_headline setweight
    gen_random_uuid uuid row pg_typeof
    """)
)

# Names we recognise as dangerous, for a precise reason (they are denied whatever the list above
# says). Anything else not in ALLOWED_FUNCTIONS is denied as "not on the list of allowed functions".
DANGEROUS_FUNCTIONS: dict[str, str] = {
    **dict.fromkeys(
        _words("pg_sleep pg_sleep_for pg_sleep_until sleep benchmark waitfor"),
        "sleeps or burns CPU",
    ),
    **dict.fromkeys(
        _words("""pg_read_file pg_read_binary_file pg_ls_dir pg_stat_file pg_ls_logdir pg_ls_waldir
        pg_ls_tmpdir pg_ls_archive_statusdir pg_file_write pg_file_read pg_file_rename
        pg_file_unlink pg_logdir_ls lo_import lo_export lo_get lo_put lo_open lo_create lo_creat
        lo_unlink lo_from_bytea loread lowrite load_file readfile writefile edit fsdir zipfile
        load_extension fts3_tokenizer sys_exec sys_eval"""),
        "reads or writes files, or loads code",
    ),
    **dict.fromkeys(
        _words("""dblink dblink_exec dblink_connect dblink_connect_u dblink_open dblink_fetch
        dblink_send_query dblink_get_result"""),
        "reaches another database",
    ),
    **dict.fromkeys(
        _words("""query_to_xml query_to_xmlschema query_to_xml_and_xmlschema cursor_to_xml table_to_xml
        table_to_xmlschema table_to_xml_and_xmlschema schema_to_xml schema_to_xmlschema
        schema_to_xml_and_xmlschema database_to_xml database_to_xmlschema
        database_to_xml_and_xmlschema"""),
        "runs SQL given as a string",
    ),
    **dict.fromkeys(
        _words("""pg_terminate_backend pg_cancel_backend pg_reload_conf pg_rotate_logfile set_config
        pg_notify pg_logical_emit_message pg_switch_wal pg_create_restore_point pg_start_backup
        pg_stop_backup pg_backup_start pg_backup_stop pg_promote nextval setval txid_current
        pg_current_xact_id last_insert_id"""),
        "changes server or session state",
    ),
    **dict.fromkeys(
        _words("""pg_advisory_lock pg_advisory_xact_lock pg_advisory_lock_shared pg_try_advisory_lock
        pg_try_advisory_xact_lock get_lock release_lock release_all_locks is_free_lock
        is_used_lock master_pos_wait source_pos_wait"""),
        "takes locks",
    ),
    **dict.fromkeys(
        _words("""current_setting version user database schema current_user session_user system_user
        connection_id found_rows row_count changes total_changes last_insert_rowid sqlite_version
        sqlite_source_id sqlite_compileoption_used sqlite_compileoption_get sqlite_offset
        pg_backend_pid inet_server_addr inet_server_port inet_client_addr inet_client_port
        pg_postmaster_start_time pg_conf_load_time current_database current_schema currval
        lastval"""),
        "reads server or session information",
    ),
    **dict.fromkeys(_words("zeroblob randomblob"), "allocates large blobs"),
}

_SYSTEM_SCHEMAS = frozenset(_words("pg_catalog information_schema pg_toast mysql performance_schema sys"))
_SYSTEM_TABLE_PREFIXES = ("pg_", "sqlite_", "pragma_")  # pragma_*: SQLite's table-valued PRAGMAs
_SYSTEM_TABLES = frozenset({"dbstat"})


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def check(sql: str, dialect: str, policy: GuardPolicy = GuardPolicy()) -> Verdict:
    """ALLOW one read-only query (returned rewritten with its LIMIT) or DENY it with a reason."""
    name = normalize_dialect(dialect)
    root: exp.Expression | None = None
    try:
        root = _parse_one(sql, name)
        real_tables = _real_tables(_check_tree(root, name), name)
        _check_policy(root, real_tables, policy)
        return Verdict(True, _limited_sql(root, name, policy.limit), tables=_table_keys(real_tables))
    except _Deny as deny:
        return Verdict(False, "", deny.reason, _tables_of(root, name))
    except RecursionError:
        return Verdict(False, "", "is nested too deeply")


def _tables_of(root: exp.Expression | None, dialect: str) -> tuple[str, ...]:
    """The tables a denied statement named, for the audit log."""
    try:
        return _table_keys(_real_tables(list(root.find_all(exp.Table)), dialect)) if root else ()
    except RecursionError:
        return ()


def normalize_dialect(dialect: str) -> str:
    try:
        return DIALECTS[dialect.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(set(DIALECTS.values())))
        raise UnknownDialectError(f"unknown SQL dialect {dialect!r}; the guard knows {known}") from None


# --------------------------------------------------------------------------------------------
# Reading the text
# --------------------------------------------------------------------------------------------


def _parse_one(sql: str, dialect: str, *, check_lexing: bool = True) -> exp.Expression:
    text = sql.strip(" \t\r\n")  # str.strip() would also drop Unicode spaces a database may not
    if len(text) > MAX_SQL_CHARS:
        raise _Deny(f"is longer than {MAX_SQL_CHARS:,} characters")
    _check_characters(sql, dialect)
    if check_lexing:
        _check_lexing(text, dialect)
    try:
        statements = _parse_statements(text, dialect)
    except SqlglotError as error:
        reason = f"could not be parsed as {dialect} SQL ({_first_line(error)})"
        raise _Deny(reason, unparsable=True) from None
    statements = [s for s in statements if s is not None and not isinstance(s, exp.Semicolon)]
    if not statements:
        raise _Deny("is empty")
    if len(statements) > 1:
        raise _Deny(f"has {len(statements)} statements; only one query is allowed")
    return statements[0]


@functools.cache
def _dialect(name: str) -> Dialect:
    return Dialect.get_or_raise(name)


def _parse_statements(text: str, dialect: str) -> list[exp.Expression | None]:
    tokens = _dialect(dialect).tokenize(text)
    try:
        return _dialect(dialect).parser(max_nodes=MAX_NODES).parse(tokens, text)
    except ParseError as error:
        bracketed = _bracket_limit_arithmetic(tokens)
        if bracketed is not tokens:
            with contextlib.suppress(ParseError):
                return _dialect(dialect).parser(max_nodes=MAX_NODES).parse(bracketed, text)
        raise error


# Where a LIMIT/OFFSET expression ends, at its own nesting depth.
_LIMIT_END = frozenset(
    {
        TokenType.OFFSET,
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
        raise _Deny(f"contains a control character (U+{ord(control.group()):04X})")
    if text.isascii():
        return
    if not any(char != " " and unicodedata.category(char) in _INVISIBLE for char in text):
        return
    code = _skeleton(text, _LEXINGS[dialect][0])[0]  # strings and comments removed
    for char in code:
        if char != " " and unicodedata.category(char) in _INVISIBLE:
            raise _Deny(f"contains an invisible character outside a string (U+{ord(char):04X})")


@dataclass(frozen=True)
class _Lexing:
    """How a database reads quotes and comments (only what matters to find code, strings, comments)."""

    backslash_escapes: bool  # '\'' escapes a quote in ordinary strings
    double_quote_strings: bool  # "..." is a string (MySQL), not an identifier
    hash_comments: bool  # '#' starts a comment (MySQL)
    dash_needs_space: bool  # '--' is a comment only when followed by a space (MySQL)
    dollar_quotes: bool  # $tag$...$tag$ (PostgreSQL)
    e_strings: bool  # E'...' strings always take backslash escapes (PostgreSQL)
    bracket_identifiers: bool  # [name] (SQLite)


# The way each database reads text by default, then the way it reads it under another server mode
# (MySQL NO_BACKSLASH_ESCAPES; PostgreSQL standard_conforming_strings=off). sqlglot follows the
# first; a query whose code differs under the second could do something else than what we checked.
_SQLITE = _Lexing(
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
_LEXINGS: dict[str, tuple[_Lexing, ...]] = {
    "sqlite": (_SQLITE,),
    "postgres": (_POSTGRES, replace(_POSTGRES, backslash_escapes=True)),
    "mysql": (_MYSQL, replace(_MYSQL, backslash_escapes=False)),
}
_SPECIAL = re.compile(r"""['"`#$/\-\[]""")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$")


def _check_lexing(text: str, dialect: str) -> None:
    """Comments that execute, nest, hint or hold a `;`, and strings that read differently by mode.

    sqlglot drops comments, so these are found on the text. A `;` in a comment is harmless to the
    database but not to every client that splits scripts. When another server quoting mode
    (backslash escapes on/off) would read the strings differently, that reading must be harmless
    too: either not SQL at all, or a query that passes the same checks.
    """
    if not any(mark in text for mark in ("/*", "--", "#", "\\")):
        return
    primary, *alternates = _LEXINGS[dialect]
    skeleton = _check_reading(text, primary)
    for lexing in alternates:
        try:
            other = _check_reading(text, lexing)
        except _Deny as deny:
            if deny.unparsable:  # an unterminated string or comment: the database refuses it
                continue
            raise _Deny(f"{deny.reason} {_OTHER_READING}") from None
        if other == skeleton:
            continue
        try:  # sqlglot failing to parse it proves nothing: MySQL would run INTO OUTFILE
            _check_tree(_parse_one(other, dialect, check_lexing=False), dialect)
        except _Deny as deny:
            raise _Deny(f"reads differently {_OTHER_READING}, and then {deny.reason}") from None


_OTHER_READING = "when backslashes are read the other way (a server setting)"


def _check_reading(text: str, lexing: _Lexing) -> str:
    """Check comments and statement count under one way of reading; return the code skeleton."""
    skeleton, comments, nested = _skeleton(text, lexing)
    for body in comments:
        if body.lstrip().upper().startswith(("!", "M!", "+")):
            raise _Deny("contains an executable comment or optimizer hint (/*! */, /*+ */)")
        if ";" in body:
            raise _Deny("has a ';' inside a comment (it could hide a second statement)")
    if nested:
        raise _Deny("contains a comment inside a comment (databases disagree on where it ends)")
    if len([part for part in skeleton.split(";") if part.strip()]) > 1:
        raise _Deny("has several statements; only one query is allowed")
    return skeleton


def _skeleton(text: str, lx: _Lexing) -> tuple[str, list[str], bool]:
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
        elif (char == "#" and lx.hash_comments) or (
            char == "-"
            and text.startswith("--", j)
            and (not lx.dash_needs_space or j + 2 >= n or text[j + 2] in " \t\r\n")
        ):
            i = _line_comment(text, j, out, comments)
        elif char == "/" and text.startswith("/*", j):
            end = text.find("*/", j + 2)
            if end < 0:
                raise _Deny("has a comment that never ends", unparsable=True)
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
                raise _Deny("has a string that never ends", unparsable=True)
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
    raise _Deny("has a string or quoted name that never ends", unparsable=True)


def _word(char: str) -> bool:
    return char.isalnum() or char in "_$"


# --------------------------------------------------------------------------------------------
# Checking the tree
# --------------------------------------------------------------------------------------------


def _check_tree(root: exp.Expression, dialect: str) -> list[exp.Table]:
    """Deny anything that is not read-only; return the table references met on the way."""
    query = root
    while isinstance(query, exp.Subquery) and not query.alias:
        query = query.this
    if not isinstance(query, (exp.Select, exp.SetOperation)):
        raise _Deny(_statement_reason(root))
    tables = []
    for node in root.walk():
        kind = type(node)
        if isinstance(node, exp.Func):
            _check_function(node)
        elif kind not in _ALLOWED_NODES:
            raise _Deny(_node_reason(node))
        elif kind is exp.Table:
            _check_table(node, dialect)
            tables.append(node)
        elif kind is exp.Dot and isinstance(node.expression, exp.Func):
            raise _Deny(f"calls a schema-qualified function ({node.sql(dialect)[:80]})")
        elif kind is exp.Parameter and dialect == "mysql":
            raise _Deny("reads or writes user variables (@...)")
        elif kind is exp.Column and dialect == "postgres" and _is_session_keyword(node):
            raise _Deny(f"reads server or session information ({node.name.upper()})")
        elif kind is exp.With and node.args.get("recursive"):
            _check_recursion(node)
        elif kind is exp.Select and not node.expressions:
            raise _Deny("selects no columns")
    return tables


def _unwrap(node: exp.Expression) -> exp.Expression:
    """`((SELECT ...))` → `SELECT ...`, keeping any LIMIT/ORDER BY written on the parentheses."""
    while isinstance(node, exp.Subquery) and not any(v for k, v in node.args.items() if k != "this"):
        node = node.this
    return node


# PostgreSQL reads these bare words as functions (`SELECT user` is the current role); a column with
# such a name has to be quoted there.
_POSTGRES_SESSION_WORDS = frozenset(
    _words("user current_user session_user current_role system_user current_catalog current_schema")
)


def _is_session_keyword(column: exp.Column) -> bool:
    ident = column.this
    return (
        isinstance(ident, exp.Identifier)
        and not ident.quoted
        and not column.table
        and ident.name.lower() in _POSTGRES_SESSION_WORDS
    )


def _statement_reason(root: exp.Expression) -> str:
    """Why a statement that is not a query is denied, e.g. "writes data (DELETE)"."""
    if isinstance(root, exp.Values):
        return "is not a SELECT query (VALUES)"
    known = _known_reason(root)
    if known:
        return known
    return f"is not a SELECT query ({root.sql().split(' ', 1)[0].upper()[:30]})"


def _node_reason(node: exp.Expression) -> str:
    return _known_reason(node) or f"uses SQL the guard does not accept ({type(node).__name__})"


def _known_reason(node: exp.Expression) -> str | None:
    for cls in type(node).__mro__:
        if cls is exp.Command:  # what sqlglot could not parse beyond its first keyword
            return f"is not a query ({str(node.this).upper()})"
        if cls in _REASON_BY_CLASS:
            return _REASON_BY_CLASS[cls]
    return None


def _function_name(node: exp.Func) -> str:
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        this = node.this
        return (this.name if isinstance(this, exp.Expression) else str(this)).lower()
    return node.sql_name().lower()


def _check_function(node: exp.Func) -> None:
    name = _function_name(node)
    if name in DANGEROUS_FUNCTIONS:  # also catches a future sqlglot that models, say, SLEEP
        raise _Deny(f"calls {name}(), which {DANGEROUS_FUNCTIONS[name]}")
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        if name not in ALLOWED_FUNCTIONS:
            if name.startswith("pg_"):
                raise _Deny(f"calls {name}(), a PostgreSQL system function")
            raise _Deny(f"calls {name}(), which is not on the list of allowed functions")
        return
    denied = _DENIED_FUNCTION_CLASSES.get(type(node).__name__)
    if denied:
        raise _Deny(f"calls {name}, which {denied}")


def _check_table(table: exp.Table, dialect: str) -> None:
    if not isinstance(table.this, (exp.Identifier, exp.Func)):
        raise _Deny(f"uses a table reference the guard does not accept ({table.sql(dialect)[:80]})")
    name, db, catalog = table.name.lower(), table.text("db").lower(), table.text("catalog").lower()
    shown = ".".join(part for part in (catalog, db, name) if part)
    if isinstance(table.this, exp.Func):  # a table function: checked as a function, unqualified
        if db or catalog:
            raise _Deny(f"calls a schema-qualified function ({table.sql(dialect)[:80]})")
        return
    if catalog:
        raise _Deny(f"reads another database ({shown})")
    if (
        db in _SYSTEM_SCHEMAS
        or db.startswith(("pg_temp", "pg_toast"))
        or name.startswith(_SYSTEM_TABLE_PREFIXES)
        or name in _SYSTEM_TABLES
    ):
        raise _Deny(f"reads a system catalog ({shown})")
    if db and dialect == "mysql":
        raise _Deny(f"reads another database ({shown})")
    if db and dialect == "sqlite" and db != "main":
        raise _Deny(f"reads an attached database ({shown})")


def _check_recursion(with_: exp.With) -> None:
    """A recursive step with nothing that can stop it runs until the timeout."""
    for cte in with_.expressions:
        body = cte.this
        if not isinstance(body, exp.Union):
            continue
        name = cte.alias_or_name.lower()
        steps = _union_branches(body)[1:]
        for step in steps:
            refers = any(t.name.lower() == name and not t.args.get("db") for t in step.find_all(exp.Table))
            if not refers or not isinstance(step, exp.Select):
                continue
            joins = step.args.get("joins") or []
            joined_on = any(_mentions_column(j.args.get("on")) or j.args.get("using") for j in joins)
            where = _mentions_column(step.args.get("where"))
            if not (where or joined_on or step.args.get("limit") or body.args.get("limit")):
                raise _Deny(f"has a recursive WITH ({name}) whose recursive step can never stop")


def _mentions_column(condition: exp.Expression | None) -> bool:
    """`WHERE true` or `ON 1 = 1` stops nothing; a condition on a column might."""
    return condition is not None and condition.find(exp.Column) is not None


def _union_branches(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Union) and not node.args.get("limit"):
        return _union_branches(node.this) + _union_branches(node.expression)
    return [_unwrap(node)]


# --------------------------------------------------------------------------------------------
# Tables and the access policy
# --------------------------------------------------------------------------------------------


def _real_tables(tables: list[exp.Table], dialect: str) -> list[exp.Table]:
    """Tables read from the database, in the order they are written; CTE references are not tables."""
    real = [
        t
        for t in tables
        if isinstance(t.this, exp.Identifier) and not _is_cte_ref(t) and not _is_dual(t, dialect)
    ]
    return sorted(real, key=lambda t: t.this.meta.get("start", 0))


def _table_keys(tables: list[exp.Table]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_table_key(t) for t in tables))


def _is_dual(table: exp.Table, dialect: str) -> bool:
    """MySQL's `FROM DUAL` names no table."""
    ident = table.this
    return (
        dialect == "mysql"
        and isinstance(ident, exp.Identifier)
        and not ident.quoted
        and ident.name.lower() == "dual"
        and not table.args.get("db")
    )


def _is_cte_ref(table: exp.Table) -> bool:
    """True when `table` names a CTE visible where it stands (earlier CTEs only; itself if RECURSIVE).

    A forward reference is treated as a real table: that is what PostgreSQL does, and it is the
    conservative reading for access rules.
    """
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name.lower()
    node: exp.Expression | None = table
    while node is not None and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.With):
            ctes = parent.expressions
            index = next((k for k, cte in enumerate(ctes) if cte is node), len(ctes))
            visible = ctes[: index + 1] if parent.args.get("recursive") else ctes[:index]
            if any(cte.alias_or_name.lower() == name for cte in visible):
                return True
            node = parent.parent  # the query that owns this WITH: its other CTEs are not visible
            continue
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if (
            isinstance(with_, exp.With)
            and node is not with_
            and any(cte.alias_or_name.lower() == name for cte in with_.expressions)
        ):
            return True
        node = parent
    return False


def _table_key(table: exp.Table) -> str:
    db = table.text("db").lower()
    return f"{db}.{table.name.lower()}" if db else table.name.lower()


def _table_names(table: exp.Table) -> set[str]:
    return {table.name.lower(), _table_key(table)}


def _check_policy(root: exp.Expression, real_tables: list[exp.Table], policy: GuardPolicy) -> None:
    for table in real_tables:
        names = _table_names(table)
        if names & policy.deny_tables:
            raise _Deny(f"reads table {_table_key(table)}, which you may not query")
        if policy.allowed_tables is not None and not names & policy.allowed_tables:
            raise _Deny(f"reads table {_table_key(table)}, which is not among the tables you may query")
    if policy.deny_columns:
        _ColumnRules(real_tables, policy.deny_columns).check(root)


class _ColumnRules:
    """Denies every reference that could reach a denied column; when a reference is unclear, denies.

    Columns are resolved the way the database would: a qualifier names a FROM item of the nearest
    enclosing SELECT that has it; an unqualified name could come from any real table in scope.
    Derived tables and CTEs need no resolution: their own SELECTs are checked where they stand.
    """

    def __init__(self, real_tables: list[exp.Table], deny_columns: Iterable[str]) -> None:
        self.real = {id(t) for t in real_tables}
        self.statement_tables = {t.name.lower() for t in real_tables}
        self.denied: dict[str, set[str]] = {}
        for entry in deny_columns:  # "table.column" (a leading "schema." is ignored)
            parts = entry.lower().rsplit(".", 2)
            if len(parts) >= 2:
                self.denied.setdefault(parts[-2], set()).add(parts[-1])

    def check(self, root: exp.Expression) -> None:
        for node in root.walk():
            if isinstance(node, exp.Star):
                self._check_star(node)
            elif isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                self._check_column(node.name.lower(), node.table.lower(), _enclosing_selects(node))
            elif isinstance(node, exp.Join):
                self._check_join(node)

    def restricted(self, source: exp.Expression) -> set[str]:
        """Denied columns of a FROM item; none unless it is a real table."""
        if isinstance(source, exp.Table) and id(source) in self.real:
            return self.denied.get(source.name.lower(), set())
        return set()

    def _check_column(self, column: str, qualifier: str, scopes: list[exp.Select]) -> None:
        if qualifier:
            source = _resolve(qualifier, scopes)
            if source is not None:
                if column in self.restricted(source):
                    raise self._deny(source.name.lower(), column)
                return
            # a qualifier that names nothing in scope: it could still be any table of the statement
        sources = [item for scope in scopes for item in _sources(scope).items()]
        if qualifier or not scopes:  # e.g. ORDER BY of a UNION sees every table of the statement
            for table in sorted(self.statement_tables | {qualifier} - {""}):
                if column in self.denied.get(table, ()):
                    raise self._deny(table, column)
        for alias, source in sources:
            if column in self.restricted(source):
                raise self._deny(source.name.lower(), column)
            if alias == column and self.restricted(source):  # PostgreSQL: `SELECT t FROM t` = whole rows
                raise _Deny(f"reads whole rows of {source.name.lower()}, which has columns you may not see")

    def _check_star(self, star: exp.Star) -> None:
        parent = star.parent
        if isinstance(parent, exp.Column):  # t.*
            qualifier = parent.table.lower()
            source = _resolve(qualifier, _enclosing_selects(parent))
            exposed = (
                [(qualifier, self.denied.get(qualifier, set()))]
                if source is None
                else [(source.name.lower(), self.restricted(source))]
            )
        elif isinstance(parent, exp.Select) and star.arg_key == "expressions":
            exposed = [(s.name.lower(), self.restricted(s)) for s in _sources(parent).values()]
        else:  # COUNT(*) and friends read no column
            return
        for table, columns in exposed:
            if columns:
                raise _Deny(
                    f"selects * from {table}, which has columns you may not see"
                    f" ({', '.join(sorted(columns))}); name the columns instead"
                )

    def _check_join(self, join: exp.Join) -> None:
        sources = [s for scope in _enclosing_selects(join) for s in _sources(scope).values()]
        if str(join.args.get("method") or "").upper() == "NATURAL":
            for source in sources:
                if self.restricted(source):
                    name = source.name.lower()
                    raise _Deny(f"uses NATURAL JOIN over {name}, which has columns you may not see")
        for ident in join.args.get("using") or []:
            self._check_column(ident.name.lower(), "", _enclosing_selects(join))

    @staticmethod
    def _deny(table: str, column: str) -> _Deny:
        return _Deny(f"uses column {table}.{column}, which you may not see")


def _enclosing_selects(node: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose FROM a column here can refer to, innermost first."""
    out = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            out.append(parent)
        parent = parent.parent
    return out


def _sources(select: exp.Select) -> dict[str, exp.Expression]:
    """alias (lowercase) → FROM/JOIN item of one SELECT."""
    items: list[exp.Expression] = []
    from_ = select.args.get("from_")
    if from_ is not None:
        items.append(from_.this)
    items.extend(join.this for join in select.args.get("joins") or [])
    items.extend(select.args.get("laterals") or [])
    return {item.alias_or_name.lower(): item for item in items}


def _resolve(qualifier: str, scopes: list[exp.Select]) -> exp.Expression | None:
    for scope in scopes:
        source = _sources(scope).get(qualifier)
        if source is not None:
            return source
    return None


# --------------------------------------------------------------------------------------------
# LIMIT and the SQL that runs
# --------------------------------------------------------------------------------------------


def _limited_sql(root: exp.Expression, dialect: str, limit: int | None) -> str:
    query = _unwrap(root)
    _fix_printing(query, dialect)
    if limit is not None:
        query = _apply_limit(query, limit)
    generator = _dialect(dialect).generator(comments=False)
    return generator.generate(query, copy=False)  # the tree is ours to spend


def _fix_printing(query: exp.Expression, dialect: str) -> None:
    """The two places where sqlglot would print SQL the database reads differently."""
    if dialect == "mysql":
        for table in query.find_all(exp.Table):
            if _is_dual(table, dialect):  # printed as `dual`, which MySQL reads as a table name
                table.set("this", exp.Var(this="DUAL"))
    elif dialect == "postgres":
        for node in list(query.find_all(exp.CurrentTime)):
            if not node.this:  # printed as CURRENT_TIME(), a syntax error in PostgreSQL
                node.replace(exp.Var(this="CURRENT_TIME"))


def _apply_limit(query: exp.Expression, cap: int) -> exp.Expression:
    current = query.args.get("limit")
    if current is None:
        query.set("limit", exp.Limit(expression=exp.Literal.number(cap)))
        return query
    options = current.args.get("limit_options")
    if options is not None and (options.args.get("percent") or options.args.get("with_ties")):
        return _wrap(query, cap)  # a share of the rows, or ties: no row count to compare
    if isinstance(current, exp.Fetch):
        count = _int_value(current.args.get("count"))
        if current.args.get("count") is None or (count is not None and 0 <= count <= cap):
            return query
        if count is not None:
            current.set("count", exp.Literal.number(cap))
            return query
        return _wrap(query, cap)
    value = current.expression
    if isinstance(value, exp.Null) or (isinstance(value, exp.Var) and value.name.upper() == "ALL"):
        current.set("expression", exp.Literal.number(cap))
        return query
    count = _int_value(value)
    if count is None:
        return _wrap(query, cap)
    if count < 0 or count > cap:  # SQLite reads a negative LIMIT as "no limit"
        current.set("expression", exp.Literal.number(cap))
    return query


def _int_value(node: exp.Expression | None) -> int | None:
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this  # type: ignore[union-attr]
    if isinstance(node, exp.Paren):
        return _int_value(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = int(node.this)
        except ValueError:
            return None
        return -value if negative else value
    return None


def _wrap(query: exp.Expression, cap: int) -> exp.Expression:
    """A LIMIT we cannot evaluate keeps its meaning inside; the outer query is capped."""
    return (
        exp.select("*")
        .from_(exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier("guarded"))))
        .limit(cap)
    )


# --------------------------------------------------------------------------------------------
# Command line: check and bench
# --------------------------------------------------------------------------------------------


def _policy_from_args(args: argparse.Namespace) -> GuardPolicy:
    return GuardPolicy(
        limit=None if args.limit == 0 else args.limit,
        deny_tables=frozenset(t.lower() for t in args.deny_table),
        deny_columns=frozenset(c.lower() for c in args.deny_column),
        allowed_tables=frozenset(t.lower() for t in args.allow_table) if args.allow_table else None,
    )


def _read_lines(stream: Iterable[bytes]) -> Iterator[str | None]:
    """Lines of stdin as text; None for a line that is not UTF-8 (it is denied, never guessed at)."""
    for number, raw in enumerate(stream):
        line = raw.rstrip(b"\r\n")
        if number == 0 and line.startswith(b"\xef\xbb\xbf"):  # a byte-order mark is the file's, not SQL
            line = line[3:]
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError:
            yield None


def _verdict_line(line: str | None, dialect: str, policy: GuardPolicy, show_sql: bool) -> str:
    if line is None:
        return "DENY is not valid UTF-8 text"
    try:
        verdict = check(line, dialect, policy)
    except Exception as error:  # never let one line stop the rest; never allow on error
        return f"DENY failed inside the guard ({type(error).__name__})"
    if verdict.allowed:
        return f"ALLOW {verdict.sql}" if show_sql else "ALLOW"
    return "DENY " + " ".join(verdict.reason.split())


def _run_check(args: argparse.Namespace) -> int:
    policy = _policy_from_args(args)
    out = sys.stdout
    for line in _read_lines(sys.stdin.buffer):
        out.write(_verdict_line(line, args.dialect, policy, args.show_sql) + "\n")
        out.flush()
    return 0


def _statements(path: Path) -> list[str]:
    """Statements of a file, one per line; a `SQL<TAB>db_id` line (Spider's format) gives its SQL."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[0] for line in lines if line.strip()]


def _timed(statements: list[str], run) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for sql in statements:
        start = time.perf_counter()
        run(sql)
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def _run_bench(args: argparse.Namespace) -> int:
    """Speed of check() on real queries, next to a baseline of bare sqlglot parse + generate."""
    source = _statements(Path(args.file))
    if not source:
        print(f"no statements in {args.file}", file=sys.stderr)
        return 2
    statements = [source[k % len(source)] for k in range(args.count)]
    policy = _policy_from_args(args)
    verdicts: list[Verdict] = []

    def guard(sql: str) -> None:
        verdicts.append(check(sql, args.dialect, policy))

    def baseline(sql: str) -> None:
        with contextlib.suppress(SqlglotError):
            sqlglot.parse_one(sql, read=args.dialect).sql(dialect=args.dialect)

    check(source[0], args.dialect, policy)  # warm caches (dialect, parser class)
    guard_ms = _timed(statements, guard)
    base_ms = _timed(statements, baseline)
    allowed = sum(v.allowed for v in verdicts)
    result = {
        "statements": len(statements),
        "dialect": args.dialect,
        "file": str(args.file),
        "seconds": round(sum(guard_ms) / 1000.0, 3),
        "statements_per_s": round(len(statements) / (sum(guard_ms) / 1000.0), 1),
        "p50_ms": round(statistics.median(guard_ms), 3),
        "p95_ms": round(_percentile(guard_ms, 0.95), 3),
        "max_ms": round(max(guard_ms), 3),
        "allowed": allowed,
        "denied": len(verdicts) - allowed,
        "baseline_seconds": round(sum(base_ms) / 1000.0, 3),
        "baseline_statements_per_s": round(len(statements) / (sum(base_ms) / 1000.0), 1),
        "target_seconds_per_10k": 10.0,
    }
    per_10k = result["seconds"] * 10_000 / len(statements)
    result["seconds_per_10k"] = round(per_10k, 3)
    result["meets_target"] = per_10k <= 10.0
    print(f"guard bench: {len(statements):,} statements ({args.dialect}) from {args.file}")
    print(
        f"  guard.check     {result['seconds']:8.2f} s  {result['statements_per_s']:9,.0f} stmt/s"
        f"  p50 {result['p50_ms']:.2f} ms  p95 {result['p95_ms']:.2f} ms  max {result['max_ms']:.1f} ms"
        f"  allowed {allowed:,}  denied {result['denied']:,}"
    )
    print(
        f"  baseline parse  {result['baseline_seconds']:8.2f} s  {result['baseline_statements_per_s']:9,.0f}"
        " stmt/s  (sqlglot parse + generate, no checks)"
    )
    print(
        f"  target          {per_10k:.2f} s per 10,000 statements (≤ 10 s): "
        + ("met" if result["meets_target"] else "MISSED")
    )
    if args.show_denied:
        for sql, verdict in zip(statements[: len(source)], verdicts, strict=False):
            if not verdict.allowed:
                print(f"  DENY {verdict.reason}: {sql}")
    if args.json:
        print(json.dumps(result))
    return 0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _dialect_arg(value: str) -> str:
    try:
        return normalize_dialect(value)
    except UnknownDialectError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.guard", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("check", "read statements from stdin, one per line; print ALLOW or DENY <reason> per line"),
        ("bench", "measure check() speed on a file of statements (one per line, SQL<TAB>... allowed)"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--dialect", required=True, type=_dialect_arg, help="sqlite, postgres or mysql")
        sub.add_argument("--limit", type=int, default=GuardPolicy.limit, help="LIMIT to apply; 0 = none")
        sub.add_argument("--deny-table", action="append", default=[], metavar="TABLE")
        sub.add_argument("--deny-column", action="append", default=[], metavar="TABLE.COLUMN")
        sub.add_argument("--allow-table", action="append", default=[], metavar="TABLE")
        if name == "check":
            sub.add_argument("--show-sql", action="store_true", help="print ALLOW <sql to run>")
        else:
            default_file = Path(__file__).resolve().parents[2] / "shared/bench/spider-train/train_gold.sql"
            sub.add_argument("--file", default=str(default_file))
            sub.add_argument(
                "--count", type=int, default=10_000, help="statements to check (cycles the file)"
            )
            sub.add_argument("--show-denied", action="store_true")
            sub.add_argument("--json", action="store_true", help="print a final JSON line")
    args = parser.parse_args(argv)
    if args.command == "check":
        return _run_check(args)
    return _run_bench(args)


if __name__ == "__main__":
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to Command" is our DENY
    sys.exit(main())
