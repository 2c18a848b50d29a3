"""Which file (and where in it) a memory-mapped weight comes from, so that the writer can copy
its bytes file to file inside the kernel (``os.copy_file_range``) instead of reading the mapped
pages into the process and writing them back out: on a 1 GB model the copy is 2-3x faster and
the process never touches the weights' pages at all.

The reader registers each mapping (``map_file``); the writer asks ``source_of(array)`` for the
file range behind an array and gets None unless the array is, byte for byte, a contiguous run
of a registered mapping of a file that has not changed since it was mapped.
"""

from __future__ import annotations

import mmap
import os
import weakref

import numpy as np

# mmap object -> (path, address of its first byte, (inode, device, size, mtime) when mapped)
_MAPPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns


def map_file(path: str) -> memoryview:
    """The whole file, memory-mapped read-only (an empty view for an empty file)."""
    if os.path.getsize(path) == 0:
        return memoryview(b"")
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        identity = _identity(os.fstat(f.fileno()))
    start = np.frombuffer(mm, np.uint8, count=1).ctypes.data
    _MAPPED[mm] = (os.path.abspath(path), start, identity)
    return memoryview(mm)


def source_of(array: np.ndarray) -> tuple[str, int, tuple[int, int, int, int]] | None:
    """(path, byte offset, file identity) of the bytes of ``array`` when they are a contiguous
    run of a registered mapping, in the array's own byte order on disk; else None."""
    if not array.flags.c_contiguous or array.dtype.byteorder not in "=<|" or array.nbytes == 0:
        return None
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    if not isinstance(base, memoryview):
        return None
    entry = _MAPPED.get(base.obj) if isinstance(base.obj, mmap.mmap) else None
    if entry is None:
        return None
    path, start, identity = entry
    offset = array.ctypes.data - start
    if offset < 0 or offset + array.nbytes > len(base.obj):
        return None
    return path, offset, identity


def copy_range(path: str, offset: int, length: int, identity: tuple[int, int, int, int], out) -> bool:
    """Append ``length`` bytes of ``path`` from ``offset`` to the open binary file ``out`` by
    ``os.copy_file_range``. False (nothing written) when that is not possible here (another
    OS, a file changed since it was mapped, a file system that refuses): the caller writes the
    bytes itself."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    try:
        src = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if _identity(os.fstat(src)) != identity:
            return False
        out.flush()
        dst = out.fileno()
        done = 0
        while done < length:
            try:
                n = copy(src, dst, length - done, offset + done)
            except OSError:
                n = 0
            if n <= 0:
                if done == 0:
                    return False
                # part copied: finish from the source file with plain writes
                with open(path, "rb") as f:
                    f.seek(offset + done)
                    rest = f.read(length - done)
                out.seek(0, os.SEEK_END)
                out.write(rest)
                out.flush()
                return True
            done += n
        out.seek(0, os.SEEK_END)  # the buffered file object learns where the descriptor is now
        return True
    finally:
        os.close(src)
