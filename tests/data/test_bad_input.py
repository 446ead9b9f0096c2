"""Files found in the wild or broken on purpose: each loads exactly, or is refused in one sentence.

The fuzz test feeds mutated copies of the shared cases (made in tmp_path, seeded) through
``load``: the answer is a table or a DataLoadError, never any other exception.
"""

from __future__ import annotations

import logging
import random
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from auto_analyst.cli.describe import describe
from auto_analyst.data.description import describe_tables
from auto_analyst.data.load import load
from auto_analyst.errors import DataLoadError


def _case_files(shared_dir):
    files = sorted((shared_dir / "cases").glob("*/data.csv"))
    assert len(files) >= 10
    return files


def _one_sentence(exc: DataLoadError, name: str) -> None:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    assert name in text, text


# ------------------------------------------------------------------ line ends
def _with_line_ends(data: bytes, how: str, seed: int) -> bytes:
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    if how == "mixed":
        r = random.Random(seed)
        return b"".join(line + r.choice([b"\r", b"\n", b"\r\n"]) for line in lines[:-1]) + lines[-1]
    return {"cr": b"\r", "crlf": b"\r\n", "lf": b"\n"}[how].join(lines)


@pytest.mark.parametrize("how", ["cr", "crlf", "lf", "mixed"])
def test_every_case_loads_the_same_with_any_line_ends(shared_dir, tmp_path, how):
    for i, src in enumerate(_case_files(shared_dir)):
        p = tmp_path / f"{src.parent.name}.csv"
        p.write_bytes(_with_line_ends(src.read_bytes(), how, seed=i))
        got, want = load(p), load(src)
        assert got.report.warnings == want.report.warnings, src.parent.name
        assert not any("\n" in str(v) for v in want.frame.astype(str).to_numpy().ravel())  # else values change too
        pd.testing.assert_frame_equal(got.frame, want.frame, obj=src.parent.name)


@pytest.mark.parametrize("line_end", [b"\r", b"\r\n", b"\n"])
def test_bom_and_lone_cr_all_numeric_columns(tmp_path, line_end):
    rows = [b"year,value,ratio"] + [b"%d,%d,%.2f" % (2000 + i, i * 7, i / 4) for i in range(40)]
    p = tmp_path / "numbers.csv"
    p.write_bytes(b"\xef\xbb\xbf" + line_end.join(rows) + line_end)
    t = load(p)
    assert list(t.frame.columns) == ["year", "value", "ratio"]
    assert t.frame.shape == (40, 3)
    assert t.frame["year"].dtype == "int64" and t.frame["ratio"].dtype == "float64"
    assert t.frame["value"].sum() == 7 * sum(range(40)) and t.frame["ratio"].iloc[-1] == 9.75
    assert t.report.encoding == "utf-8-sig"


def test_lone_cr_inside_quotes_and_large_file(tmp_path):
    head = b'id,memo,amount\r1,"two\rlines",1.5\r'
    body = b"".join(b"%d,plain,%d.25\r" % (i, i) for i in range(2, 40_000))
    p = tmp_path / "mac.csv"
    p.write_bytes(head + body)  # over the 256 KiB sample, with no LF anywhere
    t = load(p)
    assert t.frame.shape == (39_999, 3)
    assert t.frame["memo"].iloc[0] == "two\rlines" and t.frame["amount"].iloc[-1] == 39_999.25


def test_every_bench_table_loads_and_describes(shared_dir):
    tables = sorted((shared_dir / "bench" / "dabench-dev" / "tables").glob("*.csv"))
    assert len(tables) >= 20
    for p in tables:
        res = CliRunner().invoke(describe, [str(p), "--json"])
        assert res.exit_code == 0, (p.name, res.output[-300:])
        assert "Traceback" not in res.output


# ---------------------------------------------------------------- compressed
@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.xz", ".zip", ".gz"])
def test_compressed_files_with_one_table_load(shared_dir, tmp_path, suffix):
    import bz2
    import gzip
    import lzma
    import zipfile

    src = shared_dir / "cases" / "03_semicolon_decimal_comma" / "data.csv"
    data = src.read_bytes()
    p = tmp_path / f"turnover{suffix}"
    if suffix == ".zip":
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("export/turnover.csv", data)
            z.writestr("__MACOSX/export/._turnover.csv", b"\x00\x05")
    else:
        p.write_bytes({".csv.gz": gzip.compress, ".gz": gzip.compress, ".csv.bz2": bz2.compress,
                       ".csv.xz": lzma.compress}[suffix](data))
    t, want = load(p), load(src)
    assert t.name == "turnover"
    pd.testing.assert_frame_equal(t.frame, want.frame)
    assert t.report.compression == {".zip": "zip", ".csv.bz2": "bz2", ".csv.xz": "xz"}.get(suffix, "gzip")
    assert (t.report.delimiter, t.report.decimal) == (";", ",")
    assert sorted(x.name for x in tmp_path.iterdir()) == [p.name]  # nothing written beside it


def test_compressed_size_limit_applies_to_expanded_data(tmp_path):
    import gzip
    import zipfile

    payload = b"a,b\n" + b"1,2\n" * 700_000  # 2.7 MB, compresses to a few KB
    gz = tmp_path / "bomb.csv.gz"
    gz.write_bytes(gzip.compress(payload))
    assert gz.stat().st_size < 100_000
    with pytest.raises(DataLoadError, match="expands to more than the 1 MB limit") as info:
        load(gz, max_file_mb=1)
    _one_sentence(info.value, "bomb.csv.gz")
    assert len(load(gz, max_file_mb=3).frame) == 700_000
    z = tmp_path / "two.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("a.csv", b"x,y\n1,2\n")
        zf.writestr("b.csv", b"x,y\n3,4\n")
    with pytest.raises(DataLoadError, match=r"holds 2 tables \(a.csv, b.csv\)"):
        load(z)
    bad = tmp_path / "cut.csv.gz"
    bad.write_bytes(gzip.compress(payload)[:40])
    with pytest.raises(DataLoadError, match="not a readable gzip file") as info:
        load(bad)
    _one_sentence(info.value, "cut.csv.gz")


# ----------------------------------------------------------- ragged / quotes
def test_ragged_rows_keep_every_row_and_name_the_lines(tmp_path):
    lines = ["id,name,qty"] + [f"{i},n{i},{i}" for i in range(20)]
    lines[5] = "4,n4,4,EXTRA"  # line 6 of the file
    lines[9] = "8,n8"  # line 10
    p = tmp_path / "ragged.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = load(p)
    df = t.frame
    assert len(df) == 20 and df["id"].tolist() == list(range(20))
    assert list(df.columns) == ["id", "name", "qty", "column_4"]
    assert df.loc[4, "column_4"] == "EXTRA" and df["column_4"].notna().sum() == 1
    assert pd.isna(df.loc[8, "qty"]) and df.loc[7, "qty"] == 7
    assert t.report.warnings == [
        "1 row has more fields than the 3 header names (line 6); the extra values are kept in column_4",
        "1 short row padded with empty cells (line 10)",
    ]


def test_unclosed_quote_reads_every_row_and_warns(tmp_path):
    lines = ["a,b,c"] + [f"{i},x{i},{i}" for i in range(10)]
    lines[5] = '4,"bad,4'  # line 6: the quote never closes
    p = tmp_path / "quote.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = load(p)
    assert t.frame["a"].tolist() == list(range(10))
    assert t.frame["b"].tolist() == [f"x{i}" if i != 4 else '"bad' for i in range(10)]
    assert t.frame["c"].tolist() == list(range(10))
    assert t.report.warnings == ["a quote is never closed on line 6: it was read as a plain character and every "
                                 "row below it was read as usual"]


def test_stray_quotes_swallowing_rows_are_reported(tmp_path):
    lines = ["a,b,c"] + [f"{i},x{i},{i}" for i in range(10)]
    lines[3], lines[7] = '2,"x2,2', '6,x6",6'
    p = tmp_path / "stray.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = load(p)
    assert len(t.frame) == 6  # rows 3-5 are inside one quoted value, as the file says
    assert any("look like rows" in w and "row 3" in w for w in t.report.warnings), t.report.warnings


def test_a_field_of_200000_characters_loads_whole_and_is_clipped_in_descriptions(tmp_path):
    big = "".join(random.Random(1).choice("abcdefgh ") for _ in range(200_000))
    p = tmp_path / "long.csv"
    p.write_text(f'id,text,n\n1,"{big}",5\n2,short,6\n', encoding="utf-8")
    t = load(p)
    assert t.frame.loc[0, "text"] == big and t.frame["n"].tolist() == [5, 6]
    prompt = describe_tables({t.name: t}).to_prompt()
    assert len(prompt) < 2_000 and "… (200,000 characters)" in prompt
    res = CliRunner().invoke(describe, [str(p)])
    assert res.exit_code == 0 and len(res.output) < 4_000


# ------------------------------------------------------------ nested formats
def test_parquet_list_and_struct_columns_stay_values_and_are_described(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [1, 2, 3], "scores": [[1.5, 2.5], [], None],
                             "address": [{"city": "Oslo", "zip": "0150"}, {"city": "Bergen", "zip": None}, None]}),
                   tmp_path / "nested.parquet")
    t = load(tmp_path / "nested.parquet")
    df = t.frame
    assert df["scores"].tolist() == [[1.5, 2.5], [], None]
    assert df["address"].tolist()[:2] == [{"city": "Oslo", "zip": "0150"}, {"city": "Bergen", "zip": None}]
    assert t.report.warnings[0].startswith("column 'scores' holds lists (Parquet list<element: double>)")
    assert t.report.warnings[1].startswith("column 'address' holds objects (Parquet struct<city: string")
    cols = {c.name: c for c in describe_tables({t.name: t}).table().columns}
    assert (cols["scores"].kind, cols["scores"].missing, cols["scores"].distinct) == ("nested", 1, 2)
    assert cols["address"].examples[0] == '{"city": "Oslo", "zip": "0150"}'
    res = CliRunner().invoke(describe, [str(tmp_path / "nested.parquet")])
    assert res.exit_code == 0 and "scores: nested (object)" in res.output


def test_in_memory_frames_of_odd_objects_are_described():
    frame = pd.DataFrame({"d": [{"a": 1}, {"a": 2}, None], "mixed": [1, "two", 3.0], "s": [{1}, {2}, {1}]})
    cols = {c.name: c for c in describe_tables({"odd": frame}).table().columns}
    assert cols["d"].kind == "nested" and cols["d"].examples == ['{"a": 1}', '{"a": 2}']
    assert cols["s"].examples == ["{1}", "{2}"] and cols["s"].distinct == 2  # unhashable: described by its text
    assert cols["mixed"].distinct == 3


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_json_is_refused_in_one_sentence(tmp_path, depth):
    p = tmp_path / "deep.json"
    p.write_text("[" + '{"a":' * depth + "1" + "}" * depth + "]", encoding="utf-8")
    with pytest.raises(DataLoadError, match="more than 32 levels deep") as info:
        load(p)
    _one_sentence(info.value, "deep.json")


def test_json_nested_a_few_levels_still_loads(tmp_path):
    p = tmp_path / "ok.json"
    p.write_text('[{"id": 1, "a": {"b": {"c": 5}}}, {"id": 2, "a": {"b": {"c": 7}}}]', encoding="utf-8")
    assert load(p).frame["a.b.c"].tolist() == [5, 7]


# ------------------------------------------------------- unexpected failures
def test_an_unexpected_exception_becomes_a_data_load_error(tmp_path, monkeypatch, caplog):
    import importlib

    loader = importlib.import_module("auto_analyst.data.load")

    def broken(*args, **kwargs):
        raise ValueError("a bug deep in inference")

    monkeypatch.setattr(loader, "infer_column", broken)
    p = tmp_path / "fine.csv"
    p.write_text("a,b\n1,2\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="auto_analyst.data.load"):
        with pytest.raises(DataLoadError, match=r"^fine.csv could not be loaded \(an unexpected ValueError") as info:
            load(p)
    _one_sentence(info.value, "fine.csv")
    assert isinstance(info.value.__cause__, ValueError)
    assert any("fine.csv" in r.getMessage() and r.exc_info for r in caplog.records)


def _mutations(data: bytes, seed: int) -> dict[str, bytes]:
    r = random.Random(seed)
    flipped = bytearray(data)
    for _ in range(max(1, len(data) // 200)):
        flipped[r.randrange(len(flipped))] = r.randrange(256)
    lines = data.splitlines(keepends=True)
    header, body = lines[0], lines[1:]
    sep = max([b",", b";", b"\t"], key=header.count)
    col = r.randrange(header.count(sep) + 1)
    mixed = [header]
    for line in body:
        cells = line.rstrip(b"\r\n").split(sep)
        if col < len(cells):
            cells[col] = r.choice([b"12", b"abc", b"2024-01-05", b"", b"3.5", b"N/A", b'"q,uoted"', b"\xe9t\xe9"])
        mixed.append(sep.join(cells) + b"\n")
    return {
        "truncated": data[: r.randrange(1, len(data))],
        "flipped": bytes(flipped),
        "line_ends": _with_line_ends(data, r.choice(["cr", "crlf", "mixed"]), seed),
        "mixed_column": b"".join(mixed),
        "nul_bytes": data[: len(data) // 2] + b"\x00" * r.randrange(1, 64) + data[len(data) // 2:],
        "header_only": header,
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutated_cases_give_a_table_or_a_data_load_error(shared_dir, tmp_path, seed):
    outcomes = {"table": 0, "refused": 0}
    for i, src in enumerate(_case_files(shared_dir)):
        original = load(src)
        for kind, data in _mutations(src.read_bytes(), seed * 1000 + i).items():
            p = tmp_path / f"{src.parent.name}_{kind}.csv"
            p.write_bytes(data)
            try:
                t = load(p)
            except DataLoadError as exc:
                _one_sentence(exc, p.name)
                outcomes["refused"] += 1
                continue
            outcomes["table"] += 1
            assert len(t.frame) > 0 and t.report.n_rows == len(t.frame)
            if kind == "mixed_column":
                assert len(t.frame) == len(original.frame), (p.name, t.report.warnings)
            describe_tables({t.name: t}).to_prompt()  # describing never fails either
    assert outcomes["table"] > outcomes["refused"] > 0


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_utf8_with_one_damaged_byte_keeps_every_accent(tmp_path, bom):
    rows = [f"{i},Zürich {i},crème brûlée,{i}.5" for i in range(30)]
    data = bytearray(bom + ("id,city,dish,x\n" + "\n".join(rows) + "\n").encode("utf-8"))
    at = data.index("Zürich 7".encode()) + 1  # line 9: break the first byte of 'ü'
    data[at] = 0xFF
    p = tmp_path / "damaged.csv"
    p.write_bytes(bytes(data))
    t = load(p)
    assert t.frame["city"][7] in ("Z\ufffdrich 7", "Z\ufffd\ufffdrich 7")
    assert t.frame["city"][8] == "Zürich 8" and (t.frame["dish"] == "crème brûlée").all()
    assert t.frame["x"].sum() == pytest.approx(sum(range(30)) + 15)
    assert t.report.encoding == ("utf-8-sig" if bom else "utf-8")
    warned = [w for w in t.report.warnings if w.startswith("1 line has bytes that are not valid UTF-8 (line 9)")]
    assert len(warned) == 1, t.report.warnings


def test_unreadable_and_misdecoded_files_are_refused_in_one_sentence(tmp_path):
    import os

    p = tmp_path / "locked.csv"
    p.write_text("a,b\n1,2\n", encoding="utf-8")
    j = tmp_path / "accents.json"
    j.write_bytes('[{"city": "Zürich"}]'.encode("utf-8"))
    with pytest.raises(DataLoadError, match="is not valid ascii text") as info:
        load(j, encoding="ascii")
    _one_sentence(info.value, "accents.json")
    if os.geteuid() != 0:  # root reads anything
        p.chmod(0)
        with pytest.raises(DataLoadError, match="permission denied") as info:
            load(p)
        _one_sentence(info.value, "locked.csv")


def test_permission_and_memory_errors_get_their_own_sentence(tmp_path, monkeypatch):
    import importlib

    loader = importlib.import_module("auto_analyst.data.load")
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n", encoding="utf-8")
    for exc, words in ((PermissionError(13, "Permission denied"), "permission denied (check the file's permissions)"),
                       (MemoryError(), "is too large to load in the memory available")):
        def boom(*args, exc=exc, **kwargs):
            raise exc

        monkeypatch.setattr(loader, "read_text_table", boom)
        with pytest.raises(DataLoadError, match=re.escape(words)) as info:
            load(p)
        assert info.value.__cause__ is exc
        _one_sentence(info.value, "t.csv")
