"""Comparatives, compass words, ranges, changes and fast/slow (issue 25): 65 questions on public and made-up tables,
each asked of a fresh session of the embedded model and judged against pandas (docs/offline.md, "Comparisons, compass
words, ranges and changes").

Usage:
    python benchmarks/bench_comparatives.py tune|held|all [show]

``held`` is every third question (kept aside while tuning), ``tune`` the rest. Needs the pip package vega_datasets
(airports, stocks, barley ship with it) and the tables of datasets/. A question expected to decline ("decline")
counts as right when it declines; a name is right when the first line of the answer carries it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from vega_datasets import data

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


def build(d: str) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """The tables (vega, shipped, made up with fixed seeds) and the CSV files they are written to under ``d``."""
    out = {}
    out["airports"], out["stocks"], out["barley"] = data.airports(), data.stocks(), data.barley()
    for n in ("grunfeld", "iris", "us_macro"):
        out[n] = pd.read_csv(DATASETS / f"{n}.csv")
    r = np.random.default_rng(3)
    n = 60
    out["cities"] = pd.DataFrame({"city": [f"City{i:02d}" for i in range(n)],
                                  "country": r.choice(["Aland", "Borea", "Caspia"], n),
                                  "lat": r.uniform(-50, 70, n).round(3), "lon": r.uniform(-170, 170, n).round(3),
                                  "population": (r.lognormal(13.5, 1.2, n)).round(0).astype(int)})
    out["races"] = pd.DataFrame({"runner": [f"Runner{i:02d}" for i in range(40)],
                                 "club": r.choice(["Harriers", "Striders", "Pacers"], 40),
                                 "age": r.integers(18, 70, 40),
                                 "finish_time_min": r.uniform(150, 320, 40).round(1)})
    out["cars"] = pd.DataFrame({"model": [f"Model{i:02d}" for i in range(30)],
                                "top_speed_kmh": r.uniform(140, 300, 30).round(0),
                                "acceleration_s": r.uniform(3, 14, 30).round(1),
                                "weight_kg": r.uniform(900, 2500, 30).round(0)})
    out["yearly"] = pd.DataFrame({"year": range(2015, 2024), "revenue": r.uniform(100, 200, 9).round(1),
                                  "customers": r.integers(1000, 5000, 9)})
    out["laps"] = pd.DataFrame({"driver": [f"D{i}" for i in range(20)], "team": r.choice(["Red", "Blue"], 20),
                                "pace": r.uniform(60, 90, 20).round(2), "score": r.uniform(0, 10, 20).round(2)})
    paths = {}
    for k, f in out.items():
        p = f"{d}/{k}.csv"; f.to_csv(p, index=False); paths[k] = p
    return out, paths


def Q(t):
    """(id, table, question, expected): a number, a list of numbers, ('name', accepted...), or 'decline'."""
    a, s, b, g, i, u = t["airports"], t["stocks"], t["barley"], t["grunfeld"], t["iris"], t["us_macro"]
    c, ra, ca, y, la = t["cities"], t["races"], t["cars"], t["yearly"], t["laps"]
    gm = g[g.firm == "General Motors"].set_index("year"); ibm = g[g.firm == "IBM"].set_index("year")
    byy = b.groupby("year")["yield"].sum(); umy = u.groupby("year")["realgdp"].mean()
    gi = g.set_index(["firm", "year"])["invest"]
    return [
     ("c1", "airports", "How many airports have a latitude greater than 60?", int((a.latitude > 60).sum())),
     ("c2", "stocks", "In how many months was the AAPL price more than 100?", int(((s.symbol == "AAPL") & (s.price > 100)).sum())),
     ("c3", "barley", "How many records have a yield of at least 40?", int((b["yield"] >= 40).sum())),
     ("c4", "barley", "How many rows have a yield no more than 20?", int((b["yield"] <= 20).sum())),
     ("c5", "stocks", "What is the average price of IBM when the price is under 80?", s[(s.symbol == "IBM") & (s.price < 80)].price.mean()),
     ("c6", "cities", "How many cities have a population over 2 million?", int((c.population > 2e6).sum())),
     ("c7", "cities", "How many cities have a population of fewer than 500,000?", int((c.population < 5e5).sum())),
     ("c8", "grunfeld", "In how many years did General Motors have invest above 1000?", int((gm.invest > 1000).sum())),
     ("c9", "races", "How many runners are under 30 years old?", int((ra.age < 30).sum())),
     ("c10", "us_macro", "How many quarters had unemp of at least 8?", int((u.unemp >= 8).sum())),
     ("c11", "iris", "How many flowers have a petal length under 5?", int((i.petal_length < 5).sum())),
     ("c12", "iris", "How many flowers have a sepal width of no more than 3?", int((i.sepal_width <= 3).sum())),
     ("c13", "stocks", "What is the average price of MSFT for prices over 30?", s[(s.symbol == "MSFT") & (s.price > 30)].price.mean()),
     ("c14", "cities", "How many cities have more than 1.5 million inhabitants?", int((c.population > 1.5e6).sum())),
     ("c15", "us_macro", "How many quarters had an infl greater than 5?", int((u.infl > 5).sum())),
     ("c16", "barley", "What is the average yield for yields greater than 50?", b[b["yield"] > 50]["yield"].mean()),
     ("c17", "races", "How many runners finished in fewer than 200 minutes?", int((ra.finish_time_min < 200).sum())),
     ("c18", "cars", "How many cars weigh under 1.5 thousand kg?", int((ca.weight_kg < 1500).sum())),
     ("d1", "airports", "How many airports are south of 25 degrees latitude?", int((a.latitude < 25).sum())),
     ("d2", "airports", "How many airports are north of 60 degrees?", int((a.latitude > 60).sum())),
     ("d3", "airports", "How many airports are east of -70 longitude?", int((a.longitude > -70).sum())),
     ("d4", "airports", "How many airports in CA are west of -120 degrees longitude?", int(((a.state == "CA") & (a.longitude < -120)).sum())),
     ("d5", "airports", "Which airport is the northernmost?", ("name", a.loc[a.latitude.idxmax(), "name"], a.loc[a.latitude.idxmax(), "iata"])),
     ("d6", "airports", "What is the southernmost airport?", ("name", a.loc[a.latitude.idxmin(), "name"], a.loc[a.latitude.idxmin(), "iata"])),
     ("d7", "airports", "Which airport is the easternmost?", ("name", a.loc[a.longitude.idxmax(), "name"], a.loc[a.longitude.idxmax(), "iata"])),
     ("d8", "airports", "What is the westernmost airport in TX?", ("name", a[a.state == "TX"].loc[lambda f: f.longitude.idxmin(), "name"], a[a.state == "TX"].loc[lambda f: f.longitude.idxmin(), "iata"])),
     ("d9", "cities", "Which city is the northernmost?", ("name", c.loc[c.lat.idxmax(), "city"])),
     ("d10", "cities", "How many cities are south of 0 degrees latitude?", int((c.lat < 0).sum())),
     ("d11", "cities", "How many cities lie west of 0 degrees longitude?", int((c.lon < 0).sum())),
     ("d12", "airports", "Which state has the northernmost airport?", ("name", a.loc[a.latitude.idxmax(), "state"])),
     ("d13", "cities", "What is the population of the southernmost city?", int(c.loc[c.lat.idxmin(), "population"])),
     ("d14", "cities", "How many cities in Borea are north of 40 degrees?", int(((c.country == "Borea") & (c.lat > 40)).sum())),
     ("d15", "airports", "Which is the easternmost airport in FL?", ("name", a[a.state == "FL"].loc[lambda f: f.longitude.idxmax(), "name"], a[a.state == "FL"].loc[lambda f: f.longitude.idxmax(), "iata"])),
     ("r1", "barley", "What is the range of yield?", b["yield"].max() - b["yield"].min()),
     ("r2", "stocks", "What is the range of the price of AAPL?", s[s.symbol == "AAPL"].price.max() - s[s.symbol == "AAPL"].price.min()),
     ("r3", "stocks", "What is the difference between the highest and lowest price of IBM?", s[s.symbol == "IBM"].price.max() - s[s.symbol == "IBM"].price.min()),
     ("r4", "us_macro", "What is the max minus min of unemp?", u.unemp.max() - u.unemp.min()),
     ("r5", "iris", "What is the range of petal length for each species?", list((i.groupby("species").petal_length.max() - i.groupby("species").petal_length.min()).values)),
     ("r6", "grunfeld", "What is the difference between the highest and lowest invest?", g.invest.max() - g.invest.min()),
     ("r7", "cities", "What is the difference between the maximum and minimum population?", c.population.max() - c.population.min()),
     ("r8", "airports", "What is the range of latitudes?", a.latitude.max() - a.latitude.min()),
     ("r9", "races", "What is the difference between the oldest and youngest runner's age?", int(ra.age.max() - ra.age.min())),
     ("p1", "barley", "What is the percent change in yield from 1931 to 1932?", (byy[1932] / byy[1931] - 1) * 100),
     ("p2", "grunfeld", "What was the percent change in invest of General Motors from 1935 to 1954?", (gm.invest[1954] / gm.invest[1935] - 1) * 100),
     ("p3", "grunfeld", "How much did the value of IBM grow between 1940 and 1950?", ibm.value[1950] - ibm.value[1940]),
     ("p4", "grunfeld", "What is the percent change in invest from 1935 to 1954 for each firm?", list(((gi.xs(1954, level=1) / gi.xs(1935, level=1) - 1) * 100).values)),
     ("p5", "yearly", "By what percent did revenue grow from 2016 to 2023?", (y.set_index("year").revenue[2023] / y.set_index("year").revenue[2016] - 1) * 100),
     ("p6", "yearly", "How much did customers grow between 2018 and 2021?", int(y.set_index("year").customers[2021] - y.set_index("year").customers[2018])),
     ("p7", "us_macro", "What was the percent change in realgdp from 1960 to 2000?", (umy[2000] / umy[1960] - 1) * 100),
     ("p8", "barley", "How much did yield change from 1931 to 1932 for each site?", "decline"),
     ("p9", "yearly", "What is the percentage change in customers between 2015 and 2020?", (y.set_index("year").customers[2020] / y.set_index("year").customers[2015] - 1) * 100),
     ("s1", "races", "Who had the fastest finish time?", ("name", ra.loc[ra.finish_time_min.idxmin(), "runner"])),
     ("s2", "races", "Who is the oldest runner?", ("name", ra.loc[ra.age.idxmax(), "runner"])),
     ("s3", "races", "Who is the youngest runner?", ("name", ra.loc[ra.age.idxmin(), "runner"])),
     ("s4", "races", "Which runner was the slowest?", ("name", ra.loc[ra.finish_time_min.idxmax(), "runner"])),
     ("s5", "cars", "Which car is the fastest?", ("name", ca.loc[ca.top_speed_kmh.idxmax(), "model"])),
     ("s6", "cars", "Which car has the fastest acceleration?", ("name", ca.loc[ca.acceleration_s.idxmin(), "model"])),
     ("s7", "cars", "What is the weight of the slowest car?", float(ca.loc[ca.top_speed_kmh.idxmin(), "weight_kg"])),
     ("s8", "races", "Which runner had the longest finish time?", ("name", ra.loc[ra.finish_time_min.idxmax(), "runner"])),
     ("s9", "laps", "Which driver is the fastest?", "decline"),
     ("s10", "laps", "Which driver has the fastest pace?", "decline"),
     ("s11", "races", "What is the average age of the fastest 5 runners?", ra.nsmallest(5, "finish_time_min").age.mean()),
     ("s12", "laps", "Who is the slowest driver?", "decline"),
     ("s13", "races", "Which club has the fastest average finish time?", ("name", ra.groupby("club").finish_time_min.mean().idxmin())),
     ("s14", "cars", "Which car has the quickest acceleration?", ("name", ca.loc[ca.acceleration_s.idxmin(), "model"])),
    ]


def main() -> None:
    from auto_analyst import Analyst  # after AUTO_ANALYST_HOME is set

    part = sys.argv[1] if len(sys.argv) > 1 else "all"  # tune | held | all
    show = len(sys.argv) > 2
    frames, paths = build(tempfile.mkdtemp())
    qs = Q(frames)
    held = {q[0] for k, q in enumerate(qs) if k % 3 == 2}
    sel = [q for q in qs if (part == "all") or ((q[0] in held) == (part == "held"))]

    def nums(text, tables):
        out = [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*\.?\d*(?:e[+-]?\d+)?", text)]
        for t in tables:
            for row in t.rows:
                for v in row:
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        out.append(float(v))
        return out

    def close(x, got):
        return any(abs(x - g) <= max(0.011, abs(x) * 1e-3) for g in got)

    res = {}
    with Analyst(model=None, user="t") as an:
        for qid, tab, q, exp in sel:
            s = an.session()
            s.load(paths[tab])
            r = s.ask(q)
            if r.status != "ok":
                v = "right" if exp == "decline" else "declined"
            elif exp == "decline":
                v = "wrong"
            elif isinstance(exp, tuple):
                v = "right" if any(str(x) in r.answer.split("\n")[0] for x in exp[1:]) else "wrong"
            elif isinstance(exp, list):
                got = nums(r.answer, r.tables)
                v = "right" if all(close(float(x), got) for x in exp) else "wrong"
            else:
                v = "right" if close(float(exp), nums(r.answer, r.tables)) else "wrong"
            res[qid] = v
            if show:
                print(f"{qid:4} {v:8} {q}\n     exp={exp}\n     {r.answer[:300]!r}")
    print(part, len(sel), dict(Counter(res.values())))
    print(json.dumps(res))


if __name__ == "__main__":
    os.environ.setdefault("AUTO_ANALYST_HOME", tempfile.mkdtemp())
    main()
