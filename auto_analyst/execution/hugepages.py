"""Back the warm zygote's heap with transparent huge pages, so every fork copies fewer page-table entries.

Each run forks its session's state process (~175 MB of anonymous memory once pandas, numpy, sklearn,
statsmodels, plotly and matplotlib are in) and the old state exits; the kernel copies, then frees,
one page-table entry per 4 KiB page each time (``copy_page_range``/``zap_pte_range`` in a ``perf``
profile: the part of a run's kernel time that grew when many sessions took turns, docs/sandbox.md).
A 2 MiB huge page is one entry. ``MADV_COLLAPSE`` (Linux 6.1, ``madvise(2)``) turns the zygote's
populated anonymous memory into huge pages synchronously, once, after its warm-up; it works whatever
``/sys/kernel/mm/transparent_hugepage/enabled`` says except ``never``. A child that writes into a
shared huge page gets the kernel to split that one mapping back into 4 KiB entries and copy only the
page written (``do_huge_pmd_wp_page``), so copy-on-write stays page-sized.

Where the kernel refuses (older kernels: ``EINVAL``; no free huge pages: ``ENOMEM``/``EAGAIN``) nothing
changes: the zygote forks 4 KiB pages as before.
"""

from __future__ import annotations

import ctypes

__all__ = ["collapse", "MADV_COLLAPSE"]

MADV_COLLAPSE = 25
"""From ``<linux/mman.h>`` (Linux 6.1)."""
HUGE = 2 * 1024 * 1024


def _anonymous_regions() -> list[tuple[int, int]]:
    """The process's private, writable, anonymous mappings (heap and mmap'd arenas), as (start, end)."""
    regions = []
    with open("/proc/self/maps") as fh:
        for line in fh:
            parts = line.split()
            span, perms = parts[0], parts[1]
            path = parts[5] if len(parts) > 5 else ""
            if perms[:2] != "rw" or perms[3] != "p" or (path and path != "[heap]"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            regions.append((start, end))
    return regions


def _populated(pagemap, lo: int) -> int:
    """How many of the 512 pages of the 2 MiB chunk at ``lo`` are in memory (``/proc/self/pagemap``'s bit 63)."""
    pagemap.seek(lo // 4096 * 8)
    data = pagemap.read(512 * 8)
    return sum(1 for i in range(7, len(data), 8) if data[i] & 0x80)


def collapse(min_populated: int = 384) -> tuple[int, int]:
    """Ask the kernel to back each 2 MiB-aligned chunk of the anonymous mappings with a huge page, where at
    least ``min_populated`` of its 512 pages are in memory already (collapsing fills the rest with zeros:
    a reserved but unused range, such as an allocator's arena, is left alone so memory does not grow).

    Returns:
        (ranges collapsed, bytes now in huge pages). (0, 0) where the kernel does not support it.
    """
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            if "[never]" in fh.read():  # the operator turned huge pages off: respect it
                return 0, 0
    except OSError:
        pass  # no /sys inside the wall (bubblewrap binds only what it needs): the kernel decides
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    done = size = 0
    try:
        pagemap = open("/proc/self/pagemap", "rb", buffering=0)  # noqa: SIM115
    except OSError:
        return 0, 0
    with pagemap:
        for start, end in _anonymous_regions():
            for lo in range((start + HUGE - 1) // HUGE * HUGE, end // HUGE * HUGE, HUGE):
                if _populated(pagemap, lo) < min_populated:
                    continue
                if libc.madvise(lo, HUGE, MADV_COLLAPSE) == 0:
                    done, size = done + 1, size + HUGE
                elif ctypes.get_errno() == 22:  # EINVAL: this kernel has no MADV_COLLAPSE
                    return done, size
    return done, size
