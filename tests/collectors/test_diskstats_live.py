"""This machine's real /proc/diskstats sees a 32 MiB O_DIRECT write on the device holding the file."""

from __future__ import annotations

import mmap
import os
import tempfile
from pathlib import Path

import pytest

from collectors.parsers.diskstats import parse_proc_diskstats
from collectors.sources_disk import device_for_path

WRITE_BYTES = 32 * 1024 * 1024
CHUNK = 1024 * 1024  # a multiple of any logical block size; mmap memory is page-aligned for O_DIRECT
CANDIDATE_DIRS = [tempfile.gettempdir(), "/var/tmp", str(Path(__file__).resolve().parent), "/work"]


def _counters(device: str) -> tuple[int, int]:
    rows = parse_proc_diskstats(Path("/proc/diskstats").read_text())
    row = next(r for r in rows if r.device == device)
    return row.writes, row.sectors_written


def _direct_write(directory: str) -> str | None:
    """Write WRITE_BYTES with O_DIRECT + fsync in `directory`; the file's path, or None if unsupported."""
    fd, path = tempfile.mkstemp(dir=directory, prefix="innowatch-odirect-")
    os.close(fd)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    except OSError:  # EINVAL: the filesystem (tmpfs, some overlays) refuses O_DIRECT
        os.unlink(path)
        return None
    buffer = mmap.mmap(-1, CHUNK)
    buffer.write(os.urandom(CHUNK))
    try:
        for _ in range(WRITE_BYTES // CHUNK):
            os.write(fd, buffer)
        os.fsync(fd)
    except OSError:
        os.unlink(path)
        return None
    finally:
        os.close(fd)
        buffer.close()
    return path


def _usable_directory() -> tuple[str, str]:
    reasons = []
    for directory in CANDIDATE_DIRS:
        if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
            reasons.append(f"{directory}: not writable")
            continue
        try:
            device = device_for_path(directory).name
        except LookupError as exc:
            reasons.append(str(exc))
            continue
        probe = _direct_write_probe(directory)
        if probe:
            return directory, device
        reasons.append(f"{directory}: O_DIRECT not supported")
    pytest.skip("no directory on a block device accepts O_DIRECT: " + "; ".join(reasons))


def _direct_write_probe(directory: str) -> bool:
    fd, path = tempfile.mkstemp(dir=directory, prefix="innowatch-probe-")
    os.close(fd)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_DIRECT))
        return True
    except OSError:
        return False
    finally:
        os.unlink(path)


def test_device_for_path_names_a_device_that_proc_diskstats_lists():
    directory, device = _usable_directory()
    info = device_for_path(directory)
    names = {r.device for r in parse_proc_diskstats(Path("/proc/diskstats").read_text())}
    assert info.name == device and info.name in names
    assert set(info.parents) <= names
    assert (info.major, info.minor) == (os.major(os.stat(directory).st_dev), os.minor(os.stat(directory).st_dev))


def test_an_o_direct_write_grows_writes_and_sectors_written_on_the_files_device():
    directory, device = _usable_directory()
    before = _counters(device)
    path = _direct_write(directory)
    assert path is not None
    try:
        after = _counters(device)
    finally:
        os.unlink(path)
    writes, sectors = after[0] - before[0], after[1] - before[1]
    # The request size limit (max_sectors_kb) may split the write, so at least one request, and at
    # least every written sector (plus whatever else the machine wrote meanwhile).
    assert writes >= 1
    assert sectors * 512 >= WRITE_BYTES


def test_a_path_on_a_filesystem_without_a_block_device_raises_lookup_error():
    if not os.path.isdir("/proc"):
        pytest.skip("no /proc")
    with pytest.raises(LookupError):
        device_for_path("/proc")


def test_partitions_and_device_mapper_resolve_to_their_parent_disks(tmp_path):
    # A sysfs-shaped tree: dm-0 (LVM) on sda2, a partition of sda.
    from collectors.sources_disk import _parents

    sda = tmp_path / "devices/pci0000:00/block/sda"
    (sda / "sda2").mkdir(parents=True)
    (sda / "sda2" / "partition").write_text("2\n")
    dm0 = tmp_path / "devices/virtual/block/dm-0"
    (dm0 / "slaves").mkdir(parents=True)
    (dm0 / "slaves" / "sda2").symlink_to(sda / "sda2")
    assert _parents(sda / "sda2") == ["sda"]
    assert _parents(dm0) == ["sda2", "sda"]
    assert _parents(sda) == []
