"""The one reader of the names a script reads (agents/merge.py), used for the tables a turn read and for declines."""

from __future__ import annotations

import pytest

from auto_analyst.agents.merge import names_read


def test_names_read_are_variables_and_the_literal_keys_of_tables():
    code = "x = big['v'].mean()\ny = tables['orders'].head()\nz = tables.get('cities')\nshow(df, name='small')"
    assert names_read(code) == {"x", "big", "y", "tables", "z", "show", "df", "orders", "cities"}
    # a string elsewhere (a column, a chart title) is not a table read; a script that does not parse reads nothing
    assert "small" not in names_read(code) and "v" not in names_read(code)
    assert names_read("def (:") == set() and names_read("") == set()


def test_a_script_is_parsed_once_for_all_its_readers_and_bad_code_is_not_kept():
    from auto_analyst.agents.merge import assigned_names, parsed, shown_names
    from auto_analyst.sql_runs import literal_queries

    code = "q = 'SELECT a FROM t'\nout = sql(q)\nshow(out, name='rows')"
    assert parsed(code) is parsed(code)
    assert (assigned_names(code), shown_names(code), literal_queries(code)) == (["q", "out"], ["out"], ["SELECT a FROM t"])
    for _ in range(2):
        with pytest.raises(SyntaxError):
            parsed("def (:")
