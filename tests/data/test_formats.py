"""Other formats (Excel, Parquet, JSON, TSV), several tables, wide tables and the describe command."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from auto_analyst.cli.describe import describe
from auto_analyst.data.description import describe_tables
from auto_analyst.data.load import load, load_all
from auto_analyst.errors import DataLoadError


def _frame(seed: int, n: int = 30) -> pd.DataFrame:
    r = random.Random(seed)
    return pd.DataFrame({
        "zip": [f"{r.randint(0, 9999):05d}" for _ in range(n)],
        "city": [r.choice(["Málaga", "Zürich", "Reykjavík"]) for _ in range(n)],
        "amount": [f"${r.uniform(1, 5000):,.2f}" for _ in range(n)],
        "when": [(pd.Timestamp("2024-01-01") + pd.Timedelta(days=r.randint(0, 300))).strftime("%d/%m/%Y")
                 for _ in range(n)],
        "qty": [r.randint(1, 9) for _ in range(n)],
    })


@pytest.mark.parametrize("seed", [1, 2])
def test_xlsx_every_sheet_is_a_table(tmp_path, seed):
    p = tmp_path / "Book 1.xlsx"
    a, b = _frame(seed), _frame(seed + 10, 12)
    with pd.ExcelWriter(p) as w:
        pd.DataFrame([["Exported from ERP"], [None]]).to_excel(w, sheet_name="Sales", header=False, index=False)
        a.to_excel(w, sheet_name="Sales", startrow=3, index=False)
        b.to_excel(w, sheet_name="Q2 data", index=False)
        pd.DataFrame().to_excel(w, sheet_name="empty")
    tables = load_all(p)
    assert [t.name for t in tables] == ["book_1_sales", "book_1_q2_data"]
    sales = tables[0]
    assert sales.report.header_row == 3 and sales.report.skipped_rows == ["Exported from ERP"]
    df = sales.frame
    assert df["zip"].tolist() == a["zip"].tolist()
    assert df["amount"].dtype == "float64" and pd.api.types.is_datetime64_any_dtype(df["when"])
    assert df["qty"].tolist() == a["qty"].tolist()
    assert load(p, sheet="Q2 data").frame.shape == (12, 5)
    with pytest.raises(DataLoadError, match="no sheet 'Nope'"):
        load(p, sheet="Nope")


def test_parquet_and_json_text_columns_are_inferred(tmp_path):
    df = _frame(3)
    df.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "t.json").write_text(json.dumps({"data": df.to_dict("records")}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in df.to_dict("records")), encoding="utf-8")
    for name in ("t.parquet", "t.json", "t.jsonl"):
        out = load(tmp_path / name).frame
        assert out["zip"].tolist() == df["zip"].tolist(), name
        assert out["amount"].dtype == "float64" and out["qty"].dtype == "int64", name
        assert pd.api.types.is_datetime64_any_dtype(out["when"]), name


def test_tsv_and_several_tables_in_one_session(tmp_path):
    a, b = _frame(4), _frame(5)
    a.to_csv(tmp_path / "Sales 2023.tsv", sep="\t", index=False)
    b.to_csv(tmp_path / "class.csv", sep=";", index=False)
    tables = {t.name: t for t in (load(tmp_path / "Sales 2023.tsv"), load(tmp_path / "class.csv"))}
    assert list(tables) == ["sales_2023", "t_class"]
    desc = describe_tables(tables)
    assert [t.name for t in desc.tables] == ["sales_2023", "t_class"]
    assert any("currency" in c.note for c in desc.table("sales_2023").columns)


def test_wide_table_is_described_by_patterns(tmp_path):
    days = pd.date_range("2024-01-01", "2024-12-31").strftime("%Y-%m-%d").tolist()
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((8, len(days))).round(3), columns=days)
    df.insert(0, "store", [f"S{i:02d}" for i in range(8)])
    df.to_csv(tmp_path / "wide.csv", index=False)
    t = load(tmp_path / "wide.csv")
    assert t.frame.shape == (8, 367) and t.frame["2024-02-29"].dtype == "float64"
    d = describe_tables({t.name: t}).table()
    assert d.column_patterns[0].startswith("one column per day 2024-01-01..2024-12-31 (366 numeric columns")
    assert "melt" in d.reshape_hint and [c.name for c in d.columns] == ["store"]


def test_describe_command_text_json_and_errors(tmp_path, shared_dir):
    case = shared_dir / "cases" / "16_numeric_text_with_placeholders_inf" / "data.csv"
    res = CliRunner().invoke(describe, [str(case)])
    assert res.exit_code == 0 and "'inf' → missing" in res.output
    res = CliRunner().invoke(describe, [str(case), "--json"])
    payload = json.loads(res.output)
    assert payload["tables"][0]["report"]["columns"][2]["n_inf"] == 1
    assert payload["description"]["tables"][0]["n_rows"] == 65
    res = CliRunner().invoke(describe, [str(tmp_path / "missing.csv")])
    assert res.exit_code == 2 and "Traceback" not in res.output and res.output.count("\n") == 1
    res = CliRunner().invoke(describe, [str(case), "--dtype", "stock=float", "--json"])
    assert json.loads(res.output)["tables"][0]["report"]["columns"][3]["dtype"] == "float64"


def test_a_header_over_two_rows_names_each_column_from_both(tmp_path):
    # breaker W3: 'Revenue' merged over two columns above '2022' | '2023' read 2022 as data (total 2112)
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append(["Region", "Revenue", None, "Units"])
    ws.merge_cells("B1:C1")
    ws.append([None, "2022", "2023", None])
    for region, a, b, units in (("North", 10, 20, 1), ("South", 30, 70, 2), ("East", 50, 120, 3)):
        ws.append([region, a, b, units])
    path = tmp_path / "merged.xlsx"
    wb.save(path)
    t = load(path)
    assert list(t.frame.columns) == ["Region", "Revenue 2022", "Revenue 2023", "Units"]
    assert t.frame["Revenue 2022"].sum() == 90 and t.frame["Revenue 2023"].sum() == 210 and len(t.frame) == 3
    assert any("two rows" in w for w in t.report.warnings)
    # one header row with an unnamed column and an ordinary first data row stays one header row
    wb = Workbook()
    ws = wb.active
    ws.append(["id", "amount", None])
    for i in range(5):
        ws.append([i + 1, 10.5 * i, "x"])
    wb.save(path)
    assert len(load(path).frame) == 5
