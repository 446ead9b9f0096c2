"""A PATH on which the system's ``bwrap`` is not found: as on a fresh machine without the ``bubblewrap`` package.

Each PATH folder that holds a ``bwrap`` is replaced by a folder of links to everything else in it, so
every other program stays where it was (the package itself is not uninstalled: others use it).
"""

from __future__ import annotations

import os
from pathlib import Path


def path_without_bwrap(shadow_root: Path, path: str | None = None) -> str:
    """``path`` (default: this process's PATH) with every ``bwrap`` hidden; link folders go under ``shadow_root``."""
    out = []
    for i, folder in enumerate((path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)):
        if not folder or not os.path.exists(os.path.join(folder, "bwrap")):
            out.append(folder)
            continue
        shadow = shadow_root / f"path{i}"
        shadow.mkdir(parents=True, exist_ok=True)
        for entry in os.listdir(folder):
            if entry != "bwrap" and not (shadow / entry).exists():
                (shadow / entry).symlink_to(os.path.join(folder, entry))
        out.append(str(shadow))
    return os.pathsep.join(out)


SYSTEM_PLACES = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")


def argv_without_bwrap(argv: list[str]) -> list[str]:
    """``argv`` run where, as well, the system's ``bwrap`` files are covered (root only: its own mount namespace
    with /dev/null bound over each), so not even a look at its usual place finds it; unchanged otherwise."""
    import shutil

    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return argv
    cover = " ".join(f"mount --bind /dev/null {p} &&" for p in SYSTEM_PLACES if os.path.exists(p))
    return [unshare, "--mount", "--propagation", "private", "sh", "-c", f'{cover} exec "$@"', "sh", *argv]


if __name__ == "__main__":  # used by .ci/run: print such a PATH
    import sys
    import tempfile

    print(path_without_bwrap(Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="aa-nobwrap-"))))
