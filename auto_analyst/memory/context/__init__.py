"""The prompt context: short-term memory, token counting and the builder that fits every memory part into the
prompt budgets (``recall.py`` gathers the parts from the stores, ``builder.py`` fits them). See docs/memory.md.
"""
