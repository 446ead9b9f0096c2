"""Words the offline parser understands, and words it may safely ignore.

A question is answered only when every content word is accounted for: a column, a value, a
number, a keyword below, or an ignorable word. Anything else makes the offline model decline
rather than guess (a wrong answer is worse than no answer).
"""

from __future__ import annotations

import re

__all__ = ["FUNC_PATTERNS", "IGNORABLE", "NUMBER_WORDS", "GRAIN_WORDS", "ROW_NOUNS", "ADDITIVE_HINTS"]

# (regex, func); order matters: 'standard deviation' before 'deviation', 'how many' before 'many'
FUNC_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\b(standard deviation|std|stdev|std dev)\b"), "std"),
    (re.compile(r"\bvariance\b"), "var"),
    (re.compile(r"\b(average|mean|avg)\b"), "mean"),
    (re.compile(r"\bmedian\b"), "median"),
    (re.compile(r"\b(total|sum|summed|sums|totals)\b"), "sum"),
    (re.compile(r"\b(number of distinct|number of unique|number of different|how many distinct|how many unique|how many different|distinct|unique)\b"), "nunique"),
    (re.compile(r"\b(how many|number of|count of|count|counts)\b"), "count"),
    (re.compile(r"\b(minimum|min|lowest|smallest|least|fewest|cheapest|earliest|worst|quietest)\b"), "min"),
    (re.compile(r"\b(maximum|max|highest|largest|biggest|greatest|most|best|top|latest|most expensive|busiest)\b"), "max"),
]

SUPERLATIVE_MAX = {"maximum", "max", "highest", "largest", "biggest", "greatest", "most", "best", "top", "latest"}
SUPERLATIVE_MIN = {"minimum", "min", "lowest", "smallest", "least", "fewest", "cheapest", "earliest", "worst"}

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "twenty": 20}

GRAIN_WORDS = {"daily": "day", "day": "day", "days": "day", "weekly": "week", "week": "week", "weeks": "week",
               "monthly": "month", "month": "month", "months": "month", "quarterly": "quarter", "quarter": "quarter",
               "quarters": "quarter", "yearly": "year", "annual": "year", "annually": "year", "year": "year", "years": "year"}

MONTHS = {m: i + 1 for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                          "september", "october", "november", "december"])}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})

# Nouns that name the rows being counted ("how many orders"), taken as "rows".
ROW_NOUNS = {"rows", "row", "records", "record", "entries", "entry", "observations", "orders", "items",
             "transactions", "customers", "people", "passengers", "products", "reports", "cases", "samples",
             "deliveries", "sales", "payments", "visits", "users", "employees", "flowers", "firms", "companies",
             "lines", "times", "instances", "events", "trips", "patients", "students", "games", "players", "days"}

# A measure whose name contains one of these is additive: "which city brought in the most revenue" sums it.
ADDITIVE_HINTS = ("revenue", "sales", "amount", "turnover", "spend", "cost", "quantity", "qty", "count", "total",
                  "profit", "income", "units", "orders", "kwh", "volume", "paid", "payment", "invest", "value")

IGNORABLE = set("""
a an the of in on at to for from by with and or is are was were be been being do does did what which who whom whose
how much many me my i we our you your it its this that these those there here please can could would should will
show give tell list find compute calculate get display report print return make let us across each every per all
overall total data dataset table file column columns value values number numbers amount figure result results
whole entire across between against versus vs than then also as over under about into within among up down out
want need like know see using use based so such just only now same instead again both each either neither other
some any most least very really kind sort type types group groups grouped grouping aggregate aggregated
s 's whats what's which's give me brought bring came come got get had has have having went go goes did done
paid pays pay used uses sold sells made making takes took per cent ok okay then well hey hi hello thanks thank
through via where whose having when if yes not them their they given places provide provided any
following result respective dataset's check checking determine identify identified examine explore
detect find out perform performing report recorded calculated computed adheres adhere follows follow
considering consider assume assuming rank ranked ranking respectively each one ones
""".split())
