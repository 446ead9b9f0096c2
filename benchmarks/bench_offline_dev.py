"""Development questions for the embedded offline model: natural wording on tables it was not written for.

Usage:
    python benchmarks/bench_offline_dev.py [--only public|generated|conversations] [--show wrong|declined|all]

Every question goes through a real :class:`~auto_analyst.Session` (sandbox included) and is scored:

- *right*: every expected value (computed here with pandas) is among the values the answer showed
  (numbers within 1e-6 relative or 5e-5 absolute, text case-insensitively) or in the answer text;
- *declined*: the model said it could not answer;
- *wrong*: anything else (an answer without the expected values, or an error).

The tables are in benchmarks/dev_tables.py. The questions were written before the reader was
rebuilt (issue 11) and are a development set: the held-out set the lead scores is elsewhere.
Conversations are scored turn by turn and as a whole (a conversation passes when every turn does).
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


from dev_tables import TABLES  # noqa: E402


def want(*values):
    return lambda d: list(values)


# ---------------------------------------------------------------------------------------------------------------
# single questions: (table, question, expected values from the frame); None expects a chart
PUBLIC = [
    ("statecrime", "Which state has the highest murder rate?", lambda d: [d.loc[d.murder.idxmax(), "state"]]),
    ("statecrime", "What's the average poverty rate across states?", lambda d: [d.poverty.mean()]),
    ("statecrime", "How many states have a poverty rate above 15?", lambda d: [int((d.poverty > 15).sum())]),
    ("statecrime", "Is there a relationship between poverty and violent crime?", lambda d: [d.poverty.corr(d.violent)]),
    ("statecrime", "Show the 5 states with the most violent crime", lambda d: list(d.nlargest(5, "violent").state)),
    ("statecrime", "What is the median high school graduation rate?", lambda d: [d.hs_grad.median()]),
    ("statecrime", "Which state is the least urban?", lambda d: [d.loc[d.urban.idxmin(), "state"]]),
    ("statecrime", "plot murder against poverty", None),
    ("statecrime", "Compare the murder rate in Texas and California",
     lambda d: list(d.set_index("state").loc[["Texas", "California"], "murder"])),
    ("statecrime", "What's the murder rate in Florida?", lambda d: [d.set_index("state").loc["Florida", "murder"]]),
    ("statecrime", "How many states are there?", lambda d: [len(d)]),
    ("statecrime", "average share of single parents in states with more than 80% urban population",
     lambda d: [d.loc[d.urban > 80, "single"].mean()]),
    ("statecrime", "What drives violent crime?", lambda d: [_ols_r2(d, "violent", ["murder", "hs_grad", "poverty", "single", "white", "urban"])]),
    ("wine", "What is the average alcohol content for each target class?", lambda d: list(d.groupby("target").alcohol.mean())),
    ("wine", "Which target has the highest average color intensity?", lambda d: [int(d.groupby("target").color_intensity.mean().idxmax())]),
    ("wine", "What is the correlation between alcohol and proline?", lambda d: [d.alcohol.corr(d.proline)]),
    ("wine", "Show a histogram of magnesium", None),
    ("wine", "What is the maximum hue?", lambda d: [d.hue.max()]),
    ("wine", "How many wines have alcohol above 13?", lambda d: [int((d.alcohol > 13).sum())]),
    ("wine", "Average flavanoids of wines with color intensity over 5", lambda d: [d.loc[d.color_intensity > 5, "flavanoids"].mean()]),
    ("wine", "standard deviation of total phenols by target", lambda d: list(d.groupby("target").total_phenols.std())),
    ("wine", "Are there outliers in proline?", lambda d: [_iqr_outliers(d.proline)]),
    ("wine", "Is alcohol normally distributed?", lambda d: [_shapiro_p(d.alcohol)]),
    ("wine", "Run an ANOVA of alcohol by target", lambda d: [_anova_p(d, "alcohol", "target")]),
    ("wine", "How many rows per target?", lambda d: list(d.target.value_counts().sort_index())),
    ("wine", "Which wines have the 3 highest proline values?", lambda d: list(d.proline.nlargest(3))),
    ("us_macro", "When was unemployment highest?", lambda d: [str(d.loc[d.unemp.idxmax(), "date"].date())]),
    ("us_macro", "What was the average inflation in the 1970s?", lambda d: [d.loc[d.year.between(1970, 1979), "infl"].mean()]),
    ("us_macro", "Plot real GDP over time", None),
    ("us_macro", "What was the unemployment rate in the second quarter of 2008?",
     lambda d: [d.loc[(d.year == 2008) & (d.quarter == 2), "unemp"].iloc[0]]),
    ("us_macro", "Which year had the highest average inflation?", lambda d: [int(d.groupby("year").infl.mean().idxmax())]),
    ("us_macro", "Average tbilrate between 1990 and 2000", lambda d: [d.loc[d.year.between(1990, 2000), "tbilrate"].mean()]),
    ("us_macro", "What's the correlation between unemployment and inflation?", lambda d: [d.unemp.corr(d.infl)]),
    ("us_macro", "Total real investment in 2005", lambda d: [d.loc[d.year == 2005, "realinv"].sum()]),
    ("us_macro", "How many quarters had inflation above 5?", lambda d: [int((d.infl > 5).sum())]),
    ("us_macro", "Show the 3 quarters with the lowest real interest rate",
     lambda d: [str(x.date()) for x in d.nsmallest(3, "realint").date]),
    ("us_macro", "any trends in unemployment?", lambda d: list(d.groupby("year").unemp.mean().round(4))[:3]),
    ("us_macro", "Compare average inflation in 1975 and 1985",
     lambda d: [d.loc[d.year == 1975, "infl"].mean(), d.loc[d.year == 1985, "infl"].mean()]),
    ("us_macro", "average cpi in 2000 for quarter 4", lambda d: [d.loc[(d.year == 2000) & (d.quarter == 4), "cpi"].mean()]),
    ("us_macro", "Calculate the mean unemployment rate, rounded to two decimal places.", lambda d: [round(d.unemp.mean(), 2)]),
    ("us_macro", "Use pandas to find the median real consumption.", lambda d: [d.realcons.median()]),
]

GENERATED = [
    ("trips", "How many trips were there in March?", lambda d: [int((d.pickup_time.dt.month == 3).sum())]),
    ("trips", "What's the average fare?", lambda d: [d.fare_usd.mean()]),
    ("trips", "Which borough has the longest trips on average?", lambda d: [d.groupby("borough").distance_km.mean().idxmax()]),
    ("trips", "total tips paid by card", lambda d: [d.loc[d.payment_type == "card", "tip_usd"].sum()]),
    ("trips", "Average fare of airport trips", lambda d: [d.loc[d.is_airport, "fare_usd"].mean()]),
    ("trips", "How many trips per payment type?", lambda d: list(d.payment_type.value_counts())),
    ("trips", "What's the most expensive trip?", lambda d: [d.fare_usd.max(), d.loc[d.fare_usd.idxmax(), "trip_id"]]),
    ("trips", "Top 5 trips by distance", lambda d: list(d.nlargest(5, "distance_km").trip_id)),
    ("trips", "Average tip for trips longer than 10 km", lambda d: [d.loc[d.distance_km > 10, "tip_usd"].mean()]),
    ("trips", "How many passengers per borough?", lambda d: list(d.groupby("borough").passenger_count.sum())),
    ("patients", "How many patients were admitted in 2023?", lambda d: [int((d.admitted_on.dt.year == 2023).sum())]),
    ("patients", "Which ward has the most patients?", lambda d: [d.ward.value_counts().idxmax()]),
    ("patients", "Average length of stay by ward", lambda d: list(d.groupby("ward").stay_days.mean())),
    ("patients", "What percentage of patients were readmitted?", lambda d: [100 * d.readmitted.mean()]),
    ("patients", "average age of readmitted patients in Cardiology",
     lambda d: [d.loc[d.readmitted & (d.ward == "Cardiology"), "age"].mean()]),
    ("patients", "Who is the oldest patient?", lambda d: [d.loc[d.age.idxmax(), "patient_id"]]),
    ("patients", "How many patients per ward were readmitted?", lambda d: list(d[d.readmitted].groupby("ward").size())),
    ("patients", "mean blood pressure by ward", lambda d: list(d.groupby("ward").systolic_bp.mean())),
    ("weather", "What was the average humidity at each station?", lambda d: list(d.groupby("station").rel_hum_pct.mean())),
    ("weather", "Which station is the windiest?", lambda d: [d.groupby("station").wind_kmh.mean().idxmax()]),
    ("weather", "How much rain fell in July 2024?",
     lambda d: [d.loc[(d.obs_date.dt.year == 2024) & (d.obs_date.dt.month == 7), "precip_mm"].sum()]),
    ("weather", "What was the hottest day?", lambda d: [str(d.loc[d.temp_c.idxmax(), "obs_date"].date())]),
    ("weather", "Average temperature by month", lambda d: list(d.groupby(d.obs_date.dt.strftime("%Y-%m")).temp_c.mean())[:3]),
    ("weather", "Which calendar month is the coldest on average?", lambda d: [int(d.groupby(d.obs_date.dt.month).temp_c.mean().idxmin())]),
    ("weather", "How many stormy days were there?", lambda d: [int(d.storm.sum())]),
    ("weather", "Compare the humidity of Oslo and Bergen",
     lambda d: list(d[d.station.isin(["Oslo", "Bergen"])].groupby("station").rel_hum_pct.mean())),
    ("weather", "mean temp_c by station in July 2024",
     lambda d: list(d[(d.obs_date.dt.year == 2024) & (d.obs_date.dt.month == 7)].groupby("station").temp_c.mean())),
    ("orders", "What's the total turnover?", lambda d: [d.sales_eur.sum()]),
    ("orders", "How much was spent by members?", lambda d: [d.loc[d.is_member, "sales_eur"].sum()]),
    ("orders", "How many customers signed up in 2022?", lambda d: [d.loc[d.signup_date.dt.year == 2022, "customer"].nunique()]),
    ("orders", "average discount by country", lambda d: list(d.groupby("country").discount_pct.mean())),
    ("orders", "How many orders had a quantity of more than 5?", lambda d: [int((d.qty > 5).sum())]),
    ("orders", "average sales of Germany in 2024", lambda d: [d.loc[(d.country == "Germany") & (d.order_date.dt.year == 2024), "sales_eur"].mean()]),
    ("orders", "the 3 largest orders", lambda d: list(d.nlargest(3, "sales_eur").order_id)),
    ("cars", "What's the average mpg by origin?", lambda d: list(d.groupby("Origin").Miles_per_Gallon.mean())),
    ("cars", "How many rows are there for each number of Cylinders?", lambda d: list(d.Cylinders.value_counts().sort_index())),
    ("cars", "Which Origin has the most cars?", lambda d: [d.Origin.value_counts().idxmax()]),
    ("cars", "What's the heaviest car?", lambda d: [d.loc[d.Weight_in_lbs.idxmax(), "Name"]]),
    ("cars", "average horsepower of cars with 8 cylinders", lambda d: [d.loc[d.Cylinders == 8, "Horsepower"].mean()]),
    ("cars", "what drives mpg?", lambda d: [_ols_r2(d, "Miles_per_Gallon", ["Cylinders", "Horsepower", "Weight_in_lbs", "Acceleration"])]),
    ("cars", "Compare the average weight of USA and Japan cars",
     lambda d: list(d[d.Origin.isin(["USA", "Japan"])].groupby("Origin").Weight_in_lbs.mean())),
]

# conversations: (table, [(question, check)]); a check is a list of expected values, None for a chart,
# "short" for an answer of at most two lines, or "noted" for an acknowledged change of style
CONVERSATIONS = [
    ("orders", [("total sales by country", lambda d: list(d.groupby("country").sales_eur.sum())),
                ("keep it short from now on", "noted"),
                ("average discount by country", "short"),
                ("remind me what the total for Germany was", lambda d: [d.loc[d.country == "Germany", "sales_eur"].sum()])]),
    ("weather", [("average temperature by station", lambda d: list(d.groupby("station").temp_c.mean())),
                 ("now only July 2024", lambda d: list(d[(d.obs_date.dt.year == 2024) & (d.obs_date.dt.month == 7)].groupby("station").temp_c.mean())),
                 ("which of those is the highest?", lambda d: [d[(d.obs_date.dt.year == 2024) & (d.obs_date.dt.month == 7)].groupby("station").temp_c.mean().idxmax()]),
                 ("plot that", None),
                 ("same for humidity", lambda d: list(d[(d.obs_date.dt.year == 2024) & (d.obs_date.dt.month == 7)].groupby("station").rel_hum_pct.mean()))]),
    ("trips", [("top 3 boroughs by total fare", lambda d: list(d.groupby("borough").fare_usd.sum().nlargest(3))),
               ("the top one: how many trips?", lambda d: [int((d.borough == d.groupby("borough").fare_usd.sum().idxmax()).sum())]),
               ("answer in one sentence from now on", "noted"),
               ("average tip by payment type", "short")]),
    ("cars", [("average mpg by origin", lambda d: list(d.groupby("Origin").Miles_per_Gallon.mean())),
              ("bar chart of that", None),
              ("same for horsepower", lambda d: list(d.groupby("Origin").Horsepower.mean())),
              ("what did we find earlier about mpg?", lambda d: [d.groupby("Origin").Miles_per_Gallon.mean().max()])]),
    ("patients", [("average stay_days by ward", lambda d: list(d.groupby("ward").stay_days.mean())),
                  ("now only readmitted patients", lambda d: list(d[d.readmitted].groupby("ward").stay_days.mean())),
                  ("be more formal", "noted"),
                  ("which ward is the lowest?", lambda d: [d[d.readmitted].groupby("ward").stay_days.mean().idxmin()])]),
]


# ---------------------------------------------------------------------------------------------------------------
def _ols_r2(d, y, xs):
    import statsmodels.api as sm

    data = d[[y] + xs].dropna()
    return float(sm.OLS(data[y], sm.add_constant(data[xs])).fit().rsquared)


def _iqr_outliers(s):
    q1, q3 = s.quantile(0.25), s.quantile(0.75)
    return int(((s < q1 - 1.5 * (q3 - q1)) | (s > q3 + 1.5 * (q3 - q1))).sum())


def _shapiro_p(s):
    from scipy import stats

    return float(stats.shapiro(s.dropna()).pvalue)


def _anova_p(d, y, x):
    from scipy import stats

    return float(stats.f_oneway(*[g[y].dropna() for _, g in d.groupby(x)]).pvalue)


def shown_values(r, wanted: int) -> tuple[list[float], list[str]]:
    """Numbers shown anywhere (tables and answer text); text values shown as a single value or in a table of
    at most ``wanted`` rows (a full breakdown lists every group, which does not say which one is meant)."""
    import re

    nums, texts = [], []
    for t in r.tables:
        small = t.columns == ["value"] or t.n_rows <= max(wanted, 1)
        for row in t.rows:
            for v in row:
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    nums.append(float(v))
                elif small:
                    texts.append(str(v).lower())
    nums += [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", r.answer)]
    return nums, texts


def found(value, nums, texts) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        return any(math.isclose(v, x, rel_tol=1e-6, abs_tol=5e-5) for x in nums)
    v = str(value).lower()
    return any(v == t or (len(v) > 3 and v in t) for t in texts)


def verdict(r, check, frame) -> str:
    if r.status == "declined":
        return "declined"
    if r.status != "ok":
        return "wrong"
    if check is None:
        return "right" if r.figures else "wrong"
    if check == "noted":
        return "right" if r.trace.intent == "config_change" else "wrong"
    if check == "short":
        return "right" if len([ln for ln in r.answer.strip().splitlines() if ln.strip()]) <= 2 else "wrong"
    expected = check(frame)
    nums, texts = shown_values(r, len([v for v in expected if isinstance(v, str)]))
    return "right" if all(found(v, nums, texts) for v in expected) else "wrong"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["public", "generated", "conversations"])
    ap.add_argument("--show", choices=["wrong", "declined", "all"], default="wrong")
    args = ap.parse_args(argv)
    from auto_analyst import Analyst, Settings

    frames = {name: build() for name, build in TABLES.items()}
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as home, Analyst(settings=Settings.load({"home": Path(home)})) as analyst:
        sessions = {}

        def session(name):
            if name not in sessions:
                s = analyst.session()
                s.add_frame(name, frames[name])
                sessions[name] = s
            return sessions[name]

        t0 = time.perf_counter()
        for group, items in (("public", PUBLIC), ("generated", GENERATED)):
            if args.only and args.only != group:
                continue
            for table, q, check in items:
                s = session(table)
                s.reset_memory()
                r = s.ask(q)
                v = verdict(r, check, frames[table])
                counts[group][v] += 1
                if args.show == "all" or args.show == v:
                    print(f"[{group}:{v}] {table}: {q}\n    -> {' '.join(r.answer.split())[:300]}")
        if not args.only or args.only == "conversations":
            for table, turns in CONVERSATIONS:
                s = analyst.session()
                s.add_frame(table, frames[table])
                ok = True
                for q, check in turns:
                    r = s.ask(q)
                    v = verdict(r, check, frames[table])
                    counts["turns"][v] += 1
                    ok = ok and v == "right"
                    if args.show == "all" or args.show == v:
                        print(f"[turn:{v}] {table}: {q}\n    -> {' '.join(r.answer.split())[:300]}")
                counts["conversations"]["right" if ok else "wrong"] += 1
                analyst.memory.profiles.reset(s.user)
        seconds = time.perf_counter() - t0
    print(f"\noffline dev questions ({seconds:.0f} s):")
    for group, c in counts.items():
        n = sum(c.values())
        print(f"  {group:<14} {n:>3}: right {c['right']:>3}  wrong {c['wrong']:>3}  declined {c['declined']:>3}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
