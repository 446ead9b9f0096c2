"""docs/sandbox.md's containment table: ``python containment_table.py DIR`` reads the reports that
test_containment_modes.py keeps with ``AA_CONTAINMENT_REPORTS=DIR`` and prints one Markdown row per program:
how each tier and server user ended it, and which layer refused it (judged from its message)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = (("full", "root"), ("full", "user"), ("namespace-free", "root"), ("namespace-free", "user"))


def layer(entry: dict) -> str:
    """The layer that ended a program, from its result: audit hook, kernel (which error), limit, result channel, or ran."""
    msg, kind = entry["message"], entry["kind"]
    if entry["status"] == "ok":
        return "ran" + (f": {entry['stdout'].strip()[:40]}" if entry["stdout"].strip() else "")
    if "the sandbox does not allow" in msg:
        return "audit hook"
    if kind in ("disk", "timeout", "memory") or "No space left" in msg:
        return f"limit ({kind if kind != 'OSError' else 'tmpfs full'})"
    if kind == "sandbox":
        return "result channel checked"
    for errno_text, name in (("Errno 13", "EACCES"), ("Errno 1]", "EPERM"), ("Errno 2]", "ENOENT"), ("Errno 3]", "ESRCH"),
                             ("status 65280", "exec refused"), ("Errno 18", "EXDEV")):
        if errno_text in msg:
            return f"kernel ({name})"
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
        cells = [layer(r["results"][name]) if name in r["results"] else "-" for r in reports.values()]
        lines.append(f"| `{name}` | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
