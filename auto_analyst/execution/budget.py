"""The work folder's disk budget: how much a session's work folder holds, and removing what a run added.

Why a checked budget and not a quota: the work folder is an ordinary folder of the server's file
system (it outlives the worker, and the caller reads it), and neither an unprivileged user nor a
container can set a kernel quota on it. The state process walks it every ``CHECK_SECONDS`` while
a script runs (RLIMIT_FSIZE already caps each file) and once at the end.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["CHECK_SECONDS", "ENTRY_BYTES", "usage", "snapshot", "remove_new"]

CHECK_SECONDS = 0.2  # a 5k-file walk takes ~10 ms; at disk speed (~1 GB/s) a run overshoots by at most ~0.2 GB
ENTRY_BYTES = 4096  # every file or folder counts at least one block, so a flood of empty files is bounded too


def usage(path: str, stop_after: int | None = None) -> int:
    """Bytes under ``path`` (allocated blocks, at least ENTRY_BYTES per entry); stops early past ``stop_after``."""
    total = 0
    stack = [path]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += max(ENTRY_BYTES, st.st_blocks * 512)
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    if stop_after is not None and total > stop_after:
                        return total
        except OSError:
            continue
    return total


def snapshot(path: str, cap: int = 100_000) -> set[str]:
    """The entries (paths) under ``path`` now, at most ``cap`` of them."""
    out: set[str] = set()
    stack = [path]
    while stack and len(out) < cap:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    out.add(e.path)
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return out


def remove_new(path: str, before: set[str]) -> None:
    """Delete every entry under ``path`` that is not in ``before`` (what a stopped run made)."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for e in entries:
        try:
            if e.path not in before:
                if e.is_dir(follow_symlinks=False):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    os.unlink(e.path)
            elif e.is_dir(follow_symlinks=False):
                remove_new(e.path, before)
        except OSError:
            continue
