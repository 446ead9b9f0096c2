"""The zygote's heap on transparent huge pages (execution/hugepages.py): populated chunks collapse, sparse ones stay."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

_PROGRAM = r"""
import mmap, json
from auto_analyst.execution.hugepages import collapse, HUGE

def anon_huge():
    with open("/proc/self/smaps_rollup") as fh:
        return int(fh.read().split("AnonHugePages:")[1].split()[0]) * 1024

def rss():
    with open("/proc/self/smaps_rollup") as fh:
        return int(fh.read().split("Rss:")[1].split()[0]) * 1024

full = mmap.mmap(-1, 8 * HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)         # populated: every page written
for i in range(0, len(full), 4096):
    full[i] = 1
sparse = mmap.mmap(-1, 64 * HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)      # reserved, one page in 64 written
for i in range(0, len(sparse), 64 * 4096):
    sparse[i] = 1
before, rss_before = anon_huge(), rss()
done, size = collapse()
print(json.dumps({"done": done, "size": size, "gained": anon_huge() - before, "rss_growth": rss() - rss_before,
                  "still": bytes(full[:1]) == b"\x01" and bytes(sparse[:1]) == b"\x01"}))
"""


def test_populated_chunks_collapse_into_huge_pages_and_sparse_ones_do_not():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            if "[never]" in fh.read():
                pytest.skip("transparent huge pages are off on this machine")
    except OSError:
        pytest.skip("no transparent huge pages on this kernel")
    import json

    out = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    if r["done"] == 0:
        pytest.skip("this kernel refuses MADV_COLLAPSE (Linux < 6.1): the zygote forks 4 KiB pages as before")
    assert r["still"]  # the memory's content is unchanged
    assert r["gained"] >= 7 * 2 * 1024 * 1024  # the 8 populated chunks (one may straddle an unaligned start)
    assert r["rss_growth"] < 4 * 2 * 1024 * 1024  # the 64 sparse chunks were not filled in (that would be 128 MiB)
