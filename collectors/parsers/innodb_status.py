"""Parse the Status column of SHOW ENGINE INNODB STATUS into typed, frozen records.

Works on MySQL 5.0-9.x, Percona Server / XtraDB 5.1-8.0 and MariaDB 10.x-11.x. The format is
worked out from the text itself, never from a version number. Standard library only.

Input quirks accepted: the mysql client's ``\\G`` framing (``*** 1. row ***`` / ``Type:`` /
``Name:`` / ``Status:``) or tabular framing before the monitor header, a leading newline, CRLF
line ends, sections in any order (XtraDB prints TRANSACTIONS last), column-aligned whitespace.

Schema (all counters are cumulative as printed; ``None`` = the server did not print it):

``InnodbStatus``
    complete            bool   ``END OF INNODB MONITOR OUTPUT`` seen (the server truncates long output)
    server_time         str    header time as printed: ``060815 22:00:08`` (<=5.5) or
                               ``2024-10-23 17:51:16`` (5.6+, MariaDB); no time zone is printed
    monitor_thread_id   str    the id after the time in 5.6+ headers, as printed (hex or decimal)
    averages_window_s   int    "Per second averages calculated from the last N seconds" (N may be 0)
    warnings            tuple[str]  what the parser noticed (truncation, repeated sections...)
    unparsed_lines      tuple[str]  lines inside known sections that no rule recognised
    background_thread ... row_operations: one record per section, ``None`` when absent.

``BackgroundThread`` (5.1 plugin+): srv_active/srv_shutdown/srv_idle loops (5.6+),
    one_second/sleeps/ten_second/background/flush loops (5.1-5.5), log_flush_and_writes.
``Semaphores``: reservation_count, signal_count (split over two lines since 5.6);
    mutex_spin_waits/rounds/os_waits (<=5.6, Percona/XtraDB); rw_shared_*, rw_excl_* (spins and OS
    waits everywhere but MariaDB 10.5+; rounds 5.5+); rw_sx_* (5.7+); waits: ``SemaphoreWait`` per
    ``--Thread N has waited at F line L for S seconds`` block; held_latches: ``HeldLatch`` per
    ``RW-LOCK:``/``Locked:`` pair of the 8.1+ ``RW-LATCH INFO`` block.
``Deadlock`` / ``ForeignKeyError``: time (first line, as printed), text (whole section),
    deadlock transactions (text of each ``*** (N) TRANSACTION:`` block), rolled_back (N of
    ``*** WE ROLL BACK TRANSACTION (N)``).
``Transactions``: trx_id_counter, purge_trx_id, purge_undo_no (ints: two-word ids of 5.0/5.1
    builtin are high x 2^32 + low, ids are hexadecimal in 5.1 plugin/5.5: see ``trx_id_format``),
    purge_state (5.6+), history_list_length, lock_structs_in_hash_table (5.0), count (listed
    transactions), active (state ACTIVE...), oldest_active_s, lock_waits (LOCK WAIT), and the sums
    tables_in_use, tables_locked, lock_structs, row_locks, undo_log_entries, read_views;
    transactions: ``Transaction`` per ``---TRANSACTION`` with the query text kept verbatim.
``FileIO``: pending_normal_aio_reads/writes (8.0 prints only the per-thread list: summed),
    pending_ibuf_aio_reads, pending_log_ios, pending_sync_ios (empty in 8.0: ``None``),
    pending_fsyncs_log, pending_fsyncs_buffer_pool (MariaDB 10.5+ prints one total:
    pending_fsyncs), pending_preads/pwrites, os_file_reads/writes, os_fsyncs, io_threads.
``InsertBuffer``: size, free_list_len, seg_size, merges; inserts, merged_recs (<=5.1); merged_*,
    discarded_* by operation (5.5+); hash_table_size, hash_node_heap_buffers (summed over the
    partitions 5.7+ prints), hash_table_partitions, hash_used_cells (<=5.1).
``Log`` (bytes/LSN): lsn, flushed_lsn, pages_flushed_lsn (5.6+, MariaDB), checkpoint_lsn,
    log_written_lsn, buffer_assigned_lsn, buffer_completed_lsn, dirty_pages_added_lsn (8.0+),
    min_file_id, max_file_id (8.0.30+); checkpoint_age_bytes = lsn - checkpoint;
    modified_age_bytes = lsn - pages flushed (else Percona's printed "Modified age");
    max_checkpoint_age_bytes, checkpoint_age_target_bytes, printed_checkpoint_age_bytes,
    printed_modified_age_bytes (Percona only); pending_log_writes ("pending log writes" or
    "pending log flushes"), pending_checkpoint_writes, log_ios_done.
``BufferPool`` (pages unless named _bytes): pages_total, pool_size_bytes (XtraDB/Percona), pages_free,
    pages_data, pages_old (5.5+), pages_dirty, dirty_pct/max_dirty_pct (MariaDB), pending_reads,
    pending_writes_lru/flush_list/single_page (single page not on MariaDB), pages_made_young,
    pages_not_young (5.5+), pages_read, pages_created, pages_written, hit_rate_per_1000,
    lru_len, unzip_lru_len, total_memory_bytes ("Total [large] memory allocated"),
    additional_pool_bytes (<=5.5), dictionary_memory_bytes; instances: ``BufferPoolInstance`` per
    ``---BUFFER POOL N`` of INDIVIDUAL BUFFER POOL INFO (5.6+ with several instances).
``RowOperations``: queries_inside, queries_in_queue, read_views_open, rw_transactions_active (8.0),
    main_thread_process_no, main_thread_id, main_thread_state, rows_inserted/updated/deleted/read,
    system_rows_* (8.0+).
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, fields
from typing import Any, Callable

PARSER_VERSION = "2"


class ParseError(ValueError):
    """The text is not SHOW ENGINE INNODB STATUS output at all."""


# ---------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class BackgroundThread:
    srv_active: int | None = None
    srv_shutdown: int | None = None
    srv_idle: int | None = None
    one_second: int | None = None
    sleeps: int | None = None
    ten_second: int | None = None
    background: int | None = None
    flush: int | None = None
    log_flush_and_writes: int | None = None


@dataclass(frozen=True, slots=True)
class SemaphoreWait:
    thread_id: int
    file: str
    line: int
    seconds: float
    latch: str | None = None  # 'mutex' | 'rw-latch'
    mode: str | None = None  # requested: S, X, SX (RW-latches)
    created_file: str | None = None
    created_line: int | None = None
    latch_name: str | None = None  # 5.6 prints '&kernel_mutex' instead of the creation site
    address: str | None = None
    holder_thread_id: int | None = None  # "a writer (thread id N)" / "reserved by thread N"
    holder_mode: str | None = None  # "exclusive", "wait exclusive", ...
    readers: int | None = None
    waiters_flag: int | None = None
    lock_var: int | None = None
    lock_word: str | None = None
    last_read_file: str | None = None
    last_read_line: int | None = None
    last_write_file: str | None = None
    last_write_line: int | None = None


@dataclass(frozen=True, slots=True)
class HeldLatch:
    address: str
    waiters: bool
    thread_id: int | None = None
    file: str | None = None
    line: int | None = None
    mode: str | None = None


@dataclass(frozen=True, slots=True)
class Semaphores:
    reservation_count: int | None = None
    signal_count: int | None = None
    mutex_spin_waits: int | None = None
    mutex_spin_rounds: int | None = None
    mutex_os_waits: int | None = None
    rw_shared_spins: int | None = None
    rw_shared_rounds: int | None = None
    rw_shared_os_waits: int | None = None
    rw_excl_spins: int | None = None
    rw_excl_rounds: int | None = None
    rw_excl_os_waits: int | None = None
    rw_sx_spins: int | None = None
    rw_sx_rounds: int | None = None
    rw_sx_os_waits: int | None = None
    waits: tuple[SemaphoreWait, ...] = ()
    held_latches: tuple[HeldLatch, ...] = ()


@dataclass(frozen=True, slots=True)
class Deadlock:
    time: str | None
    text: str
    transactions: tuple[str, ...]
    rolled_back: int | None = None


@dataclass(frozen=True, slots=True)
class ForeignKeyError:
    time: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Transaction:
    id: str  # as printed: decimal, hex, "0 1234" or MariaDB's "(0x7f...)"
    state: str  # "not started", "ACTIVE", "ACTIVE (PREPARED)", "COMMITTED IN MEMORY", ...
    active_s: int | None = None
    operation: str | None = None  # "starting index read", "fetching rows", ...
    thread_id: int | None = None
    os_thread_id: str | None = None
    query_id: int | None = None
    client: str | None = None  # host, user and state after the query id, as printed
    query: str | None = None  # verbatim, may span lines
    lock_wait: bool = False
    lock_wait_s: int | None = None
    tables_in_use: int | None = None
    tables_locked: int | None = None
    lock_structs: int | None = None
    heap_size: int | None = None
    row_locks: int | None = None
    undo_log_entries: int | None = None
    read_view: bool = False
    inside_innodb_tickets: int | None = None


@dataclass(frozen=True, slots=True)
class Transactions:
    trx_id_counter: int | None = None
    trx_id_format: str | None = None  # 'decimal' | 'hex' | 'two-word'
    purge_trx_id: int | None = None
    purge_undo_no: int | None = None
    purge_state: str | None = None
    history_list_length: int | None = None
    lock_structs_in_hash_table: int | None = None
    list_truncated: bool = False  # the server (or a tool) cut the list: "... truncated..."
    count: int = 0
    active: int = 0
    oldest_active_s: int | None = None
    lock_waits: int = 0
    tables_in_use: int = 0
    tables_locked: int = 0
    lock_structs: int = 0
    row_locks: int = 0
    undo_log_entries: int = 0
    read_views: int = 0
    transactions: tuple[Transaction, ...] = ()


@dataclass(frozen=True, slots=True)
class IoThread:
    number: int
    state: str
    purpose: str | None


@dataclass(frozen=True, slots=True)
class FileIO:
    pending_normal_aio_reads: int | None = None
    pending_normal_aio_writes: int | None = None
    pending_ibuf_aio_reads: int | None = None
    pending_log_ios: int | None = None
    pending_sync_ios: int | None = None
    pending_fsyncs_log: int | None = None
    pending_fsyncs_buffer_pool: int | None = None
    pending_fsyncs: int | None = None
    pending_preads: int | None = None
    pending_pwrites: int | None = None
    os_file_reads: int | None = None
    os_file_writes: int | None = None
    os_fsyncs: int | None = None
    io_threads: tuple[IoThread, ...] = ()


@dataclass(frozen=True, slots=True)
class InsertBuffer:
    size: int | None = None
    free_list_len: int | None = None
    seg_size: int | None = None
    merges: int | None = None
    inserts: int | None = None
    merged_recs: int | None = None
    merged_inserts: int | None = None
    merged_delete_marks: int | None = None
    merged_deletes: int | None = None
    discarded_inserts: int | None = None
    discarded_delete_marks: int | None = None
    discarded_deletes: int | None = None
    hash_table_size: int | None = None
    hash_table_partitions: int = 0
    hash_used_cells: int | None = None
    hash_node_heap_buffers: int | None = None


@dataclass(frozen=True, slots=True)
class Log:
    lsn: int | None = None
    flushed_lsn: int | None = None
    pages_flushed_lsn: int | None = None
    checkpoint_lsn: int | None = None
    log_written_lsn: int | None = None
    buffer_assigned_lsn: int | None = None
    buffer_completed_lsn: int | None = None
    dirty_pages_added_lsn: int | None = None
    min_file_id: int | None = None
    max_file_id: int | None = None
    checkpoint_age_bytes: int | None = None
    modified_age_bytes: int | None = None
    max_checkpoint_age_bytes: int | None = None
    checkpoint_age_target_bytes: int | None = None
    printed_checkpoint_age_bytes: int | None = None
    printed_modified_age_bytes: int | None = None
    pending_log_writes: int | None = None
    pending_checkpoint_writes: int | None = None
    log_ios_done: int | None = None


@dataclass(frozen=True, slots=True)
class BufferPoolInstance:
    number: int
    pages_total: int | None = None
    pool_size_bytes: int | None = None
    pages_free: int | None = None
    pages_data: int | None = None
    pages_old: int | None = None
    pages_dirty: int | None = None
    pending_reads: int | None = None
    pending_writes_lru: int | None = None
    pending_writes_flush_list: int | None = None
    pending_writes_single_page: int | None = None
    pages_made_young: int | None = None
    pages_not_young: int | None = None
    pages_read: int | None = None
    pages_created: int | None = None
    pages_written: int | None = None
    lru_len: int | None = None
    unzip_lru_len: int | None = None


@dataclass(frozen=True, slots=True)
class BufferPool:
    pages_total: int | None = None
    pool_size_bytes: int | None = None
    pages_free: int | None = None
    pages_data: int | None = None
    pages_old: int | None = None
    pages_dirty: int | None = None
    dirty_pct: float | None = None
    max_dirty_pct: float | None = None
    pending_reads: int | None = None
    pending_writes_lru: int | None = None
    pending_writes_flush_list: int | None = None
    pending_writes_single_page: int | None = None
    pages_made_young: int | None = None
    pages_not_young: int | None = None
    pages_read: int | None = None
    pages_created: int | None = None
    pages_written: int | None = None
    hit_rate_per_1000: int | None = None
    lru_len: int | None = None
    unzip_lru_len: int | None = None
    total_memory_bytes: int | None = None
    additional_pool_bytes: int | None = None
    dictionary_memory_bytes: int | None = None
    instances: tuple[BufferPoolInstance, ...] = ()


@dataclass(frozen=True, slots=True)
class RowOperations:
    queries_inside: int | None = None
    queries_in_queue: int | None = None
    read_views_open: int | None = None
    rw_transactions_active: int | None = None
    main_thread_process_no: int | None = None
    main_thread_id: int | None = None
    main_thread_state: str | None = None
    rows_inserted: int | None = None
    rows_updated: int | None = None
    rows_deleted: int | None = None
    rows_read: int | None = None
    system_rows_inserted: int | None = None
    system_rows_updated: int | None = None
    system_rows_deleted: int | None = None
    system_rows_read: int | None = None


@dataclass(frozen=True, slots=True)
class InnodbStatus:
    complete: bool
    averages_window_s: int | None
    server_time: str | None
    monitor_thread_id: str | None = None
    warnings: tuple[str, ...] = ()
    unparsed_lines: tuple[str, ...] = ()
    background_thread: BackgroundThread | None = None
    semaphores: Semaphores | None = None
    deadlock: Deadlock | None = None
    foreign_key_error: ForeignKeyError | None = None
    transactions: Transactions | None = None
    file_io: FileIO | None = None
    insert_buffer: InsertBuffer | None = None
    log: Log | None = None
    buffer_pool: BufferPool | None = None
    row_operations: RowOperations | None = None


def _builder(cls: type, leading: int | None = None) -> Callable[..., Any]:
    """A constructor for a frozen slotted record, three to four times cheaper than its own __init__.

    A frozen dataclass's __init__ stores each field through a generic object.__setattr__ call;
    thousands of waits and transactions make that the biggest cost of a parse. A plain twin with
    the same __slots__ stores them with specialised bytecode, and its __init__ ends by taking the
    record's class (CPython allows __class__ assignment between identical slot layouts): calling
    the twin returns an ordinary, equal, hashable and still frozen instance of ``cls``.

    With ``leading``, the twin takes the first ``leading`` fields and then one tuple of all the
    others: records that share those (hundreds of waits on one latch) are built without a
    20-argument call each.
    """
    names = [f.name for f in fields(cls)]
    scope: dict[str, Any] = {f"_d_{f.name}": f.default for f in fields(cls) if f.default is not MISSING}
    if leading is None:
        params = ", ".join(f"{n}=_d_{n}" if f"_d_{n}" in scope else n for n in names)
        body = "".join(f"    self.{n} = {n}\n" for n in names)
    else:
        params = ", ".join([*names[:leading], "shared"])
        body = "".join(f"    self.{n} = {n}\n" for n in names[:leading])
        body += "    (" + ", ".join(f"self.{n}" for n in names[leading:]) + ",) = shared\n"
    scope["_record_class"] = cls
    exec(f"def __init__(self, {params}):\n{body}    self.__class__ = _record_class\n", scope)  # noqa: S102
    return type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__, "__init__": scope["__init__"]})


_SemaphoreWait = _builder(SemaphoreWait)
_SemaphoreWaitOfShared = _builder(SemaphoreWait, leading=4)  # thread_id, file, line, seconds, then the latch's
_HeldLatch = _builder(HeldLatch)
_Transaction = _builder(Transaction)
_IoThread = _builder(IoThread)
_BufferPoolInstance = _builder(BufferPoolInstance)
_BackgroundThread = _builder(BackgroundThread)
_Semaphores = _builder(Semaphores)
_Deadlock = _builder(Deadlock)
_ForeignKeyError = _builder(ForeignKeyError)
_Transactions = _builder(Transactions)
_FileIO = _builder(FileIO)
_InsertBuffer = _builder(InsertBuffer)
_Log = _builder(Log)
_BufferPool = _builder(BufferPool)
_RowOperations = _builder(RowOperations)
_InnodbStatus = _builder(InnodbStatus)


# -------------------------------------------------------------------------------- line tables
#
# Each section has one table: (rule name, pattern) pairs compiled into a single anchored
# alternation, so a line costs one regex match in C however many rules there are. Named inner
# groups are the record's field names; ``\d+`` is bounded to 20 digits so garbage never reaches
# int() with thousands of digits. A rule without groups recognises a line we deliberately skip
# (per-second averages: never trusted, see DESIGN.md).

_Table = tuple[
    dict[str, "re.Pattern[str]"], "re.Pattern[str]", dict[str, tuple[str, ...]],
    tuple[tuple["re.Pattern[str]", tuple[str, ...]], ...],
]
_SPECIAL = set("\\()[]{}.*+?|^$")


def _first_chars(pattern: str) -> str | None:
    """The characters a line matching ``pattern`` can start with, or None when not simply known."""
    digits = "0123456789"
    depth = 0
    for i, char in enumerate(pattern):  # a top-level "|" means several possible starts
        if char in "()" and pattern[i - 1 : i] != "\\":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return None
    if pattern.startswith((r"\d+", r"[\d.]+")) or re.match(r"\(\?P<\w+>\\d\+\)", pattern):
        return digits
    if pattern[0] not in _SPECIAL and (len(pattern) == 1 or pattern[1] not in "?*" and pattern[1:3] != "{0"):
        return pattern[0]
    return None


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|``."""
    parts, depth, start, escaped, in_class = [], 0, 0, False, False
    for i, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    return [*parts, pattern[start:]]


def _starts(pattern: str) -> tuple[str, bool] | None:
    """The ASCII characters a match of ``pattern`` can start with, and whether it can also start with
    a character outside them (``\\d`` matches other scripts' digits); None when not simply known."""
    chars, other = "", False
    for part in _alternatives(pattern):
        if part.startswith((r"\d", r"[\d.]")):
            if part[part.index("d") + (3 if part[0] == "[" else 1):][:1] in ("?", "*", "{"):
                return None
            chars, other = chars + "0123456789" + ("." if part[0] == "[" else ""), True
            continue
        klass = re.match(r"\[((?:\w-\w|\w)+)\][+]?", part)  # [0-9A-F]+
        if klass is not None and klass.group(1).isascii() and part[klass.end():][:1] not in ("?", "*", "{"):
            spans = re.findall(r"(\w)-(\w)|(\w)", klass.group(1))
            chars += "".join(c or "".join(map(chr, range(ord(a), ord(b) + 1))) for a, b, c in spans)
            continue
        if part[:1] == "(":  # a group: what it starts with, and what follows when it is optional
            depth = 0
            for end, char in enumerate(part):
                if char in "()" and part[end - 1 : end] != "\\":
                    depth += 1 if char == "(" else -1
                    if depth == 0:
                        break
            else:
                return None
            inner = re.sub(r"^\((?:\?P<\w+>|\?:)?", "", part[:end])
            first, after = _starts(inner) if inner else None, part[end + 1:]
        elif part[:1] and (part[0] not in _SPECIAL or part[:2] in ("\\(", "\\*", "\\-")):
            size = 2 if part[0] == "\\" else 1
            first, after = (part[size - 1], False), part[size:]
        else:
            return None
        if first is None:
            return None
        chars, other = chars + first[0], other or first[1]
        if after[:1] in ("?", "*") or after[:3] == "{0,":  # optional: the rest can start the line too
            rest = re.sub(r"^(?:[?*]|\{0,\d*\})\??", "", after)
            more = _starts(rest) if rest else None
            if more is None:
                return None
            chars, other = chars + more[0], other or more[1]
    return "".join(sorted(set(chars))), other


def _table(*rules: tuple[str, str], layouts: tuple[str, ...] = ()) -> _Table:
    """Compile rules into one alternation per possible first character of a line (plus a default).

    Python's re tries alternatives one by one, so a line is only matched against the rules that
    can start with its first character: a dict lookup and one short regex per line. The rules
    keep the order they always had in each alternation (the rules _first_chars knows the start
    of, then the others), so a line two rules match goes to the same rule as before.

    ``layouts`` are the orders in which servers print a section's lines (rule names; ``name*``
    for a rule without groups that may repeat): each becomes one regex over the whole section
    with every line optional, which _scan tries first. Its groups() are all the values at once,
    and as it must match up to the end, every line was recognised.
    """
    by_char: dict[str, list[tuple[str, tuple[str, bool] | None]]] = {}
    fallback: list[tuple[str, tuple[str, bool] | None]] = []
    groups = {}
    patterns: dict[str, str] = {}
    rules_: list[tuple[str, tuple[str, bool] | None]] = []
    for name, pattern in rules:
        starts = _starts(pattern)
        bounded = pattern.replace(r"\d+", r"\d{1,20}")
        chars = _first_chars(bounded)
        # R_: rule names never clash with field names
        rule = (f"(?P<R_{name}>{bounded})", starts)
        patterns[name] = bounded
        groups[f"R_{name}"] = tuple(re.compile(bounded).groupindex)
        rules_.append(rule)
        if chars is None:
            fallback.append(rule)
        else:
            for char in chars:
                by_char.setdefault(char, []).append(rule)

    def compile_(parts: list[str]) -> re.Pattern[str]:
        return re.compile("(?:" + "|".join(parts or ["(?!)"]) + r")\s*$")

    keys = {c for _, starts in fallback if starts is not None for c in starts[0]} | by_char.keys()
    lists = {c: [alt for alt, starts in by_char.get(c, []) + fallback if starts is None or c in starts[0]] for c in keys}
    default_list = [alt for alt, starts in fallback if starts is None or starts[1]]
    table = {c: compile_(alts) for c, alts in lists.items()}
    default = compile_(default_list)
    sequences = []
    for layout in layouts:
        parts = []
        for word in layout.split():
            name = word.rstrip("*")
            line = patterns[name].replace(r"\s", r"[^\S\n]").replace("[^", "[^\n")
            # the first characters that send a line to this rule, as the per-line dict does
            alt = next(alt for alt, _ in rules_ if alt.startswith(f"(?P<R_{name}>"))
            chars = re.escape("".join(sorted(c for c in keys if alt in lists[c])))
            if alt in default_list:
                start = f"(?:(?=[{chars}])|(?![{re.escape(''.join(sorted(keys)))}]))" if chars else ""
            else:
                start = f"(?=[{chars}])"
            parts.append(f"(?:{start}(?:{line})[^\\S\\n]*\\n){'*+' if word.endswith('*') else '?+'}")
        sequence = re.compile("".join(parts) + r"(?:[^\S\n]*\n)*+\Z")
        sequences.append((sequence, tuple(sorted(sequence.groupindex, key=sequence.groupindex.__getitem__))))
    return table, default, groups, tuple(sequences)


_LSN = r"\d+(?: \d+)?"  # 5.0 and builtin 5.1 print "high low"
_RATE_LINE = ("rate", r"[\d.]+ [a-z'\-/ ]+/s(?:econd)?\b.*")

_BACKGROUND = _table(
    ("loops_new", r"srv_master_thread loops: (?P<srv_active>\d+) srv_active, (?P<srv_shutdown>\d+) "
     r"srv_shutdown, (?P<srv_idle>\d+) srv_idle"),
    ("loops_mariadb", r"srv_master_thread loops: (?P<srv_active_b>\d+) srv_active, (?P<srv_idle_b>\d+) srv_idle"),
    ("loops_old", r"srv_master_thread loops: (?P<one_second>\d+) 1_second, (?P<sleeps>\d+) sleeps, "
     r"(?P<ten_second>\d+) 10_second, (?P<background>\d+) background, (?P<flush>\d+) flush"),
    ("flushes", r"srv_master_thread log flush and writes: (?P<log_flush_and_writes>\d+)(?: +log writes only: \d+)?"),
    ("flush_kinds", r"srv_master_thread log flush: \d+ sync, \d+ async|fsync callers: .*"),  # Percona 5.0/5.1
    layouts=(
        "loops_new loops_mariadb loops_old flushes flush_kinds*",
    ),
)

_SEMAPHORE_COUNTERS = _table(
    ("os_wait", r"OS WAIT ARRAY INFO: reservation count (?P<reservation_count>\d+)"
     r"(?:, signal count (?P<signal_count>\d+))?"),
    ("os_signal", r"OS WAIT ARRAY INFO: signal count (?P<signal_count_b>\d+)"),
    ("mutex", r"Mutex spin waits (?P<mutex_spin_waits>\d+), rounds (?P<mutex_spin_rounds>\d+), "
     r"OS waits (?P<mutex_os_waits>\d+)"),
    # 5.0-5.5 print shared and exclusive on one line, without rounds
    ("rw_old", r"RW-shared spins (?P<rw_shared_spins_b>\d+), OS waits (?P<rw_shared_os_waits_b>\d+); "
     r"RW-excl spins (?P<rw_excl_spins_b>\d+), OS waits (?P<rw_excl_os_waits_b>\d+)"),
    ("rw_s", r"RW-shared spins (?P<rw_shared_spins>\d+), rounds (?P<rw_shared_rounds>\d+), "
     r"OS waits (?P<rw_shared_os_waits>\d+)"),
    ("rw_x", r"RW-excl spins (?P<rw_excl_spins>\d+), rounds (?P<rw_excl_rounds>\d+), "
     r"OS waits (?P<rw_excl_os_waits>\d+)"),
    ("rw_sx", r"RW-sx spins (?P<rw_sx_spins>\d+), rounds (?P<rw_sx_rounds>\d+), OS waits (?P<rw_sx_os_waits>\d+)"),
    ("per_wait", r"Spin rounds per wait: .*"),
    ("sub_rule", r"-{3,}"),
    ("latch_info", r"RW-LATCH INFO|Total number of rw-locks \d+"),
    ("lock_wait_timeouts", r"Lock wait timeouts \d+"),  # Percona 5.0
    layouts=(
        "lock_wait_timeouts os_wait os_signal mutex rw_old rw_s rw_x rw_sx per_wait",
    ),
)

_SEMAPHORE_WAIT = _table(
    ("rw_latch", r"(?P<mode>S|X|SX)-lock on RW-latch at (?P<address>\S+) +(?:created in file "
     r"(?P<created_file>.+) line (?P<created_line>\d+)|'(?P<latch_name>[^']*)')"),
    ("mutex", r"Mutex at (?P<address_b>\S+) +(?:created file (?P<created_file_b>.+) line "
     r"(?P<created_line_b>\d+)|'(?P<latch_name_b>[^']*)'), lock var (?P<lock_var>\d+)"),
    ("writer", r"a writer \(thread id (?P<holder_thread_id>\d+)\) has reserved it in mode +(?P<holder_mode>.+)"),
    ("readers", r"number of readers (?P<readers>\d+), waiters flag (?P<waiters_flag>\d+)"
     r"(?:, lock_word: (?P<lock_word>[0-9a-fx]+))?"),
    ("waiters", r"waiters flag (?P<waiters_flag_b>\d+)"),
    ("last_read", r"Last time read locked in file (?P<last_read_file>.+) line (?P<last_read_line>\d+)"),
    ("last_write", r"Last time write locked in file (?P<last_write_file>.+) line (?P<last_write_line>\d+)"),
    ("reserved", r"Last time reserved (?:by thread (?P<holder_thread_id_b>\d+) )?in file .+ line \d+"
     r"(?:, waiters flag (?P<waiters_flag_c>\d+))?"),
    ("ending", r"wait is ending|wait has ended"),
    layouts=(
        "rw_latch mutex writer readers waiters last_read last_write reserved ending",
    ),
)

_WAIT_START = re.compile(
    r"--Thread (\d{1,20}) has waited at (.+) line (\d{1,20}) for (\d{1,20}(?:\.\d{1,20})?) seconds the semaphore:"
)
_RW_LOCK = re.compile(r"RW-LOCK: (\S+)\s*(Waiters for the lock exist)?\s*$")
_LOCKED = re.compile(r"Locked: thread (\d{1,20}) file (.+) line (\d{1,20})\s+(\S+)\s*$")

# "high low" (two decimal words, 5.0/builtin 5.1) or one hex/decimal word; a 64-bit id has at most
# 20 digits, and "EF86 12" is no id at all (int() of a hex high word would raise)
_TRX_ID = r"\d+ \d+|[0-9A-Fa-f]{1,20}"
_TRX_HEAD = _table(
    ("counter", rf"Trx id counter (?P<trx_id_counter>{_TRX_ID})"),
    ("purge", rf"Purge done for trx's n:o < (?P<purge_trx_id>{_TRX_ID}) undo n:o < "
     rf"(?P<purge_undo_no>{_TRX_ID})(?: state: (?P<purge_state>.*))?"),
    # the 5.6 reference-manual text wraps "state: running but" / "idle History list length N"
    ("hll", r"(?:idle )?History list length (?P<history_list_length>\d+)"),
    ("hash_locks", r"Total number of lock structs in row lock hash table (?P<lock_structs_in_hash_table>\d+)"),
    ("list", r"LIST OF TRANSACTIONS FOR EACH SESSION:"),
    layouts=(
        "counter purge hll hash_locks list",
    ),
)

_TRX_START = re.compile(
    r"---TRANSACTION (\(0x[0-9a-f]+\)|[0-9A-Fa-f]{1,20}(?: \d{1,20})?), "
    r"(not started|ACTIVE(?: \(PREPARED\))?|[A-Z][A-Z ]*[A-Z])(?: (\d{1,20}) sec)?"
    r"(?:, process no (\d{1,20}), OS thread id (\d{1,20}))?,? ?(.*)$"
)
_TRX_LINE = _table(
    ("tables", r"mysql tables in use (?P<tables_in_use>\d+), locked (?P<tables_locked>\d+)"),
    ("locks", r"(?P<lock_wait>LOCK WAIT )?(?P<lock_structs>\d+) lock struct\(s\), heap size (?P<heap_size>\d+)"
     r"(?:, (?P<row_locks>\d+) row lock\(s\))?(?:, undo log entries (?P<undo_log_entries>\d+))?"),
    ("thread", r"(?:MySQL|MariaDB) thread id (?P<thread_id>\d+), (?:OS thread handle (?P<os_thread_id>\S+), )?"
     r"query id (?P<query_id>\d+) ?(?P<client>.*)"),
    ("read_view", r"Trx read view will not see trx with id >= .*"),
    # MariaDB 10.6+ prints the wait in microseconds ("2500302 us"), MySQL in seconds
    ("waiting", r"------- TRX HAS BEEN WAITING (?:(?P<lock_wait_s>\d+) SEC|(?P<lock_wait_us>\d+) us) "
     r"FOR THIS LOCK TO BE GRANTED:"),
    ("lock_detail", r"(?:RECORD LOCKS|TABLE LOCK|Record lock,) .*"),
    ("wait_stats", r"Trx #rec lock waits .*|Trx total rec lock wait time .*|Trx has approximately .*"),
)

_FILE_IO = _table(
    ("thread", r"I/O thread (?P<io_number>\d+) state: (?P<io_rest>.*)"),
    ("aio", r"Pending normal aio reads: ?(?P<pending_normal_aio_reads>\d+)? ?(?:\[(?P<read_list>[\d, ]*)\])? ?, "
     r"aio writes: ?(?P<pending_normal_aio_writes>\d+)? ?(?:\[(?P<write_list>[\d, ]*)\])? ?,?"),
    # 8.0 leaves these empty: " ibuf aio reads:, log i/o's:"
    ("aio2", r" ?ibuf aio reads: ?(?P<pending_ibuf_aio_reads>\d+)?,?(?: log i/o's: ?(?P<pending_log_ios>\d+)?,?)?"
     r"(?: sync i/o's: ?(?P<pending_sync_ios>\d+)?)?"),
    ("fsync", r"Pending flushes \(fsync\) log: (?P<pending_fsyncs_log>\d+); buffer pool: (?P<pending_fsyncs_buffer_pool>\d+)"),
    ("fsync_total", r"Pending flushes \(fsync\): (?P<pending_fsyncs>\d+)"),  # MariaDB 10.5+
    ("os", r"(?P<os_file_reads>\d+) OS file reads, (?P<os_file_writes>\d+) OS file writes, (?P<os_fsyncs>\d+) OS fsyncs"),
    ("fsync_callers", r"fsync callers: .*"),  # Percona 5.1
    ("preads", r"(?P<pending_preads>\d+) pending preads, (?P<pending_pwrites>\d+) pending pwrites"),
    _RATE_LINE,
    layouts=(
        "aio aio2 fsync fsync_total os preads rate*",
    ),
)
_IO_PURPOSE = re.compile(r"(.*?)\s*\(([^()]*)\)(?:.*)$")
_IO_THREAD = re.compile(r"I/O thread (\d{1,19}) state: (.*?)\s*\(([^()]*)\)(?:.*)$")
# (.*?)\s* of the line pattern, without its slow lazy steps, when the first "(" opens the purpose:
# the state is what comes before it, less the spaces (rstrip); a line this does not take is read
# on its own
_IO_THREADS = re.compile(r"^I/O thread (\d{1,19}) state: ([^(\n]*)\(([^()\n]*)\).*$", re.MULTILINE)

_INSERT_BUFFER = _table(
    ("ibuf", r"Ibuf(?: for space \d+)?: size (?P<size>\d+), free list len (?P<free_list_len>\d+), "
     r"seg size (?P<seg_size>\d+),(?: (?P<merges>\d+) merges| is empty)?"),
    ("old_merges", r"(?P<inserts>\d+) inserts, (?P<merged_recs>\d+) merged recs, (?P<merges_b>\d+) merges"),
    ("merged_hdr", r"merged operations:"),
    ("discarded_hdr", r"discarded operations:"),
    ("ops", r" ?insert (?P<op_insert>\d+), delete mark (?P<op_delete_mark>\d+), delete (?P<op_delete>\d+)"),
    ("hash", r"Hash table size (?P<hash_size>\d+),(?: used cells (?P<hash_used_cells>\d+),)? node heap has "
     r"(?P<hash_buffers>\d+) buffer\(s\)"),
    _RATE_LINE,
)

_LOG = _table(
    ("lsn", rf"Log sequence number +(?P<lsn>{_LSN})"),
    ("assigned", r"Log buffer assigned up to +(?P<buffer_assigned_lsn>\d+)"),
    ("completed", r"Log buffer completed up to +(?P<buffer_completed_lsn>\d+)"),
    ("written", r"Log written up to +(?P<log_written_lsn>\d+)"),
    ("flushed", rf"Log flushed up to +(?P<flushed_lsn>{_LSN})"),
    ("dirty_added", r"Added dirty pages up to +(?P<dirty_pages_added_lsn>\d+)"),
    ("pages_flushed", rf"Pages flushed up to +(?P<pages_flushed_lsn>{_LSN})"),
    ("checkpoint", rf"Last checkpoint at +(?P<checkpoint_lsn>{_LSN})"),
    ("min_file", r"Log minimum file id is +(?P<min_file_id>\d+)"),  # 8.0.30+
    ("max_file", r"Log maximum file id is +(?P<max_file_id>\d+)"),
    # Percona Server / XtraDB only
    ("max_age", r"Max checkpoint age +(?P<max_checkpoint_age_bytes>\d+)"),
    ("age_target", r"Checkpoint age target +(?P<checkpoint_age_target_bytes>\d+)"),
    ("modified_age", r"Modified age(?: no less than)? +(?P<printed_modified_age_bytes>\d+)"),
    ("age", r"Checkpoint age +(?P<printed_checkpoint_age_bytes>\d+)"),
    ("pending", r"(?P<pending_log_writes>\d+) pending log (?:writes|flushes), "
     r"(?P<pending_checkpoint_writes>\d+) pending chkp writes"),
    ("ios", r"(?P<log_ios_done>\d+) log i/o's done, .*"),
    # Percona 5.1 diagnostic counters
    ("callers", r"(?:log sync callers|log sync syncers|fsync callers): .*"),
    layouts=(
        "lsn assigned completed written flushed dirty_added pages_flushed checkpoint min_file max_file max_age age_target modified_age age pending ios callers*",
        "lsn assigned completed written flushed dirty_added pages_flushed checkpoint min_file max_file modified_age age max_age pending ios callers*",
    ),
)

_BUFFER_POOL = _table(
    ("mem_old", r"Total memory allocated (?P<total_memory_bytes>\d+); in additional pool allocated "
     r"(?P<additional_pool_bytes>\d+)"),
    ("mem", r"Total (?:large )?memory allocated (?P<total_memory_bytes_b>\d+)"),
    ("dict_mem", r"Dictionary memory allocated (?P<dictionary_memory_bytes>\d+)"),
    ("hash_tables", r"Internal hash tables \(constant factor \+ variable factor\)|    [A-Za-z_][A-Za-z_ ]+ +\d+.*"),
    ("size", r"Buffer pool size +(?P<pages_total>\d+)"),
    ("size_bytes", r"Buffer pool size, bytes +(?P<pool_size_bytes>\d+)"),
    ("free", r"Free buffers +(?P<pages_free>\d+)"),
    ("data", r"Database pages +(?P<pages_data>\d+)"),
    ("old", r"Old database pages +(?P<pages_old>\d+)"),
    ("dirty", r"Modified db pages +(?P<pages_dirty>\d+)"),
    ("dirty_pct", r"Percent of dirty pages\(LRU & free pages\): (?P<dirty_pct>[\d.]+)"),
    ("max_dirty", r"Max dirty pages percent: (?P<max_dirty_pct>[\d.]+)"),
    ("pending_reads", r"Pending reads +(?P<pending_reads>\d+)"),
    ("pending_writes", r"Pending writes: LRU (?P<pending_writes_lru>\d+), flush list (?P<pending_writes_flush_list>\d+)"
     r"(?:, single page (?P<pending_writes_single_page>\d+))?"),
    ("young", r"Pages made young (?P<pages_made_young>\d+), not young (?P<pages_not_young>\d+)"),
    ("pages", r"Pages read (?P<pages_read>\d+), created (?P<pages_created>\d+), written (?P<pages_written>\d+)"),
    ("hit_rate", r"Buffer pool hit rate (?P<hit_rate_per_1000>\d+) / 1000.*"),
    ("no_gets", r"No buffer pool page gets since the last printout"),
    ("read_ahead", r"Pages read ahead .*|[\d.]+/s"),  # 5.6 manual text wraps the read-ahead line
    ("lru", r"LRU len: (?P<lru_len>\d+), unzip_LRU len: (?P<unzip_lru_len>\d+)"),
    ("io_sum", r"I/O sum\[\d+\]:cur\[\d+\], unzip sum\[\d+\]:cur\[\d+\]"),
    ("read_view_mem", r"Total memory allocated by read views \d+"),  # Percona
    ("rule", r"-{3,}"),
    _RATE_LINE,
    layouts=(
        "mem_old mem read_view_mem hash_tables* dict_mem hash_tables* size size_bytes free data old dirty dirty_pct max_dirty pending_reads pending_writes young rate* pages rate* hit_rate no_gets read_ahead* lru io_sum rule*",
    ),
)
_POOL_INSTANCE = re.compile(r"---BUFFER POOL (\d{1,20})\s*$")

_ROW_OPERATIONS = _table(
    ("queries", r"(?P<queries_inside>\d+) queries inside InnoDB, (?P<queries_in_queue>\d+) queries in queue"),
    ("views", r"(?P<read_views_open>\d+) read views open inside InnoDB"),
    ("rw_trx", r"(?P<rw_transactions_active>\d+) (?:RW )?transactions active inside InnoDB"),
    ("descriptors", r"\d+ out of \d+ descriptors used"),  # Percona 5.5
    ("main_old", r"Main thread (?:process no\. (?P<main_thread_process_no>\d+), )?id (?P<main_thread_id>\d+), "
     r"state: ?(?P<main_thread_state>.*)"),
    ("main_new", r"Process ID=(?P<main_thread_process_no_b>\d+), Main thread ID=(?P<main_thread_id_b>\d+) ?, "
     r"state[:=] ?(?P<main_thread_state_b>.*)"),
    ("state_wrapped", r"state: (?P<main_thread_state_c>.+)"),  # reference-manual line wrap
    ("rows", r"Number of rows inserted (?P<rows_inserted>\d+), updated (?P<rows_updated>\d+), "
     r"deleted (?P<rows_deleted>\d+), read (?P<rows_read>\d+)"),
    ("sys_rows", r"Number of system rows inserted (?P<system_rows_inserted>\d+), updated (?P<system_rows_updated>\d+), "
     r"deleted (?P<system_rows_deleted>\d+), read (?P<system_rows_read>\d+)"),
    # Percona 5.5 prints the oldest read view here
    ("oldest_view", r"---OLDEST VIEW---|Normal read view|Read view (?:low|up) limit trx (?:n:o|id) [0-9A-F]+"
     r"|Read view individually stored trx ids:|Read view trx id [0-9A-F]+|-{3,}|[0-9A-F]+(?: [0-9A-F]+)*"),
    _RATE_LINE,
    layouts=(
        "queries views rw_trx descriptors oldest_view* main_old main_new state_wrapped rows rate* sys_rows rate*",
    ),
)

_HEADER = re.compile(
    r"\s*(\d{6} +\d{1,2}:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?: +(\S+))? +INNODB MONITOR OUTPUT\s*$"
)
_SPACES = re.compile(" +")
_AVERAGES = re.compile(r"Per second averages calculated from the last (\d{1,20}) seconds")
_WRAPPER = re.compile(
    r"\*+ \d+\. row \*+|\s*Type: InnoDB|\s*Name:.*|Status:\s*|mysql> .*|Type\s+Name\s+Status.*|InnoDB\s*|=+\s*"
)
_EVENT_TIME = re.compile(r"\s*(\d{6} +\d{1,2}:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
# searched in "\n" + text, where a match starts where its line starts in the text: the literal
# "\n*** " lets re skip ahead, where "^" in MULTILINE mode tries every position of a long dump
_DEADLOCK_MARK = re.compile(r"\n\*\*\* (?:(\(\d+\) TRANSACTION:)|WE ROLL BACK)")
_ROLLED_BACK = re.compile(r"\*\*\* WE ROLL BACK TRANSACTION \((\d+)\)")


def _layout_match(text: str, table: _Table) -> tuple[re.Pattern[str], tuple[str, ...], tuple[Any, ...]] | None:
    """The first of the table's layouts that matches the whole of ``text``: the layout, its group
    names and the groups' values; None when none does (or the table has none)."""
    sequences = table[3]
    if sequences:
        whole = text if text[-1:] == "\n" else text + "\n"  # a layout's lines each end with one
        for sequence, names in sequences:
            m = sequence.match(whole)
            if m is not None:
                return sequence, names, m.groups()
    return None


def _scan(text: str, table: _Table, values: dict[str, str], unparsed: list[str]) -> None:
    """Match every line of ``text`` against the section table; captured groups land in ``values``."""
    layout = _layout_match(text, table)
    if layout is None:
        _scan_lines(text, table, values, unparsed)
        return
    _, names, found = layout
    values.update({name: value for name, value in zip(names, found) if value is not None})


# (id of a layout regex, id of an _int_fields dict) -> (group index, field) of its integer groups,
# last group first: assigned in that order, the first of two spellings printed wins, as in _ints
_INT_SPECS: dict[tuple[int, int], tuple[tuple[int, str], ...]] = {}


def _scan_ints(
    text: str, table: _Table, allowed: dict[str, str], unparsed: list[str], values: dict[str, str] | None = None
) -> dict[str, int | None]:
    """_scan, then _ints(values, allowed); when a layout matches, the integers come straight from its
    groups, without the captured text going through ``values`` (filled only when given)."""
    layout = _layout_match(text, table)
    if layout is None:
        scanned: dict[str, str] = {} if values is None else values
        _scan_lines(text, table, scanned, unparsed)
        return _ints(scanned, allowed)
    sequence, names, found = layout
    if values is not None:
        values.update({name: value for name, value in zip(names, found) if value is not None})
    spec = _INT_SPECS.get((id(sequence), id(allowed)))
    if spec is None:
        spec = _INT_SPECS[(id(sequence), id(allowed))] = tuple(
            (index, allowed[name]) for index, name in reversed(list(enumerate(names))) if name in allowed
        )
    try:
        return {field: int(raw) for index, field in spec if (raw := found[index]) is not None}
    except ValueError:  # a two-word "high low" number
        return _ints({name: value for name, value in zip(names, found) if value is not None}, allowed)


def _scan_lines(text: str, table: _Table, values: dict[str, str], unparsed: list[str]) -> None:
    """_scan's line-by-line reading, for a section that matches none of its table's layouts."""
    by_char, default, groups, _ = table
    get = by_char.get
    for line in text.split("\n"):
        m = get(line[:1], default).match(line)
        if m is None:
            if line and not line.isspace():
                unparsed.append(line)
            continue
        names = groups[m.lastgroup]  # type: ignore[index]
        if len(names) == 1:
            value = m.group(names[0])
            if value is not None:
                values[names[0]] = value
        elif names:
            for name, value in zip(names, m.group(*names)):
                if value is not None:
                    values[name] = value


def _is_ascii_number(text: str) -> bool:
    """isdigit() alone accepts '²', which int() rejects."""
    return text.isascii() and text.isdigit()


def _num(text: str | None) -> int | None:
    if text is None:
        return None
    if " " in text:  # two-word LSN or trx id: high * 2^32 + low
        high, low = text.split(" ", 1)
        return (int(high) << 32) + int(low)
    return int(text)


def _ints(values: dict[str, str], allowed: dict[str, str]) -> dict[str, int | None]:
    """Integer fields from captured text; ``name_b``/``name_c`` are other versions' spellings of ``name``."""
    try:  # in one comprehension; reversed, so that of two spellings both printed the first one wins
        return {allowed[name]: int(raw) for name, raw in reversed(values.items()) if name in allowed}
    except ValueError:  # a two-word "high low" number (or one the loop below would not convert)
        pass
    out: dict[str, int | None] = {}
    for name, raw in values.items():
        field = allowed.get(name)
        if field is not None and field not in out:
            out[field] = _num(raw) if " " in raw else int(raw)
    return out


def _int_fields(cls: type | tuple[str, ...], exclude: tuple[str, ...] = ()) -> dict[str, str]:
    """Captured group name (``name``, ``name_b``, ``name_c``) -> integer field name."""
    if isinstance(cls, tuple):
        names = cls
    else:
        names = tuple(f.name for f in fields(cls) if f.type == "int | None" and f.name not in exclude)
    return {alias: name for name in names for alias in (name, f"{name}_b", f"{name}_c")}


# ---------------------------------------------------------------------------------- sections


_BACKGROUND_INTS = _int_fields(BackgroundThread)


def _parse_background(text: str, unparsed: list[str]) -> BackgroundThread:
    return _BackgroundThread(**_scan_ints(text, _BACKGROUND, _BACKGROUND_INTS, unparsed))


_SEMAPHORE_INTS = _int_fields(Semaphores)


# splits the section at each "\n--Thread " into the text before the first wait, then for each wait
# its thread, file, line and seconds (None when the line is not the usual form: a file name
# without spaces, nothing after "semaphore:") and the lines up to the next one, in one C call over a
# pile-up of thousands of waits; (\S+) where the line rule has (.+) does not backtrack from the
# end of every line
_WAIT_SPLIT = re.compile(
    r"\n--Thread (?:(\d{1,20}) has waited at (\S+) line (\d{1,20}) for (\d{1,20}(?:\.\d{1,20})?) seconds "
    r"the semaphore:(?=\n|\Z))?"
)
_COUNTER_PREFIXES = ("OS WAIT", "Mutex spin", "RW-s", "RW-excl", "Spin ")


def _is_counter_line(line: str) -> bool:
    """A semaphore counter line (the first-character test saves the prefix tests on most lines)."""
    return line[:1] in "OMRS" and line.startswith(_COUNTER_PREFIXES)


def _parse_semaphores(text: str, unparsed: list[str]) -> Semaphores:
    if "RW-LOCK: " in text or "Locked: " in text:  # 8.1+ RW-LATCH INFO: line by line
        return _parse_semaphore_lines(text.split("\n"), unparsed)
    parts = _WAIT_SPLIT.split("\n" + text) if "--Thread " in text else [text]
    if len(parts) == 1:  # no waits: the counters only
        return _Semaphores(**_scan_ints(text, _SEMAPHORE_COUNTERS, _SEMAPHORE_INTS, unparsed))
    thread_ids, files, file_lines, seconds, rests = parts[1::5], parts[2::5], parts[3::5], parts[4::5], parts[5::5]
    if None in thread_ids:  # a wait line not in the usual form: read line by line
        return _parse_semaphore_lines(text.split("\n"), unparsed)
    # in a pile-up hundreds of threads wait on the same latch with the same holder: the lines
    # after the --Thread line repeat verbatim, so each distinct block is read once
    fields_of: dict[str, tuple[Any, ...]] = {}
    unparsed_of: dict[str, list[str]] = {}
    counters_of: dict[str, list[str]] = {}
    for rest in dict.fromkeys(rests):
        # rest starts with the newline ending the --Thread line; counter lines printed after the
        # waits are read with the counters
        wait_lines, counters = [], []
        for line in rest.split("\n")[1:]:
            (counters if _is_counter_line(line) else wait_lines).append(line)
        if counters:
            counters_of[rest] = counters
        not_read: list[str] = []
        fields_of[rest] = _wait_fields("\n".join(wait_lines), not_read)
        if not_read:
            unparsed_of[rest] = not_read
    counter_lines = [parts[0][1:]] if parts[0] else []
    if unparsed_of or counters_of:  # in the order of the waits, as each block is read
        # (5.0-5.5 print the counters after the last wait: usually one block of thousands)
        for rest in [rest for rest in rests if rest in unparsed_of or rest in counters_of]:
            unparsed.extend(unparsed_of.get(rest, ()))
            counter_lines.extend(counters_of.get(rest, ()))
    # a pile-up repeats a few line numbers and durations: each is converted once
    line_of = {line: int(line) for line in set(file_lines)}
    seconds_of = {secs: float(secs) for secs in set(seconds)}
    waits = [
        _SemaphoreWaitOfShared(thread_id, file, line, secs, fields_of[rest])
        for thread_id, file, line, secs, rest in zip(
            map(int, thread_ids), files, map(line_of.__getitem__, file_lines), map(seconds_of.__getitem__, seconds),
            rests,
        )
    ]
    counters = _scan_ints("\n".join(counter_lines), _SEMAPHORE_COUNTERS, _SEMAPHORE_INTS, unparsed)
    return _Semaphores(**counters, waits=tuple(waits))


def _parse_semaphore_lines(lines: list[str], unparsed: list[str]) -> Semaphores:
    waits: list[SemaphoreWait] = []
    held: list[HeldLatch] = []
    wait_lines: list[str] = []
    wait_head: re.Match[str] | None = None
    counter_lines: list[str] = []
    seen: dict[tuple[str, ...], tuple[tuple[Any, ...], tuple[str, ...]]] = {}
    for line in lines:
        first = line[:1]  # saves the prefix tests on most lines of a pile-up of thousands
        if first == "-" and line.startswith("--Thread "):
            if wait_head is not None:
                waits.append(_semaphore_wait(wait_head, wait_lines, seen, unparsed))
            wait_head, wait_lines = _WAIT_START.match(line), []
            if wait_head is None:
                unparsed.append(line)
        elif first in "RL" and line.startswith(("RW-LOCK: ", "Locked: ")):
            _held_latch(line, held, unparsed)
        elif wait_head is not None and not _is_counter_line(line):
            wait_lines.append(line)
        else:
            counter_lines.append(line)
    if wait_head is not None:
        waits.append(_semaphore_wait(wait_head, wait_lines, seen, unparsed))
    counters = _scan_ints("\n".join(counter_lines), _SEMAPHORE_COUNTERS, _SEMAPHORE_INTS, unparsed)
    return _Semaphores(**counters, waits=tuple(waits), held_latches=tuple(held))


_WAIT_INTS = _int_fields(("created_line", "holder_thread_id", "readers", "waiters_flag", "lock_var",
                          "last_read_line", "last_write_line"))


def _semaphore_wait(
    head: re.Match[str], lines: list[str], seen: dict[tuple[str, ...], tuple[tuple[Any, ...], tuple[str, ...]]],
    unparsed: list[str],
) -> SemaphoreWait:
    """One ``--Thread ... has waited`` block: the latch line, then holder and history lines.

    In a pile-up hundreds of threads wait on the same latch with the same holder: the lines
    after the ``--Thread`` line repeat verbatim, so each distinct block is parsed once per status.
    """
    key = tuple(lines)
    known = seen.get(key)
    if known is None:
        before = len(unparsed)
        known = seen[key] = (_wait_fields("\n".join(lines), unparsed), tuple(unparsed[before:]))
    else:
        unparsed.extend(known[1])
    thread_id, file, line, seconds = head.groups()
    return _SemaphoreWait(int(thread_id), file, int(line), float(seconds), *known[0])


def _wait_fields(text: str, unparsed: list[str]) -> tuple[Any, ...]:
    """SemaphoreWait's fields from ``latch`` on, in declaration order."""
    values: dict[str, str] = {}
    _scan(text, _SEMAPHORE_WAIT, values, unparsed)
    if "mode" in values:
        latch: str | None = "rw-latch"
    elif "address_b" in values:
        latch = "mutex"
    else:
        latch = None
    ints = _ints(values, _WAIT_INTS).get
    get = values.get
    return (
        latch, get("mode"), get("created_file") or get("created_file_b"), ints("created_line"),
        get("latch_name") or get("latch_name_b"), get("address") or get("address_b"), ints("holder_thread_id"),
        get("holder_mode"), ints("readers"), ints("waiters_flag"), ints("lock_var"), get("lock_word"),
        get("last_read_file"), ints("last_read_line"), get("last_write_file"), ints("last_write_line"),
    )


def _held_latch(line: str, held: list[HeldLatch], unparsed: list[str]) -> None:
    """8.1+ RW-LATCH INFO: ``RW-LOCK: addr [Waiters...]`` then ``Locked: thread T file F line L MODE``."""
    m = _RW_LOCK.match(line)
    if m is not None:
        held.append(_HeldLatch(m.group(1), m.group(2) is not None))
        return
    m = _LOCKED.match(line)
    if m is None or not held:
        unparsed.append(line)
        return
    last = held[-1]
    if last.thread_id is None:
        held.pop()
    # an S-latch can have several holders: one Locked: line each, one record each
    held.append(_HeldLatch(last.address, last.waiters, int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)))


def _event_time(text: str) -> str | None:
    """The time on the first line that is not blank (\\s* of _EVENT_TIME skips the blank ones)."""
    m = _EVENT_TIME.match(text)
    return m.group(1) if m else None


def _parse_deadlock(text: str, unparsed: list[str]) -> Deadlock:
    """Each ``*** (N) TRANSACTION:`` block runs to the next ``***`` marker; found by one regex scan of
    the text, since a deadlock dump (lock bytes, long queries) can be most of a status."""
    marks = list(_DEADLOCK_MARK.finditer("\n" + text))
    blocks: list[str] = []
    rolled_back = None
    for k, mark in enumerate(marks):
        if mark.group(1) is None:  # *** WE ROLL BACK
            m = _ROLLED_BACK.match(text, mark.start())
            rolled_back = int(m.group(1)) if m else None
        else:
            end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
            blocks.append(text[mark.start():end].strip("\n"))
    return _Deadlock(time=_event_time(text), text=text.strip("\n"), transactions=tuple(blocks),
                     rolled_back=rolled_back)


def _parse_foreign_key_error(text: str, unparsed: list[str]) -> ForeignKeyError:
    return _ForeignKeyError(time=_event_time(text), text=text.strip("\n"))


def _transaction_ids(text: str | None, old_header: bool) -> tuple[int | None, str | None]:
    """Trx ids: "high low" on 5.0/builtin 5.1, hex on 5.1 plugin/5.5 (old YYMMDD header), else decimal."""
    if text is None:
        return None, None
    if " " in text:
        return _num(text), "two-word"
    if old_header or not _is_ascii_number(text):
        return int(text, 16), "hex"
    return int(text), "decimal"


# every ---TRANSACTION block: the header's fields (as _TRX_START), then either the fields of the
# usual idle session's one thread line (as _TRX_THREAD_LINE), with the locks line above it of a
# session idle inside a transaction, or the text of the lines under it
_TRXS = re.compile(
    r"^---TRANSACTION (\(0x[0-9a-f]+\)|[0-9A-Fa-f]{1,20}(?: \d{1,20})?), "
    r"(not started|ACTIVE(?: \(PREPARED\))?|[A-Z][A-Z ]*[A-Z])(?: (\d{1,20}) sec)?"
    r"(?:, process no (\d{1,20}), OS thread id (\d{1,20}))?,? ?([^\n]*)$"
    # one line under the header, the thread line (its [^\n]*+ cannot reach into a second line, so
    # the lookahead after it fails at once when more lines follow)
    r"(?:"
    # ... or a session between statements of an open transaction: its locks line, then the thread
    # line (the same lines as _TRX_LINE's "locks", without LOCK WAIT, and "thread")
    r"(?:\n(\d{1,20}) lock struct\(s\), heap size (\d{1,20})(?:, (\d{1,20}) row lock\(s\))?"
    r"(?:, undo log entries (\d{1,20}))?[ \t]*)?"
    r"\n(?:MySQL|MariaDB) thread id (\d{1,20}), (?:OS thread handle (\S+), )?query id (\d{1,20}) ?([^\n]*+)"
    r"(?=\n---TRANSACTION )|((?:\n(?!---TRANSACTION )[^\n]*)*))", re.MULTILINE
)

_TRUNCATED = re.compile(r"\n\.\.\. truncated\.\.\.[^\n]*(?:\n(?!---TRANSACTION )[^\n]*)*")


def _parse_transactions(body: str, unparsed: list[str], old_header: bool = False) -> Transactions:
    """The list in one findall over the section's text; a header it does not take sends the whole
    section to the line-by-line reader."""
    truncated = False
    if "... truncated..." in body and "\n... truncated..." in "\n" + body:
        # the server (or a tool) cut the list: what follows, up to the next ---TRANSACTION, is
        # a fragment of a cut transaction, dropped; the transaction before ends where the cut is
        truncated, text = True, _TRUNCATED.sub("", "\n" + body)[1:]  # what is left after a cut starts a line
    else:
        text = body
    first = 0 if text.startswith("---TRANSACTION ") else text.find("\n---TRANSACTION ") + 1
    if not first and not text.startswith("---TRANSACTION "):  # no list printed, or an empty one
        first = len(text)
    found = _TRXS.findall(text, first)
    if len(found) != ("\n" + text[first:]).count("\n---TRANSACTION "):  # a garbled header
        return _parse_transactions_lines(body.split("\n"), unparsed, old_header)
    trxs: list[Transaction] = []
    seen: dict[str, tuple[tuple[Any, ...], tuple[str, ...]]] = {}
    uses: dict[str, int] = {}  # how many transactions have each body, for the sums
    active = 0
    oldest: int | None = None
    append = trxs.append
    # lock structs, row locks, undo entries of the sessions read by the pattern alone
    pattern_sums = [0, 0, 0]
    for (trx_id, state, secs, _, os_thread, rest, structs, heap, rows, entries, thread_id, handle, query_id, client,
         body_text) in found:
        active_s = int(secs) if secs else None
        if state[:6] == "ACTIVE":
            active += 1
            if active_s is not None and (oldest is None or active_s > oldest):
                oldest = active_s
        operation, tickets = _operation_and_tickets(rest) if rest else (None, None)
        if thread_id:  # a thread line only (its ids unique to it), or with the locks line above
            if structs:
                structs, heap = int(structs), int(heap)
                rows, entries = int(rows) if rows else None, int(entries) if entries else None
                pattern_sums[0] += structs
                pattern_sums[1] += rows or 0
                pattern_sums[2] += entries or 0
            else:
                structs = heap = rows = entries = None
            append(_Transaction(
                trx_id, state, active_s, operation, int(thread_id), handle or os_thread or None,
                int(query_id), client.strip() or None, None, False, None, None, None, structs, heap, rows, entries,
                False, tickets,
            ))
            continue
        known = seen.get(body_text)
        if known is None:
            before = len(unparsed)
            known = seen[body_text] = (_transaction_body(body_text.split("\n"), _TRX, unparsed),
                                       tuple(unparsed[before:]))
            uses[body_text] = 1
        else:
            uses[body_text] += 1
            if known[1]:
                unparsed.extend(known[1])
        (thread, handle, query_id, client, query, lock_wait, lock_wait_s, tables_in_use, tables_locked,
         lock_structs, heap_size, row_locks, undo, read_view) = known[0]
        append(_Transaction(
            trx_id, state, active_s, operation, thread,
            handle if handle is not None else os_thread or None, query_id, client, query, lock_wait, lock_wait_s,
            tables_in_use, tables_locked, lock_structs, heap_size, row_locks, undo, read_view, tickets,
        ))
    values: dict[str, str] = {}
    head = text[:first]
    _scan(head, _TRX_HEAD, values, unparsed)
    listed = truncated or bool(trxs) or "\nLIST OF TRANSACTIONS" in "\n" + head
    sums = [active, oldest, 0, 0, 0, *pattern_sums, 0]
    for body_text, count in uses.items():  # lock_wait, tables_in_use, tables_locked, lock_structs, row_locks, undo, read_view
        fields = seen[body_text][0]
        for k, value in enumerate((fields[5], fields[7], fields[8], fields[9], fields[11], fields[12], fields[13]), 2):
            if value:
                sums[k] += value * count
    return _summarise_transactions(values, tuple(trxs), listed, old_header, truncated, sums)


def _parse_transactions_lines(lines: list[str], unparsed: list[str], old_header: bool = False) -> Transactions:
    head: list[str] = []
    trxs: list[Transaction] = []
    current: list[str] | None = None  # the lines of the transaction being read, its header first
    listed = truncated = False
    seen: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[str, ...]]] = {}
    for line in lines:
        if line.startswith("---TRANSACTION "):
            if current is not None:
                trxs.append(_transaction(current, seen, unparsed))
            current = [line]
            listed = True
        elif line.startswith("... truncated..."):
            # what follows up to the next ---TRANSACTION is a fragment of a cut transaction
            if current is not None:
                trxs.append(_transaction(current, seen, unparsed))
            current, truncated = None, True
        elif current is not None:
            current.append(line)
        elif not truncated:
            head.append(line)
            listed = listed or line.startswith("LIST OF TRANSACTIONS")
    if current is not None:
        trxs.append(_transaction(current, seen, unparsed))
    values: dict[str, str] = {}
    _scan("\n".join(head), _TRX_HEAD, values, unparsed)
    return _summarise_transactions(values, tuple(trxs), listed or truncated, old_header, truncated)


def _summarise_transactions(
    values: dict[str, str], trxs: tuple[Transaction, ...], listed: bool, old_header: bool, truncated: bool,
    sums: list[Any] | None = None,
) -> Transactions:
    """``sums``: active, oldest_active_s, lock_waits, tables_in_use, tables_locked, lock_structs, row_locks,
    undo_log_entries, read_views when the caller added them up already."""
    counter, id_format = _transaction_ids(values.get("trx_id_counter"), old_header)
    purge_trx, _ = _transaction_ids(values.get("purge_trx_id"), old_header)
    purge_undo, _ = _transaction_ids(values.get("purge_undo_no"), old_header)
    active = lock_waits = tables_in_use = tables_locked = lock_structs = row_locks = undo = read_views = 0
    oldest: int | None = None
    if sums is not None:
        active, oldest, lock_waits, tables_in_use, tables_locked, lock_structs, row_locks, undo, read_views = sums
        trxs_to_add: tuple[Transaction, ...] = ()
    else:
        trxs_to_add = trxs
    for t in trxs_to_add:  # one pass: lists of thousands of transactions are common
        if t.state.startswith("ACTIVE"):
            active += 1
            if t.active_s is not None and (oldest is None or t.active_s > oldest):
                oldest = t.active_s
        lock_waits += t.lock_wait
        read_views += t.read_view
        tables_in_use += t.tables_in_use or 0
        tables_locked += t.tables_locked or 0
        lock_structs += t.lock_structs or 0
        row_locks += t.row_locks or 0
        undo += t.undo_log_entries or 0
    return _Transactions(
        trx_id_counter=counter, trx_id_format=id_format, purge_trx_id=purge_trx, purge_undo_no=purge_undo,
        purge_state=values.get("purge_state"),
        history_list_length=_num(values.get("history_list_length")),
        lock_structs_in_hash_table=_num(values.get("lock_structs_in_hash_table")),
        list_truncated=truncated, count=len(trxs), active=active,
        # no active transaction in a printed list: the oldest is 0 s old, not unknown
        oldest_active_s=oldest if oldest is not None else (0 if listed else None),
        lock_waits=lock_waits, tables_in_use=tables_in_use, tables_locked=tables_locked, lock_structs=lock_structs,
        row_locks=row_locks, undo_log_entries=undo, read_views=read_views, transactions=trxs,
    )


def _transaction_head(line: str, unparsed: list[str]) -> tuple[Any, ...]:
    """id, state, active_s, operation, os_thread_id, inside_innodb_tickets of a ``---TRANSACTION`` line,
    and how to read the unrecognised lines that follow (as lock dumps when the header is garbled)."""
    m = _TRX_START.match(line)
    if m is None:
        unparsed.append(line)
        return line[15:].split(",")[0], "unknown", None, None, None, None, _LOCKS
    trx_id, state, secs, _process_no, os_thread, rest = m.groups()
    if not rest:  # most headers ("not started", "ACTIVE 3 sec") end here
        return trx_id, state, int(secs) if secs else None, None, os_thread, None, _TRX
    operation, tickets = _operation_and_tickets(rest)
    return trx_id, state, int(secs) if secs else None, operation, os_thread, tickets, _TRX


def _operation_and_tickets(rest: str) -> tuple[str | None, int | None]:
    """What a ``---TRANSACTION`` header says after its state: the operation, and the concurrency
    tickets of 5.0-5.5's ", thread declared inside InnoDB 500"."""
    rest = rest.strip(" ,")
    tickets = None
    marker = rest.find("thread declared inside InnoDB ")
    if marker >= 0:
        number = rest[marker + 30:].split(" ")[0]
        tickets = int(number) if _is_ascii_number(number) and len(number) < 20 else None
        rest = rest[:marker].strip(" ,")
    return rest or None, tickets


# what _TRX_LINE makes of a line starting with "M": only its thread rule can match one
_TRX_THREAD_LINE = re.compile(
    r"(?:MySQL|MariaDB) thread id (\d{1,20}), (?:OS thread handle (\S+), )?query id (\d{1,20}) ?(.*)\s*$"
)
_QUERY, _TRX, _LOCKS = 0, 1, 2  # what an unrecognised line inside a transaction is
_MODE_AFTER = {"R_thread": _QUERY, "R_waiting": _LOCKS, "R_lock_detail": _LOCKS}


def _transaction(
    lines: list[str], seen: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[str, ...]]], unparsed: list[str]
) -> Transaction:
    """One ``---TRANSACTION`` block (its header line first).

    Idle sessions print the same lines under their headers ("0 lock struct(s), heap size 1128,
    0 row lock(s)"): each distinct body is read once per status.
    """
    trx_id, state, active_s, operation, os_thread_id, tickets, mode = _transaction_head(lines[0], unparsed)
    if len(lines) == 2 and lines[1][:1] == "M":
        # the usual idle session: a thread line only, its ids unique to it (nothing to reuse)
        m = _TRX_THREAD_LINE.match(lines[1])
        if m is not None:
            thread_id, handle, query_id, client = m.groups()
            return _Transaction(
                trx_id, state, active_s, operation, int(thread_id), handle if handle is not None else os_thread_id,
                int(query_id), client.strip() or None if client else None, None, False, None, None, None, None,
                None, None, None, False, tickets,
            )
    key = (mode, *lines[1:])
    known = seen.get(key)
    if known is None:
        before = len(unparsed)
        known = seen[key] = (_transaction_body(lines, mode, unparsed), tuple(unparsed[before:]))
    else:
        unparsed.extend(known[1])
    (thread_id, handle, query_id, client, query, lock_wait, lock_wait_s, tables_in_use, tables_locked,
     lock_structs, heap_size, row_locks, undo, read_view) = known[0]
    return _Transaction(
        trx_id, state, active_s, operation, thread_id, handle if handle is not None else os_thread_id, query_id,
        client, query, lock_wait, lock_wait_s, tables_in_use, tables_locked, lock_structs, heap_size, row_locks,
        undo, read_view, tickets,
    )


def _transaction_body(lines: list[str], mode: int, unparsed: list[str]) -> tuple[Any, ...]:
    """Transaction's fields from the lines under the header: thread_id, the OS thread handle, query_id,
    client, query, lock_wait, lock_wait_s, tables_in_use ... undo_log_entries, read_view."""
    by_char, default, _, _ = _TRX_LINE
    get = by_char.get
    query: list[str] = []
    thread_id = handle = query_id = client = lock_wait_s = tables_in_use = tables_locked = None
    lock_structs = heap_size = row_locks = undo = None
    lock_wait = read_view = False
    for line in lines[1:]:
        m = get(line[:1], default).match(line)
        if m is None:
            # the query runs from the thread line to the next line we recognise; lock dumps
            # (hex/asc record bytes, which may hold any text) run to the next transaction
            if mode == _QUERY:
                query.append(line)
            elif mode == _TRX and line.strip():
                unparsed.append(line)
            continue
        rule = m.lastgroup
        mode = _MODE_AFTER.get(rule, _TRX)  # type: ignore[arg-type]
        if rule == "R_locks":
            wait, structs, heap, rows, entries = m.group("lock_wait", "lock_structs", "heap_size", "row_locks",
                                                         "undo_log_entries")
            lock_wait = lock_wait or wait is not None
            lock_structs, heap_size = structs, heap
            row_locks = rows if rows is not None else row_locks
            undo = entries if entries is not None else undo
        elif rule == "R_tables":
            tables_in_use, tables_locked = m.group("tables_in_use", "tables_locked")
        elif rule == "R_thread":
            thread_id, new_handle, query_id, client = m.group("thread_id", "os_thread_id", "query_id", "client")
            handle = new_handle if new_handle is not None else handle
        elif rule == "R_read_view":
            read_view = True
        elif rule == "R_waiting":
            seconds, micros = m.group("lock_wait_s", "lock_wait_us")
            lock_wait, lock_wait_s = True, seconds if seconds is not None else str(int(micros) // 1_000_000)
    text = "\n".join(query).strip("\n") if query else ""
    return (
        thread_id and int(thread_id), handle, query_id and int(query_id), client.strip() or None if client else None,
        text or None, lock_wait, lock_wait_s and int(lock_wait_s), tables_in_use and int(tables_in_use),
        tables_locked and int(tables_locked), lock_structs and int(lock_structs), heap_size and int(heap_size),
        row_locks and int(row_locks), undo and int(undo), read_view,
    )


_FILE_IO_INTS = _int_fields(FileIO)


# the I/O thread lines servers print first
_IO_THREAD_BLOCK = re.compile(r"(?:I/O thread [^\n]*\n)*")


def _parse_file_io(text: str, unparsed: list[str]) -> FileIO:
    values: dict[str, str] = {}
    block_end = _IO_THREAD_BLOCK.match(text).end()  # type: ignore[union-attr]
    rest = text[block_end:]
    if "I/O thread " in rest:  # thread lines elsewhere too: sort the lines one by one
        lines = text.split("\n")
        threads = _io_threads("".join([line + "\n" for line in lines if line.startswith("I/O thread ")]))
        rest = "\n".join([line for line in lines if not line.startswith("I/O thread ")])
    else:
        threads = _io_threads(text[:block_end])
    ints: dict[str, int | None] = dict.fromkeys(("pending_normal_aio_reads", "pending_normal_aio_writes"))
    ints.update(_scan_ints(rest, _FILE_IO, _FILE_IO_INTS, unparsed, values))
    # 8.0 prints only the per-thread lists: "Pending normal aio reads: [0, 0, 0, 0] ,"
    for total, listed in (("pending_normal_aio_reads", "read_list"), ("pending_normal_aio_writes", "write_list")):
        if ints[total] is None and values.get(listed):
            ints[total] = sum(int(n) for n in values[listed].replace(",", " ").split())
    return _FileIO(**ints, io_threads=tuple(threads))


def _io_threads(text: str) -> list[IoThread]:
    """The I/O thread lines, each ending with a newline."""
    # one findall over all the thread lines when each is the usual "I/O thread N state: S (P)";
    # [^()\n] is the per-line pattern's [^()] kept inside one line
    found = _IO_THREADS.findall(text)
    if len(found) == text.count("\n"):
        return [_IoThread(int(number), state.rstrip(), purpose) for number, state, purpose in found]
    return [_io_thread(line) for line in text.split("\n")[:-1]]


def _io_thread(line: str) -> IoThread:
    m = _IO_THREAD.match(line)
    if m is not None:  # the usual "I/O thread N state: STATE (PURPOSE)", in one regex call
        number, state, purpose = m.groups()
        return _IoThread(int(number), state, purpose)
    number, _, rest = line[11:].partition(" state: ")
    m = _IO_PURPOSE.match(rest)
    state, purpose = (m.group(1), m.group(2)) if m else (rest.strip(), None)
    return _IoThread(number=int(number) if _is_ascii_number(number) and len(number) < 20 else -1, state=state,
                    purpose=purpose)


_IBUF_INTS = _int_fields(InsertBuffer, ("hash_table_size", "hash_node_heap_buffers", "hash_used_cells"))


# the section as most servers print it, in one match: the rules of _INSERT_BUFFER in their usual
# order, the 5.7+ per-partition hash lines as one block read by findall
_IBUF_WHOLE = re.compile(
    r"Ibuf(?: for space \d{1,20})?: size (?P<size>\d{1,20}), free list len (?P<free_list_len>\d{1,20}), "
    r"seg size (?P<seg_size>\d{1,20}),(?: (?P<merges>\d{1,20}) merges| is empty)?[^\S\n]*\n"
    r"(?:(?P<inserts>\d{1,20}) inserts, (?P<merged_recs>\d{1,20}) merged recs, (?P<merges_b>\d{1,20}) merges"
    r"[^\S\n]*\n)?+"
    r"(?:merged operations:[^\S\n]*\n ?insert (?P<merged_inserts>\d{1,20}), delete mark "
    r"(?P<merged_delete_marks>\d{1,20}), delete (?P<merged_deletes>\d{1,20})[^\S\n]*\n"
    r"discarded operations:[^\S\n]*\n ?insert (?P<discarded_inserts>\d{1,20}), delete mark "
    r"(?P<discarded_delete_marks>\d{1,20}), delete (?P<discarded_deletes>\d{1,20})[^\S\n]*\n)?+"
    r"(?P<hash>(?:Hash table size \d{1,20}, node heap has \d{1,20} buffer\(s\)[^\S\n]*\n)*+)"
    r"(?:Hash table size (?P<hash_size>\d{1,20}), used cells (?P<hash_used_cells>\d{1,20}), node heap has "
    r"(?P<hash_buffers>\d{1,20}) buffer\(s\)[^\S\n]*\n)?+"
    r"(?:(?=[0-9])" + _RATE_LINE[1].replace(r"\d+", r"\d{1,20}") + r"[^\S\n]*\n)*+(?:[^\S\n]*\n)*+\Z"
)
_HASH_LINES = re.compile(r"Hash table size (\d{1,20}), node heap has (\d{1,20})")


def _parse_insert_buffer(text: str, unparsed: list[str]) -> InsertBuffer:
    m = _IBUF_WHOLE.match(text + "\n")
    if m is not None:
        values = {name: value for name, value in m.groupdict().items() if value is not None}
        ints = _ints(values, _IBUF_INTS)
        found = _HASH_LINES.findall(m.group("hash"))
        sizes = [int(size) for size, _ in found]
        buffers = [int(buffers) for _, buffers in found]
        if m.group("hash_size") is not None:
            sizes.append(int(m.group("hash_size")))
            buffers.append(int(m.group("hash_buffers")))
        used = m.group("hash_used_cells")
        return _InsertBuffer(
            **ints, hash_used_cells=int(used) if used is not None else None,
            hash_table_size=sum(sizes) if sizes else None, hash_table_partitions=len(sizes),
            hash_node_heap_buffers=sum(buffers) if buffers else None,
        )
    values: dict[str, str] = {}
    by_char, default, groups, _ = _INSERT_BUFFER
    ops_kind = "merged"
    hash_sizes: list[int] = []
    hash_buffers: list[int] = []
    hash_used: list[int] = []
    for line in text.split("\n"):
        m = by_char.get(line[:1], default).match(line)
        if m is None:
            if line.strip():
                unparsed.append(line)
            continue
        name = m.lastgroup[2:]  # type: ignore[index]
        if name in ("merged_hdr", "discarded_hdr"):
            ops_kind = name[:-4]
        elif name == "ops":  # " insert N, delete mark N, delete N" under the last header seen
            values[f"{ops_kind}_inserts"] = m.group("op_insert")
            values[f"{ops_kind}_delete_marks"] = m.group("op_delete_mark")
            values[f"{ops_kind}_deletes"] = m.group("op_delete")
        elif name == "hash":  # 5.7+ print one line per AHI partition: sum them
            hash_sizes.append(int(m.group("hash_size")))
            hash_buffers.append(int(m.group("hash_buffers")))
            if m.group("hash_used_cells") is not None:  # <= 5.1 print one line
                hash_used.append(int(m.group("hash_used_cells")))
        else:
            for group in groups[m.lastgroup]:  # type: ignore[index]
                if m.group(group) is not None:
                    values[group] = m.group(group)
    ints = _ints(values, _IBUF_INTS)
    ints["hash_used_cells"] = sum(hash_used) if hash_used else None
    return _InsertBuffer(
        **ints, hash_table_size=sum(hash_sizes) if hash_sizes else None,
        hash_table_partitions=len(hash_sizes), hash_node_heap_buffers=sum(hash_buffers) if hash_buffers else None,
    )


_LOG_PRINTED = _int_fields(Log, ("checkpoint_age_bytes", "modified_age_bytes"))


def _parse_log(text: str, unparsed: list[str]) -> Log:
    ints = _scan_ints(text, _LOG, _LOG_PRINTED, unparsed)
    lsn, checkpoint, pages_flushed = ints.get("lsn"), ints.get("checkpoint_lsn"), ints.get("pages_flushed_lsn")
    checkpoint_age = lsn - checkpoint if lsn is not None and checkpoint is not None else None
    if lsn is not None and pages_flushed is not None:
        modified_age: int | None = lsn - pages_flushed
    else:  # Percona 5.1/5.5 print "Modified age" without "Pages flushed up to"
        modified_age = ints.get("printed_modified_age_bytes")
    return _Log(**ints, checkpoint_age_bytes=checkpoint_age, modified_age_bytes=modified_age)


_POOL_INTS = _int_fields(BufferPool)
_INSTANCE_INTS = _int_fields(BufferPoolInstance)


def _parse_buffer_pool(text: str, unparsed: list[str]) -> BufferPool:
    # the totals, then INDIVIDUAL BUFFER POOL INFO (a line of its own) and the instances
    at = ("\n" + text + "\n").find("\nINDIVIDUAL BUFFER POOL INFO\n")
    values: dict[str, str] = {}
    ints = _scan_ints(text if at < 0 else text[:at], _BUFFER_POOL, _POOL_INTS, unparsed, values)
    pct = {k: float(values[k]) if k in values else None for k in ("dirty_pct", "max_dirty_pct")}
    instances = () if at < 0 else _pool_instances(text[at + len("INDIVIDUAL BUFFER POOL INFO\n"):], unparsed)
    return _BufferPool(**ints, **pct, instances=instances)


# splits "\n" + the instances' text into what comes before the first, then each one's number and lines
_POOL_SPLIT = re.compile(r"\n---BUFFER POOL (\d{1,20})[^\S\n]*(?=\n|\Z)")


def _pool_instances(text: str, unparsed: list[str]) -> tuple[BufferPoolInstance, ...]:
    parts = _POOL_SPLIT.split("\n" + text)
    blocks = parts[2::2]
    if all(_is_rule(line) or not line.strip() for line in parts[0].split("\n")) and not any(
        "---" in block for block in blocks
    ):  # the usual form: a line of dashes, then the instances, each without any
        instances = []
        for number, block in zip(parts[1::2], blocks):
            # block starts with the title's newline
            instances.append(_BufferPoolInstance(int(number), **_scan_ints(block[1:], _BUFFER_POOL, _INSTANCE_INTS,
                                                                            unparsed)))
        return tuple(instances)
    return _pool_instance_lines(text.split("\n"), unparsed)


def _pool_instance_lines(lines: list[str], unparsed: list[str]) -> tuple[BufferPoolInstance, ...]:
    instances: list[BufferPoolInstance] = []
    number: int | None = None
    block: list[str] = []
    for line in [*lines, "---BUFFER POOL 0"]:  # sentinel flushes the last block
        if line[:3] != "---":  # neither an instance's title nor a line of dashes
            block.append(line)
            continue
        m = _POOL_INSTANCE.match(line)
        if m is None:
            if not _is_rule(line):
                block.append(line)
            continue
        if number is not None:
            instances.append(_BufferPoolInstance(number, **_scan_ints("\n".join(block), _BUFFER_POOL, _INSTANCE_INTS,
                                                                       unparsed)))
        elif any(ln.strip() for ln in block):
            unparsed.extend(ln for ln in block if ln.strip())
        number, block = int(m.group(1)), []
    return tuple(instances)


_ROW_INTS = _int_fields(RowOperations)


def _parse_row_operations(text: str, unparsed: list[str]) -> RowOperations:
    values: dict[str, str] = {}
    ints = _scan_ints(text, _ROW_OPERATIONS, _ROW_INTS, unparsed, values)
    state = values.get("main_thread_state") or values.get("main_thread_state_b") or values.get("main_thread_state_c")
    return _RowOperations(**ints, main_thread_state=state.strip() if state else None)


# ------------------------------------------------------------------------------------- driver

_END = "END OF INNODB MONITOR OUTPUT"
_SECTIONS: dict[str, tuple[str, Callable[[str, list[str]], Any]]] = {
    "BACKGROUND THREAD": ("background_thread", _parse_background),
    "SEMAPHORES": ("semaphores", _parse_semaphores),
    "LATEST DETECTED DEADLOCK": ("deadlock", _parse_deadlock),
    "LATEST FOREIGN KEY ERROR": ("foreign_key_error", _parse_foreign_key_error),
    "TRANSACTIONS": ("transactions", _parse_transactions),
    "FILE I/O": ("file_io", _parse_file_io),
    "INSERT BUFFER AND ADAPTIVE HASH INDEX": ("insert_buffer", _parse_insert_buffer),
    "LOG": ("log", _parse_log),
    "BUFFER POOL AND MEMORY": ("buffer_pool", _parse_buffer_pool),
    "ROW OPERATIONS": ("row_operations", _parse_row_operations),
    _END: ("", lambda text, unparsed: None),
}


def _is_rule(line: str) -> bool:
    return line[:3] == "---" and not line.strip("-").strip()


# every known title on its own line right under a line of dashes (as _is_rule), in "\n" + text
_MARK = re.compile(r"\n---[-]*[^\S\n]*-*\n(" + "|".join(map(re.escape, _SECTIONS)) + ")$", re.MULTILINE)


def _parse_header(lines: list[str], unparsed: list[str]) -> tuple[str | None, str | None, int | None, bool]:
    server_time = thread_id = window = None
    found = False
    for line in lines:
        if "INNODB MONITOR OUTPUT" in line and not found:
            m = _HEADER.match(line)
            found = True
            if m:
                server_time, thread_id = _SPACES.sub(" ", m.group(1)), m.group(2)
        elif line.startswith("Per second averages"):
            m = _AVERAGES.match(line)
            window = int(m.group(1)) if m else None
        elif line.strip() and not _WRAPPER.fullmatch(line):
            unparsed.append(line)
    return server_time, thread_id, window, found


def parse_innodb_status(text: str) -> InnodbStatus:
    """Parse the Status column of SHOW ENGINE INNODB STATUS (see the module docstring for the schema).

    Raises ParseError when the text is not InnoDB monitor output at all; anything else (truncated,
    reordered, garbled) gives a partial record that says what it does not know.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected str, got {type(text).__name__}")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    # (start of the line of dashes, end of the title line, title) of each section, in one scan
    marks = [(m.start(), m.end() - 1, m.group(1)) for m in _MARK.finditer("\n" + text)]
    unparsed: list[str] = []
    header = text[: marks[0][0]].split("\n") if marks else text.split("\n")
    server_time, thread_id, window, found = _parse_header(header, unparsed if marks else [])
    if not marks and not found:
        raise ParseError("not SHOW ENGINE INNODB STATUS output: no monitor header and no section title")
    warnings: list[str] = [] if found else ["no INNODB MONITOR OUTPUT header"]
    sections: dict[str, Any] = {}
    complete = False
    old_header = server_time is not None and "-" not in server_time
    for k, (_, title_end, title) in enumerate(marks):
        attribute, parse = _SECTIONS[title]
        if title == _END:
            complete = True
            continue
        if attribute in sections:
            warnings.append(f"section {title} repeated; the first copy was kept")
            continue
        # the text between the title and the next section's dashes, less the dashes under the
        # title: a section followed by another ends with a newline
        body = text[title_end + 1: marks[k + 1][0]] if k + 1 < len(marks) else text[title_end + 1:]
        if body[:3] == "---":
            first_end = body.find("\n")
            if _is_rule(body if first_end < 0 else body[:first_end]):
                body = "" if first_end < 0 else body[first_end + 1:]
        if attribute == "transactions":
            sections[attribute] = _parse_transactions(body, unparsed, old_header)
        else:
            sections[attribute] = parse(body, unparsed)
    if sections.get("transactions") is not None and sections["transactions"].list_truncated:
        warnings.append("the transaction list is truncated ('... truncated...')")
    if not complete:
        warnings.append("no END OF INNODB MONITOR OUTPUT: the output is truncated")
    return _InnodbStatus(
        complete=complete, averages_window_s=window, server_time=server_time, monitor_thread_id=thread_id,
        warnings=tuple(warnings), unparsed_lines=tuple(unparsed), **sections,
    )


def status_to_dict(record: Any) -> Any:
    """Plain JSON-able nested dicts/lists of a parsed record (or any part of one)."""
    if record is None or isinstance(record, (bool, int, float, str)):
        return record
    if isinstance(record, (tuple, list)):
        return [status_to_dict(item) for item in record]
    return {f.name: status_to_dict(getattr(record, f.name)) for f in fields(record)}
