"""What is stored per user in the storage's database: the history of turns and sessions (``history.py``, its
tables in ``history_schema.py``, quote matching in ``quotes.py``) and the answer profile (``profile.py``; the
plain-words style instructions that change it are read in ``instructions.py``). See docs/memory.md.
"""
