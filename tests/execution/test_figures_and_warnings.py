"""seaborn and matplotlib figures come back as PNG files with their titles; warnings are kept apart from stdout."""

from __future__ import annotations

from pathlib import Path


def test_seaborn_axes_and_figure_level_plots_come_back_as_png_with_titles(sandbox):
    code = (
        "import seaborn as sns\n"
        "ax = sns.barplot(data=df, x='region', y='amount')\n"
        "ax.set_title('Amount by region')\n"
        "show(ax)\n"
        "grid = sns.relplot(data=df, x='day', y='amount', hue='region')\n"
        "grid.figure.suptitle('Amounts over time')\n"
        "show(grid)\n"
    )
    r = sandbox.run(code)
    assert r.ok, (r.error, r.traceback)
    assert [(f.kind, f.title) for f in r.figures] == [("png", "Amount by region"), ("png", "Amounts over time")]
    for f in r.figures:
        assert Path(f.path).read_bytes().startswith(b"\x89PNG")


def test_a_seaborn_plot_left_open_is_captured_at_the_end(sandbox):
    r = sandbox.run("import seaborn as sns\nsns.histplot(df['amount']).set_title('Spread of amounts')")
    assert r.ok and [(f.kind, f.title) for f in r.figures] == [("png", "Spread of amounts")]


def test_warnings_are_not_in_stdout(sandbox):
    code = ("import warnings\n"
            "warnings.warn('this API will change', FutureWarning)\n"
            "print('total', df['amount'].sum())\n")
    r = sandbox.run(code)
    assert r.ok
    assert r.stdout == "total 67.5\n"
    assert r.warnings == ["FutureWarning: this API will change"]
