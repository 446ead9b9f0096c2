"""The offline model's reader: a question in plain language into typed query specs, in stages.

1. ``text``: normalised text and tokens (:class:`~.text.Reading` tracks which are explained);
2. ``linker``, ``conditions``, ``words``, ``instructions`` (put together by ``pieces``): words linked to
   columns, values, row nouns, the table, periods, statistics, charts and task-plugin words, using the
   table's ``vocabulary`` (its own names and values plus the curated ``lexicon``);
3. ``grammar`` (with ``builtin`` and the task plugins' claims): the pieces into a
   :class:`~auto_analyst.offline.spec.QuerySpec`;
4. ``followups``: a follow-up resolved against the previous turn's spec;
5. checks: unexplained words decline the part (``pieces``), named columns must be used (``grammar``),
   and the canonical text must read back (``auto_analyst.offline.planning``).

``parts.read_question`` runs them on every part of a question; ``suggest`` builds the closest
answerable question for a decline.
"""

from auto_analyst.offline.reader.parts import read_question, split_parts

__all__ = ["read_question", "split_parts"]
