"""``auto-analyst describe FILE``: the load report and the dataset description the agents get.

The command is a click object, ``describe``; the CLI group registers it. It calls the Python API:
``Session.load`` then ``Session.describe`` (no worker is started, nothing is stored). The JSON shape
is documented in docs/describe.md.
"""

from __future__ import annotations

import json

import click

from auto_analyst.cli.context import CliContext, Command, only_a_dictionary
from auto_analyst.errors import BadInputError

__all__ = ["describe"]


@click.command("describe", cls=Command)
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the report and the description as JSON.")
@click.option("--sheet", default=None, help="Workbook sheet to load (default: every sheet).")
@click.option("--encoding", default=None, help="Text encoding, e.g. cp1252 (default: detected).")
@click.option("--delimiter", default=None, help="Field delimiter, e.g. ';' or 'tab' (default: detected).")
@click.option("--decimal", type=click.Choice([".", ","]), default=None, help="Decimal mark (default: detected).")
@click.option("--thousands", default=None, help="Thousands separator (default: detected).")
@click.option("--dayfirst/--monthfirst", default=None, help="Order of day and month in dates (default: detected).")
@click.option("--header-row", type=int, default=None, help="0-based row of the header (default: detected).")
@click.option("--dtype", "dtypes", multiple=True, metavar="COLUMN=TYPE",
              help="Type of a column (string, category, integer, float, boolean, datetime); repeatable.")
@click.option("--max-file-mb", type=int, default=None, help="Refuse larger files (default: the max_file_mb setting).")
@click.pass_context
def describe(ctx, file, as_json, sheet, encoding, delimiter, decimal, thousands, dayfirst, header_row, dtypes,
             max_file_mb):
    """Load FILE and print what loading found and the description the agents get."""
    options = {"encoding": encoding, "delimiter": {"tab": "\t", "\\t": "\t"}.get(delimiter, delimiter),
               "decimal": decimal, "thousands": thousands, "dayfirst": dayfirst, "header_row": header_row,
               "dtypes": _parse_dtypes(dtypes)}
    if max_file_mb is not None:
        options["max_file_mb"] = max_file_mb
    session = CliContext.of(ctx).analyst().session()
    if session.load(file, sheet=sheet, **options) == [] and not session.tables:
        raise BadInputError(only_a_dictionary([file]))  # a dictionary alone: nothing to describe (exit 2)
    described = session.describe()
    tables, description = described.tables, described.description
    if as_json:
        click.echo(json.dumps(described.to_dict(), ensure_ascii=False, indent=2, default=str))
        return
    for t, d in zip(tables, description.tables):
        click.echo(f"Table {t.name}")
        for line in t.report.summary_lines():
            click.echo(f"  {line}")
        for c in d.columns:
            extra = f"  [{c.note}]" if c.note else ""
            click.echo(f"  - {c.name}: {c.kind} ({c.dtype}), {c.missing} missing{extra}")
        for p in d.column_patterns:
            click.echo(f"  * {p}")
        if d.reshape_hint:
            click.echo(f"  hint: {d.reshape_hint}")
    click.echo("\nDescription given to the agents:")
    click.echo(description.to_prompt())


def _parse_dtypes(pairs: tuple[str, ...]) -> dict[str, str] | None:
    out = {}
    for pair in pairs:
        col, sep, typ = pair.rpartition("=")
        if not sep or not col:
            raise click.BadParameter(f"{pair!r} is not COLUMN=TYPE", param_hint="--dtype")
        out[col] = typ
    return out or None
