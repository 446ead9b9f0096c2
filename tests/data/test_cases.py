"""Every folder of ../shared/cases loads with the right columns and types, and its expected
values follow from the loaded table with plain pandas. Cases are used in place, never copied."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auto_analyst.data.description import describe_tables
from auto_analyst.data.load import load


def _case(shared_dir, name):
    folder = shared_dir / "cases" / name
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return load(folder / "data.csv"), expected


def test_every_case_loads_and_is_described(shared_dir):
    folders = sorted(p for p in (shared_dir / "cases").iterdir() if p.is_dir())
    assert folders
    for folder in folders:
        t = load(folder / "data.csv")
        assert len(t.frame) > 0 and t.frame.shape[1] >= 2, folder.name
        assert all(c == c.strip() for c in t.frame.columns)
        desc = describe_tables({t.name: t})
        assert desc.tables[0].n_rows == len(t.frame)


def test_01_cp1252_accents_and_euro_sign(shared_dir):
    t, exp = _case(shared_dir, "01_cp1252_encoding")
    df = t.frame
    assert t.report.encoding == "cp1252"
    assert "Revenue (€)" in df.columns
    by_city = df.groupby("city")["Revenue (€)"].sum()
    assert by_city.idxmax() == exp["answer"]["top_city"]
    assert by_city.max() == pytest.approx(exp["answer"]["top_city_revenue_eur"], abs=0.01)
    assert (df["city"] == "Montréal").sum() == exp["answer"]["orders_from_montreal"]
    for city, total in exp["revenue_by_city_eur"].items():
        assert by_city[city] == pytest.approx(total, abs=0.01)
    assert not df["product_note"].str.contains("\ufffd|Ã", regex=True).any()


def test_02_bom_and_header_spaces(shared_dir):
    t, exp = _case(shared_dir, "02_bom_header_spaces")
    df = t.frame
    assert list(df.columns) == ["Description", "Amount", "Paid By"]
    assert t.report.column("Amount").original == " Amount"
    assert df["Amount"].nlargest(5).sum() == exp["answer"]["total_of_top_5_payments"]
    totals = df.groupby("Paid By")["Amount"].sum()
    assert totals.idxmax() == exp["answer"]["funding_source_with_highest_total"]
    assert totals.max() == exp["answer"]["that_source_total"]


def test_03_semicolon_decimal_comma_thousands_dot(shared_dir):
    t, exp = _case(shared_dir, "03_semicolon_decimal_comma")
    df = t.frame
    assert (t.report.delimiter, t.report.decimal, t.report.thousands) == (";", ",", ".")
    by_cat = df.groupby("category")["turnover"].sum()
    for cat, total in exp["answer"]["turnover_by_category"].items():
        assert by_cat[cat] == pytest.approx(total, abs=0.01)
    price = df.groupby("category")["unit_price"].mean()
    assert price.idxmax() == exp["answer"]["category_with_highest_avg_unit_price"]
    assert price.max() == pytest.approx(exp["answer"]["that_avg_unit_price"], abs=0.01)
    assert df["turnover"].sum() == pytest.approx(exp["answer"]["grand_total_turnover"], abs=0.01)


def test_05_only_percent_cells_are_divided(shared_dir):
    t, exp = _case(shared_dir, "05_percent_strings_mixed")
    df = t.frame
    rate = df["conversion_rate"]
    assert rate.dtype == "float64" and rate.isna().sum() == 2
    assert rate.mean() == pytest.approx(exp["answer"]["average_conversion_rate_simple_mean"], abs=0.0005)
    best = df.loc[rate.idxmax()]
    assert best["campaign"] == exp["answer"]["best_campaign"]
    assert best["conversion_rate"] == pytest.approx(exp["answer"]["best_rate"], abs=0.0005)
    weighted = (rate * df["visitors"]).sum() / df.loc[rate.notna(), "visitors"].sum()
    assert weighted == pytest.approx(exp["also_acceptable"]["visitor_weighted_average_rate"], abs=0.0005)


def test_07_identifiers_keep_leading_zeros(shared_dir):
    t, exp = _case(shared_dir, "07_zip_codes_leading_zeros")
    df = t.frame
    for col in ("customer_no", "zip", "store_code"):
        assert pd.api.types.is_string_dtype(df[col]), col
    assert df.loc[0, "zip"] == "02134"
    assert (df["zip"] == "02134").sum() == exp["answer"]["orders_from_zip_02134"]
    spend = df.groupby("zip")["spend"].sum()
    assert spend.idxmax() == exp["answer"]["zip_with_highest_total_spend"]
    assert spend.max() == pytest.approx(exp["answer"]["that_zip_total_spend"], abs=0.01)
    assert (df["store_code"] == "0042").sum() == exp["answer"]["orders_at_store_0042"]


def test_08_method_names_kept_and_noted(shared_dir):
    t, exp = _case(shared_dir, "08_columns_named_like_methods")
    df = t.frame
    assert {"count", "size", "index"} <= set(df.columns)
    notes = t.report.column_notes()
    assert all("df['" + c + "']" in notes[c] for c in ("count", "size", "index"))
    assert df.groupby("lake")["count"].sum().to_dict() == exp["answer"]["total_fish_count_by_lake"]
    size = df.groupby("lake")["size"].mean()
    assert size.idxmax() == exp["answer"]["lake_with_largest_average_size"]
    assert size.max() == pytest.approx(exp["answer"]["that_average_size"], abs=0.01)
    idx = df.groupby("lake")["index"].mean()
    assert idx.idxmax() == exp["answer"]["lake_with_best_water_quality_index"]
    desc = describe_tables({t.name: t}).table()
    assert "df['count']" in next(c.note for c in desc.columns if c.name == "count")


def test_10_columns_and_values(shared_dir):
    t, exp = _case(shared_dir, "10_misspelled_and_missing_column")
    df = t.frame
    assert "satisfaction" not in " ".join(df.columns)
    means = df.groupby("carrier")["delivery_time_hours"].mean()
    for k, v in exp["turns"][0]["answer"]["avg_delivery_time_hours_by_carrier"].items():
        assert means[k] == pytest.approx(v, abs=0.01)
    r = df["package_weight_kg"].corr(df["delivery_time_hours"])
    assert r == pytest.approx(exp["turns"][2]["answer"]["pearson_r"], abs=0.005)


def test_12_numeric_with_nan_and_yes_no_booleans(shared_dir):
    t, exp = _case(shared_dir, "12_ml_categorical_missing")
    df = t.frame
    for col in ("monthly_fee", "tenure_months", "support_calls"):
        assert df[col].dtype == "float64", col
    assert df["monthly_fee"].isna().sum() > 0
    assert df["autopay"].dtype == bool and df["churned"].dtype == bool
    assert df["churned"].mean() == pytest.approx(exp["reference_details"]["churn_rate"])
    assert df["plan"].isna().sum() > 0 and pd.api.types.is_string_dtype(df["plan"])


def test_13_timestamps_parse_and_resample(shared_dir):
    t, exp = _case(shared_dir, "13_timeseries_resample")
    df = t.frame
    assert pd.api.types.is_datetime64_any_dtype(df["reading_time"])
    monthly = df.set_index("reading_time")["kwh"].resample("MS").sum()
    got = {k.strftime("%Y-%m"): v for k, v in monthly.items()}
    for month, total in exp["answer"]["monthly_total_kwh"].items():
        assert got[month] == pytest.approx(total, abs=0.01)
    feb = df[df["reading_time"].dt.month == 2]
    assert feb["kwh"].sum() / 29 == pytest.approx(exp["answer"]["average_daily_kwh_february"], abs=0.01)


def test_14_many_products(shared_dir):
    t, exp = _case(shared_dir, "14_plot_too_many_categories")
    sales = t.frame.groupby("product")["sales"].sum().sort_values(ascending=False)
    assert len(sales) == exp["answer"]["n_products"]
    assert list(sales.index[:3]) == exp["answer"]["top3_products"]
    assert sales.sum() == pytest.approx(exp["answer"]["grand_total_sales"], abs=0.01)
    assert sales.iloc[10:].sum() == pytest.approx(exp["answer"]["other_sales_if_top10"], abs=0.01)


def test_16_placeholders_and_inf_are_missing(shared_dir):
    t, exp = _case(shared_dir, "16_numeric_text_with_placeholders_inf")
    df = t.frame
    assert df["price"].dtype == "float64"
    assert df["price"].isna().sum() == exp["answer"]["products_without_a_valid_price"]
    means = df.groupby("category")["price"].mean()
    for cat, v in exp["answer"]["average_price_by_category"].items():
        assert means[cat] == pytest.approx(v, abs=0.01)
    rep = t.report.column("price")
    assert rep.n_inf == 1 and rep.n_placeholders + rep.n_inf + rep.n_unparsed == 21


def test_18_version_strings_stay_text(shared_dir):
    t, exp = _case(shared_dir, "18_version_strings_not_dates")
    df = t.frame
    assert pd.api.types.is_string_dtype(df["app_version"])
    counts = df["app_version"].value_counts()
    for version, n in exp["answer"]["reports_per_version_in_version_order"].items():
        assert counts[version] == n
    assert counts["6.10.1"] == exp["answer"]["reports_for_newest_stable"]
