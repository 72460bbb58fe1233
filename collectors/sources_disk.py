"""Which block device holds a path: the host agent uses it to find the datadir's and redo log's disks.

I/O only (stat, sysfs); no Django. `device_for_path` follows the kernel's own links rather than
parsing mount tables, so bind mounts, LVM/dm-crypt (dm-N) and md arrays resolve the same way:
st_dev -> /sys/dev/block/MAJ:MIN -> the device's sysfs directory; a partition's parent is the
directory above it; a dm/md device's parents are listed in its `slaves/`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SYS_DEV_BLOCK = Path("/sys/dev/block")


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    name: str  # as in /proc/diskstats (e.g. "nvme0n1p2", "dm-0")
    major: int
    minor: int
    parents: tuple[str, ...]  # whole disk of a partition; slaves of dm/md, recursively; nearest first


def device_for_path(path: str | os.PathLike[str], sys_dev_block: Path = SYS_DEV_BLOCK) -> DeviceInfo:
    """The block device holding `path`. Raises LookupError for filesystems without one (tmpfs, overlay)."""
    st_dev = os.stat(path).st_dev
    major, minor = os.major(st_dev), os.minor(st_dev)
    sysfs = sys_dev_block / f"{major}:{minor}"
    if not sysfs.exists():
        raise LookupError(f"{path}: device {major}:{minor} is not a block device (tmpfs, overlay, nfs?)")
    real = sysfs.resolve()
    return DeviceInfo(real.name, major, minor, tuple(_parents(real)))


def _parents(sysfs_dir: Path) -> list[str]:
    found: list[str] = []
    if (sysfs_dir / "partition").exists():  # /sys/devices/.../sda/sda1
        found.append(sysfs_dir.parent.name)
        sysfs_dir = sysfs_dir.parent
    slaves = sysfs_dir / "slaves"
    if slaves.is_dir():
        for slave in sorted(slaves.iterdir()):
            real = slave.resolve()
            found.append(real.name)
            found += [p for p in _parents(real) if p not in found]
    return found


def pt_diskstats_report(
    text: str, group_by: str = "all", *, as_json: bool = False, interval_s: float = 1.0, show_inactive: bool = True
) -> str:
    """What `pt-diskstats --group-by G FILE` prints for a sample file (or, as_json, a JSON list of rows).

    Repeated /proc/diskstats snapshots carry no time: they are taken as `interval_s` apart.
    """
    import dataclasses
    import json

    from analysis.diskstats import diskstats_metrics, format_pt_diskstats, metrics_to_dicts
    from collectors.parsers.diskstats import parse_pt_diskstats_samples

    samples = parse_pt_diskstats_samples(text)
    if any(s.ts is None for s in samples):
        samples = [dataclasses.replace(s, ts=i * interval_s) for i, s in enumerate(samples)]
    rows = diskstats_metrics(samples, group_by, show_inactive=show_inactive)  # type: ignore[arg-type]
    if as_json:
        return json.dumps(metrics_to_dicts(rows), indent=1) + "\n"
    return format_pt_diskstats(rows, group_by)  # type: ignore[arg-type]
