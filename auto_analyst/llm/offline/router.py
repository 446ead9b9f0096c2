"""The offline intent router: word rules for the six intents of the router Signature."""

from __future__ import annotations

import re

__all__ = ["route"]

# a question about the conversation itself; words like "before" or "previous" alone are too common in data
# questions ("calls abandoned before being answered", "the previous day") to mean that
MEMORY = re.compile(r"\b(what did (?:we|you|i) (?:find|say|get|compute|calculate|see|learn|conclude)|"
                    r"(?:we|you) (?:found|said|computed|calculated|discussed|talked about) (?:earlier|before|previously)|"
                    r"remind me|last time|earlier (?:you|we)|in turn \d+|my (?:first|last|previous) question|"
                    r"(?:your|the) (?:previous|earlier|last) (?:answer|result)s?)\b", re.I)
CONFIG = re.compile(r"\b(?:answer|answers|respond|reply|explain|write|keep it|be|talk|speak|use)\b.{0,40}\b(?:brief|briefly|"
                    r"short|shorter|concise|detailed|longer|more detail|formal|casual|friendly|technical|simple|simpler|"
                    r"plain|like i'?m|tone|style)\b|\bi'?m (?:a|an) (?:statistician|data scientist|beginner|expert|"
                    r"manager|student)\b|\bi'?m new to\b", re.I)
NEW_DATA = re.compile(r"\b(?:load|upload|open|import|read)\b.{0,40}\.(?:csv|xlsx|xls|parquet|json|tsv)\b", re.I)
QA = re.compile(r"^\s*(?:help|what can you do|who are you|how do i use|what is auto-?analyst)\b", re.I)


def route(message: str) -> str:
    """analysis | qa | memory_query | config_change | new_data (unrelated is decided by the parser)."""
    if NEW_DATA.search(message):
        return "new_data"
    if QA.search(message):
        return "qa"
    if CONFIG.search(message) and not re.search(r"\b(mean|average|sum|total|plot|chart|count)\b", message, re.I):
        return "config_change"
    if MEMORY.search(message):
        return "memory_query"
    return "analysis"
