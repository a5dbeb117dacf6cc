"""What a read-only query may contain: node types, functions, and the system tables it may not read.

Lists, not logic (`core.guard.tree` applies them). Every node must be on ALLOWED_NODES; functions
sqlglot does not model must be on ALLOWED_FUNCTIONS; DANGEROUS_FUNCTIONS and the reasons below
only make a DENY say precisely why.
"""

from __future__ import annotations

from sqlglot import exp


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
ALLOWED_NODES: frozenset[type] = frozenset(
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
REASON_BY_CLASS: dict[type, str] = {
    getattr(exp, name): reason for name, reason in _NODE_REASONS if hasattr(exp, name)
}

# Functions sqlglot models but that reveal who/where/what the server is, touch sequences, read
# files or reach other services. (All others it models are pure value functions.)
DENIED_FUNCTION_CLASSES: dict[str, str] = {
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
    # DuckDB, Snowflake, BigQuery, Databricks, Trino (the prefixes below catch their families too)
    **dict.fromkeys(
        _words("""sniff_csv parquet_scan iceberg_scan delta_scan st_read input_file_name
        cloud_files list_files directory get_presigned_url build_scoped_file_url build_stage_file_url
        get_stage_location get_relative_path get_absolute_path infer_schema"""),
        "reads files",
    ),
    **dict.fromkeys(
        _words("""sqlite_scan sqlite_attach postgres_scan postgres_scan_pushdown postgres_attach
        postgres_query postgres_execute mysql_scan mysql_query mysql_execute external_query
        http_request http_get http_post remote ai_query"""),
        "reaches another database or service",
    ),
    **dict.fromkeys(
        _words("""query query_table execute_immediate system_execute result_scan"""),
        "runs SQL given as a string, or reads another query's result",
    ),
    **dict.fromkeys(
        _words("""getenv getvariable which_secret checkpoint force_checkpoint get_ddl last_query_id
        current_role current_account current_warehouse current_region current_session
        current_statement current_ip_address current_client current_version current_metastore
        current_groups is_role_in_session invoker_role invoker_share session_user secret
        is_account_group_member is_member current_available_roles current_secondary_roles"""),
        "reads server or session information",
    ),
    **dict.fromkeys(_words("reflect java_method try_reflect"), "calls Java code"),
}

# Names that are harmless in some dialects and dangerous in one: SQLite's GLOB(pattern, text)
# matches a string, DuckDB's glob('*') lists files.
DIALECT_DANGEROUS_FUNCTIONS: dict[str, dict[str, str]] = {"duckdb": {"glob": "lists files"}}

# Name prefixes of whole families of dangerous functions (DuckDB's file readers and system
# table functions, Snowflake's SYSTEM$ functions ...), checked after DANGEROUS_FUNCTIONS.
DANGEROUS_PREFIXES: tuple[tuple[str, str], ...] = (
    ("read_", "reads files"),
    ("parquet_", "reads files"),
    ("iceberg_", "reads files"),
    ("delta_", "reads files"),
    ("duckdb_", "reads the system catalog"),
    ("pragma_", "reads the system catalog"),
    ("system$", "calls a Snowflake system function"),
)

# PostgreSQL's function notation: `c.f` is `f(c)` when c has no column f. Without the schema these
# are the names taken for a function of c's whole row (functions of any row: record, anyelement,
# "any"); with the schema, any name that is not a column of c is (core.guard.lineage).
ROW_FUNCTIONS = frozenset(
    _words("""row_to_json to_json to_jsonb json_agg jsonb_agg array_agg json_build_array
    jsonb_build_array json_build_object jsonb_build_object concat quote_literal quote_nullable
    record_out record_send hstore num_nulls num_nonnulls any_value""")
)

SYSTEM_SCHEMAS = frozenset(
    _words("pg_catalog information_schema pg_toast mysql performance_schema sys system account_usage")
)
SYSTEM_TABLE_PREFIXES_BY_DIALECT = {
    "duckdb": ("duckdb_",),
    "redshift": ("stl_", "stv_", "svl_", "svv_", "sys_"),
}
# Databricks (Spark SQL) reads a file by path when the "schema" is a file format: csv.`/tmp/x`.
FILE_FORMAT_SCHEMAS = frozenset(_words("csv json parquet orc avro text delta binaryfile jdbc cloud_files"))
SYSTEM_TABLE_PREFIXES = ("pg_", "sqlite_", "pragma_")  # pragma_*: SQLite's table-valued PRAGMAs
SYSTEM_TABLES = frozenset({"dbstat"})

# PostgreSQL (and Redshift, DuckDB, Trino, Snowflake, Databricks) read these bare words as functions (`SELECT user` is the current role); a column with
# such a name has to be quoted there.
POSTGRES_SESSION_WORDS = frozenset(
    _words("user current_user session_user current_role system_user current_catalog current_schema")
)
