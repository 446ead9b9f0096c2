"""Error-fix memory: remembered "error summary -> correction" pairs, searched when generated code fails.

``memory.py`` (:class:`ErrorMemory`, the store) keeps the entries in the storage's database (``store.py``) and
finds them through a vector index (``index.py``, Chroma local or server, behind the ``VectorIndex`` protocol of
``protocols.py``); ``embedding.py`` is the offline embedding, ``anonymize.py`` and ``sharing.py`` make a fix
shareable with every user. See docs/error_memory.md.
"""
