"""Retrieval of facts as Memary does it: the question's entities → the subgraph to depth 2 around each →
joined → ranked → the top facts, for the planner's context and for answers about earlier findings.

Ranking (best first): facts on a current table before stale ones; then **relevance**, the sum over the
question entities that reach the fact of ``1 / depth`` (so a fact joining two entities outranks one
reached from one); then ``(1 + uses) × 0.5 ^ (age / half-life)``, the entity store's count × recency
score with the times the fact was used as its count (:data:`~auto_analyst.memory.facts.entities.HALF_LIFE_HOURS`);
then the newer. Of facts saying the same thing (subject, relation, filter, table) only the newest is kept.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from auto_analyst.memory.facts.entities import HALF_LIFE_HOURS, METHODS, score
from auto_analyst.memory.facts.vocab import DataVocabulary, metric_of, stem
from auto_analyst.memory.facts.model import Fact, FactHit, fingerprint, format_number, render_fact
from auto_analyst.memory.facts.graph.base import GraphStore, SeenTable
from auto_analyst.storage.times import to_iso
from auto_analyst.memory.scope import Scope

__all__ = ["question_entities", "retrieve", "current_fingerprints", "seen_tables", "memory_rows", "Retrieved",
           "WALK_DEPTH", "CANDIDATES"]

WALK_DEPTH = 2
"""Memary's retrieval depth: the facts naming a question entity, and the facts one endpoint further."""

CANDIDATES = 40
"""Ranked facts read in full per question; the context builder then keeps what fits the memory budget."""

COMPARATIVE = re.compile(r"\b(?:higher|lower|more|less|greater|smaller|bigger|larger|compare[sd]?|comparison|"
                         r"versus|vs\.?|than|differ\w*|better|worse)\b", re.I)

_MAX_NGRAM = 4


@dataclass
class Retrieved:
    """The ranked facts of one question and the entities they were found from."""

    seeds: list[str]
    hits: list[FactHit] = field(default_factory=list)

    @property
    def current(self) -> list[FactHit]:
        return [h for h in self.hits if not h.fact.stale]


def _ngrams(text: str) -> list[str]:
    words = re.findall(r"[\w%.\-]+", text.lower())
    out = []
    for n in range(_MAX_NGRAM, 0, -1):
        for i in range(len(words) - n + 1):
            out.append(" ".join(words[i:i + n]))
    return out


KNOWN_TTL_SECONDS = 5.0
"""How long the entities of a user's facts are reused between questions without reading them again. Facts this
process writes are seen at once; facts another process writes, within this many seconds."""

_KNOWN: dict[tuple[int, str], tuple[float, int, list[tuple[str, str]]]] = {}


def _known_entities(graph: GraphStore, user: str) -> list[tuple[str, str]]:
    key, now = (id(graph), user), time.monotonic()
    hit = _KNOWN.get(key)
    if hit is None or hit[0] < now or hit[1] != graph.version:
        if len(_KNOWN) > 256:
            _KNOWN.clear()
        hit = _KNOWN[key] = (now + KNOWN_TTL_SECONDS, graph.version, graph.known_entities(user))
    return hit[2]


def _entity_words(graph: GraphStore, user: str, vocab: DataVocabulary) -> dict[str, str]:
    """lower-case text → entity name, for the session's columns and values and every entity of the user's facts."""
    words = {k: name for k, (name, _) in vocab.words().items()}
    for name, kind in _known_entities(graph, user):
        if kind == "value" and "=" in name:
            col, value = name.split("=", 1)
            words.setdefault(value.strip().lower(), name)
            words.setdefault(f"{col} {value}".lower(), name)
        elif kind in ("column", "table"):
            low = name.lower()
            for form in {low, re.sub(r"[_\-.]+", " ", low), stem(low)}:
                words.setdefault(form, name)
    return words


def question_entities(question: str, scope: Scope, graph: GraphStore) -> list[str]:
    """Entity names the question mentions: columns, category values (``col=value``), tables and methods.

    Columns and values are those of the session's tables and of the user's facts (so a question in a
    new session finds what an earlier one found); a word also matches without its plural or -ed ending.
    """
    words = _entity_words(graph, scope.user, DataVocabulary.of(scope.frames))
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    low = question.lower()
    for gram in _ngrams(question):
        name = words.get(gram) or words.get(stem(gram))
        if not name:
            continue
        at = low.find(gram)
        span = (at, at + len(gram))
        if at >= 0 and any(a <= span[0] and span[1] <= b for a, b in taken):
            continue  # 'plan premium' was taken whole; 'premium' inside it is the same mention
        taken.append(span)
        found.append(name)
    found += [name for name, (q_pattern, _) in METHODS.items() if re.search(q_pattern, low)]
    metric = metric_of(low)
    if metric and metric not in found:
        found.append(metric)
    return list(dict.fromkeys(found))


def seen_tables(scope: Scope, at: str | None = None) -> list[SeenTable]:
    """The session's tables as the graph remembers them: fingerprint, name, source file and its size/mtime."""
    out = []
    for name, frame in scope.frames.items():
        source = str(scope.paths.get(name, "") or "")
        size = mtime = 0
        if source and os.path.isfile(source):
            st = os.stat(source)
            size, mtime = st.st_size, st.st_mtime_ns
        else:
            source = ""
        out.append(SeenTable(fingerprint(frame), name, source, size, mtime, at or to_iso(None)))
    return out


def current_fingerprints(graph: GraphStore, scope: Scope) -> set[str]:
    """Fingerprints of the tables the user has now: the session's, and every remembered table whose source file
    is still there unchanged (same size and mtime)."""
    current = {fingerprint(f) for f in scope.frames.values()}
    for t in graph.tables(scope.user):
        if t.source and t.fingerprint not in current:
            try:
                st = os.stat(t.source)
            except OSError:
                continue
            if st.st_size == t.size and st.st_mtime_ns == t.mtime_ns:
                current.add(t.fingerprint)
    return current


def _age_hours(ts: str, now: datetime) -> float:
    at = datetime.fromisoformat(ts)
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return (now - at).total_seconds() / 3600


def retrieve(graph: GraphStore, scope: Scope, question: str, k: int = CANDIDATES, now: datetime | None = None,
             current: set[str] | None = None, links: bool = True) -> Retrieved:
    """The user's facts around the question's entities, ranked (see the module docstring), at most ``k``; their
    ``links`` are read only when asked (a prompt renders none)."""
    now = now or datetime.now(timezone.utc)
    seeds = question_entities(question, scope, graph)
    walked = graph.walk(scope.user, seeds, WALK_DEPTH)
    if not walked:
        return Retrieved(seeds)
    agg: dict[str, list] = {}  # fact -> [{via: depth}, at, uses]
    for w in walked:
        a = agg.get(w.fact)
        if a is None:
            a = agg[w.fact] = [{}, w.at, w.uses]
        a[0][w.via] = min(w.depth, a[0].get(w.via, w.depth))
    ages: dict[str, float] = {}  # facts of one turn share their time: parse each once
    ranked = []
    for fid, (vias, at, uses) in agg.items():
        if at not in ages:
            ages[at] = _age_hours(at, now)
        ranked.append((sum(1.0 / d for d in vias.values()), score(1 + uses, ages[at], HALF_LIFE_HOURS), ages[at], fid))
    ranked.sort(key=lambda r: (-r[0], -r[1], r[2], r[3]))  # relevance, count x recency, newest
    current = current_fingerprints(graph, scope) if current is None else current
    top = ranked[: 2 * k]
    facts = {f.id: f for f in graph.get_facts(scope.user, [r[3] for r in top], links=links)}
    hits, claims = [], set()
    for relevance, s, _, fid in top:
        f = facts.get(fid)
        if f is None:
            continue
        claim = (f.subject, f.relation, f.filter, f.fingerprint, f.object if f.kind == "correlation" else "")
        if claim in claims:
            continue  # the same finding again (asked twice): the newest stands for both
        claims.add(claim)
        f.stale = bool(f.fingerprint) and f.fingerprint not in current
        vias = agg[fid][0]
        hits.append(FactHit.model_construct(fact=f, relevance=relevance, depth=min(vias.values()), via=sorted(vias),
                                            score=round(s, 6)))
    hits.sort(key=lambda h: h.fact.stale)  # stable: the ranking stands within current and within stale
    return Retrieved(seeds, hits[:k])


# -- answers about earlier findings -----------------------------------------------------------------------


def _when(f: Fact, word: bool = True) -> str:
    return f"{'turn ' if word else ''}{f.turn} of session {f.session} on {f.at[:10]}"


def _parts(f: Fact) -> set[str]:
    return {p for p in f.subject.split(", ") + f.filter.split("; ") if "=" in p}


def comparison(question: str, hits: Sequence[FactHit]) -> str:
    """For a comparative question, one sentence comparing two remembered numbers that differ only in which
    question entity they are about (as subject or filter): same relation, unit and everything else.

    Returns '' when the question does not compare, or no such pair was found.
    """
    if not COMPARATIVE.search(question):
        return ""
    groups: dict[tuple, dict[str, Fact]] = {}
    for h in hits:
        f = h.fact
        if f.value is None or f.kind in ("correlation", "test"):
            continue
        parts = _parts(f)
        about = [v for v in h.via if v in parts]
        if len(about) != 1:
            continue
        rest = (f.relation, f.unit, tuple(sorted(parts - {about[0]})))
        groups.setdefault(rest, {}).setdefault(about[0], f)  # hits are ranked: the first is the best
    for (relation, unit, rest), by_about in groups.items():
        if len(by_about) < 2:
            continue
        (ea, a), (eb, b) = list(by_about.items())[:2]
        u = unit if unit in ("", "%") else f" {unit}"
        verdict = "equal to" if a.value == b.value else ("higher than" if a.value > b.value else "lower than")
        what = relation + (f" ({', '.join(rest)})" if rest else "")
        return (f"{what} for {ea}: {format_number(a.value)}{u} ({_when(a)}) is {verdict} for {eb}: "
                f"{format_number(b.value)}{u} ({_when(b)}).")
    return ""


def memory_rows(retrieved: Retrieved, question: str, limit: int = 12) -> list[dict]:
    """Rows for the memory answerer's ``history`` input: first all the facts found for the question joined (with the
    comparison a comparative question asks for), then one row per earlier turn. Each row has ``question``,
    ``answer`` (the facts as lines, with when they were found), ``facts`` and ``when``."""
    hits = retrieved.hits[:limit]
    if not hits:
        return []
    by_turn: dict[tuple[str, int], list[Fact]] = {}
    for h in hits:
        by_turn.setdefault((h.fact.session, h.fact.turn), []).append(h.fact)
    compared = comparison(question, hits)
    lines = ([compared] if compared else []) + [f"- {render_fact(h.fact)}" for h in hits]
    first = hits[0].fact
    # 'turn' is said after the word "turn" by an answerer ("Earlier (turn 3 of session …)")
    rows = [{"turn": "; ".join(_when(fs[0], word=False) for fs in by_turn.values()),
             "question": "; ".join(dict.fromkeys(fs[0].question for fs in by_turn.values())),
             "answer": "\n".join(lines),
             "facts": [h.fact.model_dump(include={"id", "subject", "relation", "object", "value", "unit", "stats",
                                                  "filter", "table", "at", "stale"}) for h in hits],
             "when": first.at, "comparison": compared}]
    for (session, turn), fs in by_turn.items():
        rows.append({"turn": _when(fs[0], word=False), "question": fs[0].question,
                     "answer": "\n".join(f"- {render_fact(f)}" for f in fs), "when": fs[0].at,
                     "facts": [f.id for f in fs]})
    return rows
