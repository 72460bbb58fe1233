"""`manage.py diskstats FILE [--group-by all|disk|sample] [--json]`: pt-diskstats over a sample file."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collectors.parsers import ParseError
from collectors.sources_disk import pt_diskstats_report


class Command(BaseCommand):
    help = "Print what pt-diskstats prints for a pt-diskstats/pt-stalk sample file or repeated /proc/diskstats."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--group-by", choices=("all", "disk", "sample"), default="all")
        parser.add_argument("--json", action="store_true", help="a JSON list of rows instead of text")
        parser.add_argument("--interval", type=float, default=1.0,
                            help="seconds between snapshots when the file has no TS lines")  # fmt: skip
        parser.add_argument("--hide-inactive", action="store_true", help="like pt-diskstats without --show-inactive")

    def handle(self, *args, **options):
        try:
            text = options["file"].read_text()
            self.stdout.write(
                pt_diskstats_report(
                    text, options["group_by"], as_json=options["json"], interval_s=options["interval"],
                    show_inactive=not options["hide_inactive"],
                ),  # fmt: skip
                ending="",
            )
        except (OSError, ParseError) as exc:
            raise CommandError(str(exc)) from exc
