"""Questions across tables (issue 23 item 1, offline part): "X by Y" with X and Y in different tables is read on
the two tables joined by their key (stated with its kind), declined when no key, or two keys, link them; a grouping
the reader could not read is never dropped silently."""

from __future__ import annotations

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings

ORDERS = pd.DataFrame({"order_id": range(1, 13), "customer_id": [1, 2, 3, 1, 2, 3, 4, 4, 5, 5, 6, 6],
                       "product_id": [7, 8, 7, 9, 8, 7, 9, 9, 8, 7, 7, 8],
                       "amount": [12.5, 20.0, 31.25, 40.0, 50.5, 60.0, 70.0, 80.75, 90.0, 100.0, 110.0, 120.0]})
CUSTOMERS = pd.DataFrame({"customer_id": [1, 2, 3, 4, 5, 6], "region": ["East", "North", "South", "East", "North", "South"]})
PRODUCTS = pd.DataFrame({"product_id": [7, 8, 9], "category": ["Toys", "Books", "Garden"]})


def session(tmp_path, **frames):
    analyst = Analyst(settings=Settings.load({"home": tmp_path}))
    s = analyst.session()
    for name, frame in frames.items():
        s.add_frame(name, frame)
    if "orders" in frames:
        s.use("orders")
    return analyst, s


def by_group(result) -> dict:
    return {row[0]: row[1] for row in result.tables[0].rows}


def test_total_amount_by_customer_region_joins_on_the_key_and_says_so(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS, customers=CUSTOMERS)
    with analyst:
        r = s.ask("What is the total order amount by customer region?")
    truth = ORDERS.merge(CUSTOMERS, on="customer_id").groupby("region")["amount"].sum()
    assert r.status == "ok", r.answer
    assert by_group(r) == pytest.approx(truth.to_dict())
    assert any("customer_id" in a and "many-to-one" in a for a in r.trace.assumptions), r.trace.assumptions


def test_three_tables_each_question_joins_the_two_it_names(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS, customers=CUSTOMERS, products=PRODUCTS)
    with analyst:
        r1 = s.ask("What is the average amount by category?")
        r2 = s.ask("How many orders are there by region?")
        r3 = s.ask("How many customers are there by region?")
    joined = ORDERS.merge(PRODUCTS, on="product_id").merge(CUSTOMERS, on="customer_id")
    assert by_group(r1) == pytest.approx(joined.groupby("category")["amount"].mean().to_dict()), r1.answer
    assert by_group(r2) == joined.groupby("region").size().to_dict(), r2.answer
    assert by_group(r3) == CUSTOMERS.groupby("region").size().to_dict(), r3.answer  # customers, not their orders


def test_no_key_linking_the_tables_declines_with_the_reason(tmp_path):
    targets = pd.DataFrame({"region": ["East", "North", "South"], "target": [100.0, 200.0, 300.0]})
    analyst, s = session(tmp_path, orders=ORDERS, targets=targets)
    with analyst:
        r = s.ask("What is the total amount by region?")
    assert r.status == "declined" and "can't join them" in r.answer and "No key links orders and targets" in r.answer, r.answer


def test_two_keys_linking_the_tables_is_ambiguous_and_declines(tmp_path):
    visits = pd.DataFrame({"customer_id": [1, 2, 3, 4, 5, 6], "product_id": [7, 8, 9, 10, 11, 12],
                           "channel": ["web", "shop", "web", "web", "shop", "web"]})
    analyst, s = session(tmp_path, orders=ORDERS, visits=visits)
    with analyst:
        r = s.ask("What is the total amount by channel?")
    assert r.status == "declined" and "linked by several keys" in r.answer and "say which one" in r.answer, r.answer


def test_a_measure_of_the_one_side_over_the_joined_rows_is_declined(tmp_path):
    customers = CUSTOMERS.assign(age=[30, 40, 50, 60, 70, 80])
    analyst, s = session(tmp_path, orders=ORDERS, customers=customers)
    with analyst:
        r = s.ask("What is the total age by order_id?")
    assert r.status == "declined", r.answer


def test_a_grouping_the_reader_cannot_read_is_never_dropped(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS)
    with analyst:
        r = s.ask("What is the total order amount by customer region?")
    assert r.status == "declined" and "by customer region" in r.answer, r.answer


# a `status` in both tables, and orders whose customer is not in `customers` (tester's case: /tmp/breaker/mt)
ORDERS3 = pd.DataFrame({"order_id": range(1, 11), "customer_id": [1, 1, 2, 2, 3, 3, 4, 5, 6, 7],
                        "amount": [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
                        "status": ["ok"] * 5 + ["void"] * 5})
CUSTOMERS3 = pd.DataFrame({"customer_id": [1, 2, 3, 4, 8], "segment": ["A", "A", "B", "A", "B"],
                           "status": ["gold", "silver", "gold", "silver", "gold"]})


def _truth(by: str, how: str) -> dict:
    joined = ORDERS3.merge(CUSTOMERS3, on="customer_id", how="left", suffixes=("", "_c"))
    return joined.fillna({by: "(no match)"}).groupby(by)["amount"].agg(how).to_dict()


def test_a_column_of_both_tables_is_the_one_of_the_table_named_beside_it(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS3, customers=CUSTOMERS3)
    with analyst:
        r = s.ask("What is the average amount per customer status?")
    assert r.status == "ok", r.answer
    assert by_group(r) == pytest.approx(_truth("status_c", "mean")), r.answer  # gold 35, silver 46.67, (no match) 90
    assert any("customers.status" in a and "not orders.status" in a for a in r.trace.assumptions), r.trace.assumptions


def test_a_column_of_both_tables_named_alone_is_declined_naming_both(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS3, customers=CUSTOMERS3)
    with analyst:
        r = s.ask("What is the average amount by status?")
    assert r.status == "declined" and "`orders.status`" in r.answer and "`customers.status`" in r.answer, r.answer


def test_a_column_of_both_tables_qualified_by_an_unjoinable_table_is_declined(tmp_path):
    orders = pd.DataFrame({"order_id": range(1, 9), "customer_id": [1, 1, 2, 2, 3, 3, 4, 5],
                           "amount": [10, 20, 30, 40, 50, 60, 70, 80], "region": list("NNSSNNSE")})
    payments = pd.DataFrame({"customer_id": [1, 1, 2, 3, 3, 3, 9], "paid": [5, 5, 10, 1, 1, 1, 100],
                             "region": list("EEEWWWW")})
    analyst, s = session(tmp_path, orders=orders, payments=payments)
    with analyst:
        r = s.ask("What is the total amount of orders per payment region?")
    # orders.region would answer N/S/E: the question means the payments' region, which no key joins one-to-one
    assert r.status == "declined" and "payments" in r.answer, r.answer


def test_rows_without_a_match_are_a_group_of_their_own_and_the_groups_add_up(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS3, customers=CUSTOMERS3)
    with analyst:
        r = s.ask("What is the total order amount by customer segment?")
        n = s.ask("How many orders are there by segment?")
    assert r.status == "ok", r.answer
    assert by_group(r) == _truth("segment", "sum") == {"A": 170, "B": 110, "(no match)": 270}
    assert sum(by_group(r).values()) == ORDERS3["amount"].sum()
    assert by_group(n) == {"A": 5, "B": 2, "(no match)": 3}, n.answer
    assert "(no match)" in r.answer and any("(no match)" in a for a in r.trace.assumptions)


def test_a_column_of_both_tables_qualified_by_its_own_table_says_which_it_is(tmp_path):
    analyst, s = session(tmp_path, orders=ORDERS3, customers=CUSTOMERS3)
    with analyst:
        r = s.ask("What is the average amount per order status?")
    assert r.status == "ok", r.answer
    assert by_group(r) == pytest.approx(ORDERS3.groupby("status")["amount"].mean().to_dict())  # ok 30, void 80
    assert any("orders.status" in a and "not customers.status" in a for a in r.trace.assumptions), r.trace.assumptions
