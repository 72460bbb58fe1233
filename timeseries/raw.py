"""The stored status text: the one in force at a moment, decompressed, and its deadlock section."""

from __future__ import annotations

from timeseries.compression import decompress_text
from timeseries.models import RawStatus


def raw_status_at(server, at) -> RawStatus | None:
    """The stored status nearest at or before ``at``; the first one after if none is before."""
    rows = RawStatus.objects.filter(server=server)
    return rows.filter(ts__lte=at).order_by("-ts").first() or rows.filter(ts__gt=at).order_by("ts").first()


def status_text(raw: RawStatus | None) -> str:
    if raw is None:
        return ""
    return decompress_text(raw.text_zlib)


def deadlock_section(text: str) -> str:
    """The LATEST DETECTED DEADLOCK section, header to the next section header ('---…' / '===…')."""
    start = text.find("LATEST DETECTED DEADLOCK")
    if start < 0:
        return ""
    lines = text[start:].splitlines()
    out = lines[:2]
    for i, line in enumerate(lines[2:], start=2):
        # A section ends where a new "-----\nTITLE\n-----" header begins.
        if set(line.strip()) == {"-"} and i + 2 < len(lines) and set(lines[i + 2].strip()) == {"-"}:
            break
        out.append(line)
    return "\n".join(out).rstrip()
