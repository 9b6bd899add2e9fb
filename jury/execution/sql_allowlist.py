"""What a query jury runs on PostgreSQL, MySQL/MariaDB or DuckDB may be built of (the allow-list
of jury.execution.statement_check): the syntax a SELECT may hold, the data types it may cast
to, and per engine the functions it may call. Anything not named here is refused, so an
unknown function is refused by default.

Each engine's list is its built-in aggregate, window, math, string, date/time and conditional
functions (and a sleep, which the timeout bounds): functions of their arguments and of the
rows, nothing that reads or changes the server (files, settings, locks, signals, sequences,
other sessions, the catalogue). The names are compared as the engine resolves them (an
unquoted PostgreSQL name folded to lower case, a quoted one exactly; MySQL/MariaDB and DuckDB
case-insensitively). ``[engines] allow_functions = [...]`` in jury.toml (or
``allow_functions=a,b`` on a database URL) adds names; tests/test_statement_check.py runs
BIRD's gold and published predictions through the check, and the engine tests check that
every name here exists on the engine.
"""

from __future__ import annotations

from jury.execution.engine_urls import DUCKDB, MYSQL, POSTGRESQL

_WINDOW = "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value"
_TRIG = "sin cos tan cot asin acos atan atan2"

POSTGRESQL_FUNCTIONS = f"""
    count sum avg min max string_agg array_agg bool_and bool_or every bit_and bit_or stddev stddev_pop
    stddev_samp variance var_pop var_samp corr covar_pop covar_samp regr_avgx regr_avgy regr_count
    regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy percentile_cont percentile_disc mode
    {_WINDOW}
    abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10 mod pi power radians round
    scale sign sqrt trunc width_bucket random {_TRIG} sind cosd tand asind acosd atand
    ascii bit_length btrim char_length character_length chr concat concat_ws format initcap left length
    lower lpad ltrim md5 octet_length overlay position regexp_match regexp_matches regexp_replace
    regexp_split_to_array repeat replace reverse right rpad rtrim split_part starts_with strpos substr
    substring to_hex translate trim upper string_to_array array_to_string array_length cardinality unnest
    age date_part date_trunc isfinite justify_days justify_hours justify_interval make_date make_interval
    make_time make_timestamp now clock_timestamp statement_timestamp transaction_timestamp to_timestamp
    to_char to_date to_number date
    coalesce nullif greatest least array
    generate_series pg_sleep
"""

MYSQL_FUNCTIONS = f"""
    count sum avg min max group_concat std stddev stddev_pop stddev_samp variance var_pop var_samp bit_and
    bit_or bit_xor
    {_WINDOW}
    abs ceil ceiling conv crc32 degrees exp floor ln log log10 log2 mod pi pow power radians rand round sign
    sqrt truncate {_TRIG}
    ascii bin bit_length char char_length character_length concat concat_ws elt field find_in_set format hex
    insert instr lcase left length locate lower lpad ltrim mid oct octet_length ord position repeat replace
    reverse right rpad rtrim soundex space strcmp substr substring substring_index trim ucase unhex upper
    regexp_instr regexp_like regexp_replace regexp_substr
    adddate addtime curdate current_date current_time current_timestamp curtime date date_add date_format
    date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days from_unixtime hour
    last_day localtime localtimestamp makedate maketime microsecond minute month monthname now period_add
    period_diff quarter sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec
    timediff timestamp timestampadd timestampdiff to_days to_seconds unix_timestamp utc_date utc_time
    utc_timestamp week weekday weekofyear year yearweek
    if ifnull nullif coalesce isnull greatest least
    sleep
"""

DUCKDB_FUNCTIONS = f"""
    count sum avg min max group_concat string_agg list array_agg bool_and bool_or stddev stddev_pop
    stddev_samp variance var_pop var_samp median mode quantile quantile_cont quantile_disc corr covar_pop
    covar_samp first last any_value arg_max arg_min max_by min_by count_if
    {_WINDOW}
    abs ceil ceiling floor round trunc sign sqrt cbrt pow power exp ln log log2 log10 mod pi degrees radians
    add subtract multiply divide
    {_TRIG} gcd lcm factorial even isnan isinf random
    length char_length strlen lower upper lcase ucase concat concat_ws substr substring left right lpad rpad
    ltrim rtrim trim replace reverse repeat instr strpos position contains starts_with ends_with prefix
    suffix split_part string_split regexp_matches regexp_replace regexp_extract ascii chr printf format
    translate md5
    current_date now today strftime strptime date_part datepart date_diff datediff date_sub date_trunc
    datetrunc extract year month day dayofmonth dayofweek dayofyear hour minute second week weekofyear
    quarter epoch make_date make_timestamp age last_day monthname dayname julian date
    coalesce nullif ifnull greatest least
    range generate_series unnest
"""

FUNCTIONS: dict[str, frozenset[str]] = {
    POSTGRESQL: frozenset(POSTGRESQL_FUNCTIONS.split()),
    MYSQL: frozenset(MYSQL_FUNCTIONS.split()),
    DUCKDB: frozenset(DUCKDB_FUNCTIONS.split()),
}

#: Functions that may stand in FROM (a table function): they make rows from their arguments
#: (PostgreSQL's pg_sleep: one row, after the sleep the timeout bounds, as in the select list).
TABLE_FUNCTIONS: dict[str, frozenset[str]] = {
    POSTGRESQL: frozenset({"generate_series", "unnest", "pg_sleep"}),
    MYSQL: frozenset(),
    DUCKDB: frozenset({"range", "generate_series", "unnest"}),
}

#: The syntax of a query (sqlglot expression classes): clauses, operators, literals and names.
_NODES = """
    Select Union Intersect Except Subquery With CTE From Join Where Group Having Order Ordered Limit Offset
    Fetch LimitOptions Distinct Qualify Window WindowSpec Filter WithinGroup IgnoreNulls RespectNulls
    Values Tuple Lateral TableAlias Alias Aliases Table Column Identifier Star Literal Null Boolean
    Var Paren Neg Not Is Like ILike In Between Any All EQ NEQ NullSafeEQ NullSafeNEQ GT GTE LT LTE Add Sub
    Mul Div IntDiv Mod DPipe BitwiseAnd BitwiseOr BitwiseXor BitwiseNot BitwiseLeftShift BitwiseRightShift
    Escape Interval DataType DataTypeParam PropertyEQ Bracket Dot Slice Semicolon
    SimilarTo Glob ByteString BitString HexString National UnicodeString RawString Introducer
"""

#: sqlglot function classes written as syntax rather than called by a name (CAST(x AS t),
#: EXTRACT(f FROM x), CASE, AND, x::t, CURRENT_DATE, ...) or made by sqlglot itself inside a
#: function it parsed (TsOrDsToDate inside MySQL's YEAR()): allowed by class.
_SYNTAX_FUNCTIONS = """
    Cast TryCast Extract Case If And Or Xor Exists Substring Trim StrPosition Convert GroupConcat
    CurrentDate CurrentTimestamp CurrentTime Localtime Localtimestamp Coalesce Nullif Greatest Least
    TsOrDsToDate TsOrDsToTimestamp TimeStrToTime StrToTime StrToDate Date Time Timestamp DateStrToDate
    TimeToStr Concat ConcatWs Lower Upper Length ArrayAgg PercentileCont PercentileDisc Array RegexpLike
    Count Sum Avg Max Min Ceil Floor Round Abs Unnest Collate
"""

#: The data types a query may cast to (sqlglot DataType.Type names).
_TYPES = """
    BIT BOOLEAN TINYINT UTINYINT SMALLINT USMALLINT MEDIUMINT UMEDIUMINT INT UINT BIGINT UBIGINT INT128
    UINT128 FLOAT DOUBLE DECIMAL UDECIMAL DECIMAL32 DECIMAL64 DECIMAL128 BIGDECIMAL MONEY SMALLMONEY CHAR
    NCHAR VARCHAR NVARCHAR TEXT MEDIUMTEXT LONGTEXT TINYTEXT NAME BPCHAR BINARY VARBINARY BLOB MEDIUMBLOB
    LONGBLOB TINYBLOB DATE DATE32 DATETIME DATETIME2 DATETIME64 SMALLDATETIME TIME TIMETZ TIMESTAMP
    TIMESTAMPTZ TIMESTAMPLTZ TIMESTAMPNTZ TIMESTAMP_S TIMESTAMP_MS TIMESTAMP_NS INTERVAL YEAR UUID JSON JSONB
    ARRAY LIST
"""

NODES = frozenset(_NODES.split())
SYNTAX_FUNCTIONS = frozenset(_SYNTAX_FUNCTIONS.split())
TYPES = frozenset(_TYPES.split())
