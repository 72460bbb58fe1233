import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collectors.parsers.innodb_status import ParseError, parse_innodb_status, status_to_dict

_SUMMARY = (
    ("log", ("lsn", "flushed_lsn", "pages_flushed_lsn", "checkpoint_lsn", "checkpoint_age_bytes",
             "modified_age_bytes", "max_checkpoint_age_bytes")),
    ("buffer_pool", ("pages_total", "pages_free", "pages_data", "pages_dirty", "pages_read", "pages_written")),
    ("transactions", ("history_list_length", "count", "active", "oldest_active_s", "lock_waits")),
    ("row_operations", ("rows_inserted", "rows_updated", "rows_deleted", "rows_read")),
)


class Command(BaseCommand):
    help = "Parse a saved SHOW ENGINE INNODB STATUS output and print what innowatch reads from it."

    def add_arguments(self, parser):
        parser.add_argument("file", help="A file holding the status text (plain, \\G-wrapped or pt-stalk).")
        parser.add_argument("--json", action="store_true", help="Print the whole record as JSON.")

    def handle(self, *args, file, **options):
        try:
            text = Path(file).read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc}") from None
        try:
            record = parse_innodb_status(text)
        except ParseError as exc:
            raise CommandError(f"{file} is not InnoDB status output: {exc}") from None
        if options["json"]:
            self.stdout.write(_json_dumps(status_to_dict(record)))
            return
        self.stdout.write(self._summary(record))

    def _summary(self, record) -> str:
        lines = [f"complete: {record.complete}   averages window: {record.averages_window_s} s"]
        for section_name, names in _SUMMARY:
            section = getattr(record, section_name)
            if section is None:
                lines.append(f"{section_name}: not in the text")
                continue
            values = ", ".join(f"{n}={getattr(section, n)}" for n in names)
            lines.append(f"{section_name}: {values}")
        waits = record.semaphores.waits if record.semaphores else ()
        lines.append(f"semaphore waits: {len(waits)}")
        for wait in waits[:20]:
            lines.append(f"  thread {wait.thread_id} waited {wait.seconds} s at {wait.file}:{wait.line} "
                         f"({wait.latch}, created at {wait.created_file}:{wait.created_line})")
        lines += [f"warning: {w}" for w in record.warnings]
        lines += [f"unparsed: {line}" for line in record.unparsed_lines]
        return "\n".join(lines)


def _json_dumps(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)
