"""Generated text files of each kind: encodings, dialects, layout around the data, bad files."""

from __future__ import annotations

import csv
import io
import random

import pandas as pd
import pytest

from auto_analyst.data.load import load
from auto_analyst.errors import DataLoadError

CITIES = ["Málaga", "Montréal", "Zürich", "Göteborg", "Besançon", "Reykjavík", "Córdoba", "Malmö", "Ærøskøbing",
          "São Paulo", "Kraków", "Plain Town"]


def _rows(seed: int, n: int) -> list[list[str]]:
    r = random.Random(seed)
    return [[f"R{i:04d}", r.choice(CITIES), f"crème – {r.randint(1, 9)}", f"{r.uniform(1, 999):.2f}"] for i in range(n)]


def _write(path, rows, header, *, delimiter=",", encoding="utf-8", newline="\r\n", prefix=""):
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator=newline)
    w.writerow(header)
    w.writerows(rows)
    path.write_bytes((prefix + buf.getvalue()).encode(encoding))
    return path


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16", "utf-16-le"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_encodings_round_trip_accents(tmp_path, encoding, seed):
    rows = _rows(seed, random.Random(seed).randint(8, 80))
    if encoding == "latin-1":
        rows = [[c.replace("–", "-") for c in r] for r in rows]
    p = _write(tmp_path / "e.csv", rows, ["id", "city", "note", "amount €"], encoding=encoding)
    t = load(p)
    assert list(t.frame.columns) == ["id", "city", "note", "amount €"]
    assert t.frame["city"].tolist() == [r[1] for r in rows]
    assert t.frame["note"].tolist() == [r[2] for r in rows]
    assert t.frame["amount €"].dtype == "float64"


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_latin1_without_cp1252_only_bytes(tmp_path, seed):
    rows = [[c.replace("–", "-") for c in r] for r in _rows(seed, 30) if "ł" not in r[1] and "Kraków" != r[1]]
    p = _write(tmp_path / "l.csv", rows, ["id", "city", "note", "amount"], encoding="latin-1")
    assert load(p).frame["city"].tolist() == [r[1] for r in rows]


def test_utf8_sample_then_cp1252_later_in_file(tmp_path):
    rows = [[f"R{i}", "Plain", "x", "1.5"] for i in range(20000)] + [["R", "Montréal", "x", "2.5"]]
    p = _write(tmp_path / "late.csv", rows, ["id", "city", "note", "amount"], encoding="cp1252")
    assert load(p).frame["city"].iloc[-1] == "Montréal"


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
@pytest.mark.parametrize("seed", [7, 8])
def test_delimiters_with_quoted_delimiters_and_newlines(tmp_path, delimiter, seed):
    r = random.Random(seed)
    rows = [[f"id{i}", f"text {delimiter} with delimiter", "two\nlines" if i % 3 == 0 else "one",
             str(r.randint(0, 500))] for i in range(r.randint(5, 50))]
    p = _write(tmp_path / "d.csv", rows, ["id", "text", "memo", "qty"], delimiter=delimiter)
    t = load(p)
    assert t.report.delimiter == delimiter
    assert t.frame.shape == (len(rows), 4)
    assert t.frame["memo"].tolist() == [row[2] for row in rows]
    assert t.frame["qty"].tolist() == [int(row[3]) for row in rows]


@pytest.mark.parametrize("thousands", [".", " ", "\u00a0"])
@pytest.mark.parametrize("seed", [9, 10])
def test_decimal_comma_with_thousands(tmp_path, thousands, seed):
    r = random.Random(seed)
    values = [round(r.uniform(-50_000, 50_000), 2) for _ in range(40)]

    def fmt(v):
        s = f"{abs(v):,.2f}".replace(",", "X").replace(".", ",").replace("X", thousands)
        return ("-" if v < 0 else "") + s

    rows = [[f"P{i}", fmt(v), str(r.randint(1, 9))] for i, v in enumerate(values)]
    p = _write(tmp_path / "dc.csv", rows, ["product", "amount", "qty"], delimiter=";")
    t = load(p)
    assert t.report.decimal == ","
    assert t.frame["amount"].tolist() == pytest.approx(values)


def test_metadata_lines_totals_and_notes(tmp_path):
    text = ("Sales report — export\r\nGenerated: 2024-03-01 by ERP,,,\r\n,,,\r\n"
            " id , region,amount,\r\n1,North,10.5,\r\n2,South,20,\r\n,,,\r\n3,East,5,\r\n"
            "Total,,35.5,\r\nSource: internal ledger, not audited\r\n")
    p = tmp_path / "m.csv"
    p.write_text(text, encoding="utf-8")
    t = load(p)
    assert list(t.frame.columns) == ["id", "region", "amount"]
    assert t.frame["amount"].sum() == pytest.approx(35.5)
    assert t.report.header_row == 3
    assert len(t.report.skipped_rows) == 4  # 2 metadata lines, the totals row, the note


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_duplicate_and_empty_headers_and_empty_columns(tmp_path, seed):
    r = random.Random(seed)
    rows = [[str(i), str(r.randint(1, 9)), "", str(r.randint(1, 9)), "x"] for i in range(10)]
    p = _write(tmp_path / "h.csv", rows, ["id", "value", "", "value", ""])
    t = load(p)
    assert list(t.frame.columns) == ["id", "value", "value_2", "column_5"]


def test_ragged_rows_repaired_or_refused(tmp_path):
    p = tmp_path / "short.csv"
    p.write_text("a,b,c\n1,2,3\n4,5\n6,7,8,\n", encoding="utf-8")
    t = load(p)
    assert t.frame.shape == (3, 3) and t.frame["c"].isna().sum() == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n" + "".join(f"{i},{i},{i},{i},{i}\n" if i % 4 == 0 else f"{i},{i},{i}\n" for i in range(40)))
    with pytest.raises(DataLoadError, match="ragged"):
        load(bad)


@pytest.mark.parametrize("content, match", [
    (b"", "empty"), (b"  \r\n\r\n", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, "binary"),
])
def test_bad_files_fail_with_one_sentence(tmp_path, content, match):
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    with pytest.raises(DataLoadError, match=match) as info:
        load(p)
    assert "\n" not in str(info.value)


def test_missing_unknown_and_oversize(tmp_path):
    with pytest.raises(DataLoadError, match="No such file"):
        load(tmp_path / "nope.csv")
    (tmp_path / "x.docx").write_bytes(b"PK")
    with pytest.raises(DataLoadError, match="Unknown file type"):
        load(tmp_path / "x.docx")
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * 300_000)
    with pytest.raises(DataLoadError, match="limit"):
        load(big, max_file_mb=1)


def test_options_override_guesses(tmp_path):
    p = tmp_path / "o.csv"
    p.write_bytes("meta\nid;v;d\n1;1,5;01/02/2024\n2;2,5;03/04/2024\n".encode("cp1252"))
    t = load(p, encoding="cp1252", delimiter=";", decimal=",", header_row=1, dayfirst=True, dtypes={"id": "string"})
    assert t.frame["v"].tolist() == [1.5, 2.5]
    assert t.frame["d"].tolist() == [pd.Timestamp("2024-02-01"), pd.Timestamp("2024-04-03")]
    assert pd.api.types.is_string_dtype(t.frame["id"])
    assert load(p, delimiter=";", header_row=1, dayfirst=False).frame["d"][0] == pd.Timestamp("2024-01-02")
    with pytest.raises(DataLoadError, match="Did you mean"):
        load(p, header_row=1, dtypes={"vv": "float"})


def test_input_file_untouched_and_nothing_written(tmp_path):
    p = _write(tmp_path / "u.csv", _rows(3, 20), ["id", "city", "note", "amount"], encoding="cp1252")
    before, mtime = p.read_bytes(), p.stat().st_mtime_ns
    load(p)
    assert p.read_bytes() == before and p.stat().st_mtime_ns == mtime
    assert sorted(x.name for x in tmp_path.iterdir()) == ["u.csv"]
