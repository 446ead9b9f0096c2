"""Generated columns of each value kind: numbers as text, dates, identifiers, booleans."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from auto_analyst.data.load import load


def _csv(tmp_path, header, rows, name="v.csv", delimiter=","):
    def q(c):
        return f'"{c}"' if (delimiter in c or '"' in c) else c

    p = tmp_path / name
    p.write_text("\n".join([delimiter.join(header)] + [delimiter.join(q(c) for c in r) for r in rows]) + "\n",
                 encoding="utf-8")
    return p


def _money(v: float, style: str) -> str:
    s = f"{abs(v):,.2f}"
    if style == "usd":
        return f"(${s})" if v < 0 else f"${s}"
    if style == "eur":
        s = s.replace(",", "X").replace(".", ",").replace("X", ".")
        return f"-€ {s}" if v < 0 else f"€ {s}"
    if style == "acct":
        return f"({s})" if v < 0 else s
    return f"{v:.2f} USD"


@pytest.mark.parametrize("style", ["usd", "eur", "acct", "code"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_currency_thousands_and_accounting_negatives(tmp_path, style, seed):
    r = random.Random(seed)
    values = [round(r.uniform(-5000, 5000), 2) for _ in range(r.randint(10, 60))]
    rows = [[f"T{i}", _money(v, style)] for i, v in enumerate(values)]
    blanks = r.sample(range(len(rows)), 3)
    for b in blanks:
        rows[b][1] = r.choice(["N/A", "-", "", "#DIV/0!", "n.a.", "TBD", "unknown"])
    t = load(_csv(tmp_path, ["id", "amount"], rows))
    got = t.frame["amount"]
    assert got.dtype == "float64"
    expected = [None if i in blanks else v for i, v in enumerate(values)]
    assert got.isna().sum() == 3
    assert [None if pd.isna(g) else round(g, 2) for g in got] == expected
    assert t.report.column("amount").n_placeholders == 3


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_percent_cells_only_are_divided(tmp_path, seed):
    r = random.Random(seed)
    truth, cells = [], []
    for _ in range(30):
        v = round(r.uniform(0.001, 0.3), 4)
        truth.append(v)
        cells.append(r.choice([f"{v * 100:.2f}%", f" {v * 100:.2f} %", f"{v:.4f}"]))
    t = load(_csv(tmp_path, ["k", "rate"], [[str(i), c] for i, c in enumerate(cells)]))
    assert t.frame["rate"].tolist() == pytest.approx(truth, abs=1e-4)


def test_inf_and_unparsed_become_missing_and_counted(tmp_path):
    rows = [[str(i), f"{i}.5"] for i in range(40)] + [["40", "inf"], ["41", "-Infinity"], ["42", "about 3"]]
    t = load(_csv(tmp_path, ["k", "x"], rows))
    rep = t.report.column("x")
    assert (rep.n_inf, rep.n_unparsed, rep.unparsed_examples) == (2, 1, ["about 3"])
    assert t.frame["x"].isna().sum() == 3 and t.frame["x"].abs().max() < 100


def test_mostly_text_stays_text(tmp_path):
    rows = [[str(i), r] for i, r in enumerate(["12", "A7", "B9", "C1", "44", "D2"] * 5)]
    t = load(_csv(tmp_path, ["k", "code"], rows))
    assert pd.api.types.is_string_dtype(t.frame["code"]) and t.frame["code"][1] == "A7"


@pytest.mark.parametrize("fmt, dayfirst", [("%d/%m/%Y", True), ("%m/%d/%Y", False), ("%d.%m.%Y", True),
                                           ("%Y-%m-%d", None), ("%d %B %Y", None), ("%b %d, %Y", None),
                                           ("%Y-%m-%d %H:%M:%S", None), ("%Y-%m-%dT%H:%M", None)])
@pytest.mark.parametrize("seed", [7, 8])
def test_dates_of_many_formats_unsorted(tmp_path, fmt, dayfirst, seed):
    r = random.Random(seed)
    days = [pd.Timestamp("2023-01-01") + pd.Timedelta(days=r.randint(0, 700), minutes=15 * r.randint(0, 90))
            for _ in range(200)]
    if "%H" not in fmt:
        days = [d.normalize() for d in days]
    if dayfirst is not None:  # the only row that tells day from month comes last
        days = [d.replace(day=min(d.day, 12)) for d in days[:-1]] + [pd.Timestamp("2024-05-28")]
    days = [d.replace(second=0) for d in days]
    t = load(_csv(tmp_path, ["k", "when"], [[str(i), d.strftime(fmt)] for i, d in enumerate(days)]))
    col = t.frame["when"]
    assert pd.api.types.is_datetime64_any_dtype(col), t.report.column("when")
    assert list(col) == days


@pytest.mark.parametrize("values", [
    ["6.10.1", "6.9.2", "6.8.0", "6.11.0b1", "7.0.0"], ["1.2.3", "10.20.30", "2.0.1"],
    ["A-12-34", "B-01-02"], ["12-34-56", "11-22-33", "10-40-50"], ["2.1.3-beta", "2.1.4", "2.2.0"],
])
def test_versions_and_codes_are_not_dates(tmp_path, values):
    rows = [[str(i), values[i % len(values)]] for i in range(30)]
    t = load(_csv(tmp_path, ["k", "v"], rows))
    assert pd.api.types.is_string_dtype(t.frame["v"]), t.report.column("v")
    assert t.frame["v"].tolist() == [r[1] for r in rows]


@pytest.mark.parametrize("seed", [9, 10, 11])
def test_identifiers_keep_every_character(tmp_path, seed):
    r = random.Random(seed)
    n = 40
    zips = [f"{r.randint(0, 99999):05d}" for _ in range(n)]
    zips[0] = "02134"
    accounts = [str(r.randint(10**18, 9 * 10**18 + 10**18 - 1)) for _ in range(n)]
    accounts[3] = ""  # a blank must not turn the column into float
    phones = [f"+49 {r.randint(100, 999)} {r.randint(1000000, 9999999)}" for _ in range(n)]
    qty = [str(r.randint(1, 90)) for _ in range(n)]
    t = load(_csv(tmp_path, ["zip", "account", "phone", "qty"], list(map(list, zip(zips, accounts, phones, qty)))))
    df = t.frame
    assert df["zip"].tolist() == zips
    assert df["account"].tolist()[:3] == accounts[:3] and pd.isna(df["account"][3])
    assert df["phone"].tolist() == phones
    assert df["qty"].dtype == "int64"


@pytest.mark.parametrize("values, expect_bool", [
    (["Yes", "No", "yes", "N", ""], True), (["Y", "N"], True), (["TRUE", "FALSE", "true"], True),
    (["Yes", "Yes"], False), (["yes", "no", "maybe"], False), (["1", "0"], False), (["M", "F"], False),
])
def test_booleans_only_when_unambiguous(tmp_path, values, expect_bool):
    rows = [[str(i), values[i % len(values)]] for i in range(20)]
    col = load(_csv(tmp_path, ["k", "flag"], rows)).frame["flag"]
    assert pd.api.types.is_bool_dtype(col) == expect_bool
    if expect_bool:
        truth = [{"y": True, "n": False, "t": True, "f": False}.get(r[1][:1].lower()) for r in rows]
        assert [None if pd.isna(v) else bool(v) for v in col] == truth
