"""The one reader of the names a script reads (agents/merge.py), used for the tables a turn read and for declines."""

from __future__ import annotations

from auto_analyst.agents.merge import names_read


def test_names_read_are_variables_and_the_literal_keys_of_tables():
    code = "x = big['v'].mean()\ny = tables['orders'].head()\nz = tables.get('cities')\nshow(df, name='small')"
    assert names_read(code) == {"x", "big", "y", "tables", "z", "show", "df", "orders", "cities"}
    # a string elsewhere (a column, a chart title) is not a table read; a script that does not parse reads nothing
    assert "small" not in names_read(code) and "v" not in names_read(code)
    assert names_read("def (:") == set() and names_read("") == set()
