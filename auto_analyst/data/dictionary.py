"""The data dictionary: a ``.md``/``.txt`` document loaded beside the tables that says what the columns mean.

Given to the planner and the agents in two ways:

* each column's ``meaning`` (``ColumnInfo.meaning``) is the dictionary's line about it: a table row whose first
  cell is the column's name, or a line that starts with the name (``- amount: order total in EUR``), else the first
  line naming it as a whole word. The offline model reads these as extra names for the columns;
* ``DatasetDescription.dictionary`` holds the passages the question is about: the whole document when it is short
  (at most :data:`SHORT_CHARS`), else the passages (paragraphs, list items and table rows under their heading)
  that share the most words with the question, weighted by how rare each word is in the document (the idf of
  BM25, without its length normalisation: passages are short), up to :data:`BUDGET_CHARS`, in document order.

A database's table and column comments are read as the same thing (``data/sql_source.py``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auto_analyst.data.retrieval import name_words
from auto_analyst.errors import DataLoadError

__all__ = ["SHORT_CHARS", "BUDGET_CHARS", "DataDictionary", "is_dictionary_file"]

SHORT_CHARS = 3000
"""A dictionary up to this long is given whole (about 750 tokens)."""
BUDGET_CHARS = 3000
"""The most dictionary text a prompt gets for one question when the document is longer."""
MEANING_CHARS = 200
_DICT_WORDS = re.compile(r"dictionar|readme|manual|codebook|glossary|schema|description|metadata|notes|docs?\b", re.I)
_STOP = frozenset("a an and are as at be by for from has have in is it its of on or per that the this to was were "
                  "what which with how many much show".split())
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")


def is_dictionary_file(path: str | Path) -> bool:
    """Whether a file loaded beside the tables is a dictionary: ``.md``/``.markdown``, or ``.txt`` whose name says
    so (``data_dictionary.txt``, ``README.txt``, ``manual.txt``...)."""
    p = Path(str(path))
    suffix = p.suffix.lower()
    return suffix in (".md", ".markdown") or (suffix == ".txt" and bool(_DICT_WORDS.search(p.stem)))


def _words(text: str) -> list[str]:
    return [w for w in name_words(text) if w not in _STOP and (len(w) > 2 or w.isdigit())]


@dataclass
class DataDictionary:
    """The text of one or more dictionary documents, split into passages.

    Attributes:
        text: the documents, one after the other.
        sources: their file names.
        passages_: (heading, passage) pairs in document order.
    """

    text: str
    sources: list[str] = field(default_factory=list)
    passages_: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.passages_:
            self.passages_ = _split(self.text)

    @classmethod
    def load(cls, path: str | Path) -> DataDictionary:
        """Read a dictionary file (UTF-8, else the encoding charset-normalizer finds).

        Raises:
            DataLoadError: the file is missing, empty or not text.
        """
        p = Path(path).expanduser()
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise DataLoadError(f"Cannot read the dictionary {p.name}: {exc.strerror or exc}; check the path.") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            from charset_normalizer import from_bytes

            best = from_bytes(raw).best()
            if best is None:
                raise DataLoadError(f"{p.name} is not a text file; a data dictionary is a .md or .txt document.") from None
            text = str(best)
        if not text.strip():
            raise DataLoadError(f"{p.name} is empty; a data dictionary says what the columns mean.")
        return cls(text=text, sources=[p.name])

    def merged(self, other: DataDictionary) -> DataDictionary:
        """This dictionary and ``other`` as one (loading a second document adds to the first)."""
        return DataDictionary(text=self.text.rstrip() + "\n\n" + other.text, sources=self.sources + other.sources)

    def meaning_of(self, column: str) -> str:
        """The dictionary's line about ``column`` ('' when it names it nowhere), at most 200 characters."""
        target = " ".join(name_words(column))
        if not target:
            return ""
        first_word_hit = ""
        for line in self.text.splitlines():
            stripped = line.strip().lstrip("-*•").strip()
            if not stripped:
                continue
            cells = [c.strip().strip("`*") for c in stripped.strip("|").split("|")] if stripped.startswith("|") or \
                stripped.count("|") >= 2 else []
            if cells and " ".join(name_words(cells[0])) == target and len(cells) > 1:
                return _clip(" — ".join(c for c in cells[1:] if c))
            head = re.split(r"[:=\u2013\u2014]| - ", stripped, maxsplit=1)
            if len(head) == 2 and " ".join(name_words(head[0].strip("`* "))) == target:
                return _clip(head[1].strip())
            if not first_word_hit and re.search(rf"(?<![\w]){re.escape(column)}(?![\w])", stripped):
                first_word_hit = stripped
        return _clip(first_word_hit)

    def annotate(self, desc: Any) -> None:
        """Fill ``meaning`` of every column of ``desc`` that has none yet (a database comment is kept)."""
        for table in desc.tables:
            for info in table.columns:
                if not info.meaning:
                    info.meaning = self.meaning_of(info.name)

    def passages(self, question: str, desc: Any = None) -> list[str]:
        """The dictionary text for ``question`` (see the module docstring), as a list of passages."""
        if len(self.text) <= SHORT_CHARS:
            return [self.text.strip()]
        words = set(_words(question))
        if not words:
            return []
        docs = [set(_words(h + " " + p)) for h, p in self.passages_]
        n = len(docs)
        idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w in words
               if (df := sum(1 for d in docs if w in d))}
        scored = sorted(((sum(idf.get(w, 0.0) for w in words & d), i) for i, d in enumerate(docs)), reverse=True)
        chosen, used = [], 0
        for score, i in scored:
            if score <= 0:
                break
            heading, text = self.passages_[i]
            piece = f"[{heading}] {text}" if heading else text
            if used + len(piece) > BUDGET_CHARS:
                continue
            chosen.append(i)
            used += len(piece)
        return [(f"[{self.passages_[i][0]}] " if self.passages_[i][0] else "") + self.passages_[i][1]
                for i in sorted(chosen)]


def _clip(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MEANING_CHARS else text[:MEANING_CHARS - 1] + "…"


def _split(text: str) -> list[tuple[str, str]]:
    """(heading, passage): paragraphs, and each list item or table row on its own, under the latest heading."""
    out: list[tuple[str, str]] = []
    heading, para = "", []

    def flush() -> None:
        if para:
            out.append((heading, " ".join(para).strip()))
            para.clear()

    for line in text.splitlines():
        s = line.strip()
        if _HEADING.match(line):
            flush()
            heading = _HEADING.sub("", line).strip()
        elif not s:
            flush()
        elif s.startswith(("|", "-", "*", "•")) or re.match(r"^\d+[.)]\s", s):
            flush()
            if not re.fullmatch(r"[|\-:\s]+", s):  # a table's separator row
                out.append((heading, s))
        else:
            para.append(s)
    flush()
    return [(h, p) for h, p in out if p]
