"""docs/sandbox.md's containment table: ``python containment_table.py DIR`` reads the reports that
test_containment_modes.py keeps with ``AA_CONTAINMENT_REPORTS=DIR`` and prints one Markdown row per program:
how each tier and server user ended it, and which layer refused it (judged from its message)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = (("full", "root"), ("full", "user"), ("namespace-free", "root"), ("namespace-free", "user"))


# What a program that ran (status ok) was still kept from, by program: judged by the suite's checks.
_RAN = {"walk_for_secrets": "ran: no secret found", "environment": "ran: clean environment, no key",
        "leave_tmp": "ran: into its own tmpfs, bob sees nothing", "memory_kept": "ran: its variables not kept",
        "escape_sequences": "ran: escaped on the terminal", "json_replaced": "ran: result channel intact",
        "stdout_replaced": "ran: result channel intact"}


def layer(name: str, entry: dict) -> str:
    """How a program ended, and the layer that stopped it, from its result."""
    msg, kind = entry["message"], entry["kind"]
    if entry["status"] == "ok":
        out = " ".join(entry["stdout"].split())
        return _RAN.get(name) or (f"ran: {out[:48]}" if out else "ran")
    if "the sandbox does not allow" in msg:
        return "audit hook"
    if kind in ("disk", "timeout", "memory"):
        return {"disk": "disk budget", "timeout": "timeout (nothing found)", "memory": "memory limit"}[kind]
    if "No space left" in msg:
        return "tmpfs full"
    if kind == "sandbox":
        return "result channel checked"
    if kind == "FileNotFoundError" and "Errno" not in msg:
        return "kernel (ENOENT: not there)"
    for text, name_ in (("Errno 13", "EACCES"), ("Errno 1]", "EPERM"), ("Errno 2]", "ENOENT: not there"),
                        ("Errno 3]", "ESRCH: not there"), ("Errno 30", "EROFS"), ("Errno 18", "EXDEV"),
                        ("status 65280", "EPERM: exec refused"), ("non-existent directory", "ENOENT: not there"),
                        ("not found", "ENOENT: not there"), ("unable to open database", "cannot open")):
        if text in msg:
            return f"kernel ({name_})"
    return kind or "error"


def main(folder: Path) -> str:
    reports = {}
    for tier, user in COLUMNS:
        found = sorted(folder.glob(f"{tier}-{user}-*.json"))
        if found:
            reports[(tier, user)] = json.loads(found[0].read_text())
    names = next(iter(reports.values()))["results"].keys()
    head = "| program | " + " | ".join(f"{t}, {u}" for t, u in reports) + " |"
    lines = [head, "|" + "---|" * (len(reports) + 1)]
    for name in names:
        cells = [layer(name, r["results"][name]) if name in r["results"] else "-" for r in reports.values()]
        lines.append(f"| `{name}` | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
