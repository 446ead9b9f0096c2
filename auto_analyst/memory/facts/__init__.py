"""The facts graph: the memory stream, the entity knowledge store and the facts found in answers, per user.

``graph/`` holds the engines (SQL, Kùzu, Neo4j, FalkorDB behind :class:`~auto_analyst.memory.facts.graph.base.GraphStore`);
``model.py`` the fact records, ``extract.py`` reads facts out of a result, ``recall.py`` finds those a question
needs, ``entities.py`` ranks the user's entities, ``recording.py`` stores a turn's entities and facts. See docs/memory.md.
"""
