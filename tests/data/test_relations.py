"""Keys linking loaded tables are found on the data, with coverage, uniqueness and the join's kind."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auto_analyst.data.catalog import describe_session
from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.relations import detect_relationships, join_path


@pytest.fixture
def shop() -> dict[str, pd.DataFrame]:
    orders = pd.DataFrame({"order_id": [1, 2, 3, 4, 5, 6], "customer_id": [10, 10, 11, 12, 12, 12],
                           "amount": [10.5, 20.25, 5.0, 7.5, 1.25, 3.0]})
    customers = pd.DataFrame({"customer_id": [10, 11, 12, 13], "region_id": ["E", "N", "E", "S"],
                              "name": ["Ann", "Bo", "Cy", "Di"]})
    regions = pd.DataFrame({"region_id": ["E", "N", "S"], "region": ["East", "North", "South"]})
    return {"orders": orders, "customers": customers, "regions": regions}


def test_two_tables_many_to_one_with_coverage(shop):
    rels = detect_relationships({"orders": shop["orders"], "customers": shop["customers"]})
    assert len(rels) == 1
    r = rels[0]
    assert (r.left, r.right, r.left_columns, r.right_columns) == ("orders", "customers", ["customer_id"], ["customer_id"])
    assert (r.left_unique, r.right_unique, r.kind) == (False, True, "many-to-one")
    assert r.left_coverage == 1.0 and r.right_coverage == 0.75  # customer 13 has no order
    assert r.kind_from("customers") == "one-to-many"
    assert not r.duplicates("orders") and r.duplicates("customers")  # summing orders over the join is safe
    assert r.sql_on() == '"orders"."customer_id" = "customers"."customer_id"'
    assert "many-to-one" in r.note and "orders.customer_id = customers.customer_id" in r.note


def test_three_tables_path_through_the_middle(shop):
    rels = detect_relationships(shop)
    assert [(r.left, r.right, r.kind) for r in rels] == [("orders", "customers", "many-to-one"),
                                                         ("customers", "regions", "many-to-one")]
    path = join_path(rels, "orders", "regions")
    assert path.status == "linked" and [s.right for s in path.steps] == ["customers", "regions"]
    assert not path.duplicates("orders")  # each order reaches one region: a sum of amount is not inflated
    assert path.duplicates("regions")


def test_no_key_links_unrelated_tables(shop):
    weather = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=3), "temp": [1.5, 2.5, 0.5]})
    rels = detect_relationships({"orders": shop["orders"], "weather": weather})
    assert rels == []
    path = join_path(rels, "orders", "weather")
    assert path.status == "none" and "No key links orders and weather" in path.reason


def test_same_name_without_matching_values_is_not_a_link():
    a = pd.DataFrame({"code": ["A1", "A2", "A3", "A4"], "x": [1, 2, 3, 4]})
    b = pd.DataFrame({"code": ["Z9", "Z8", "A1", "Z7"], "y": [1, 2, 3, 4]})
    assert detect_relationships({"a": a, "b": b}) == []  # 1 of 4 values shared: below MIN_COVERAGE


def test_measures_and_flags_are_never_keys():
    a = pd.DataFrame({"amount": [1.5, 2.5, 3.5], "paid": [True, False, True]})
    b = pd.DataFrame({"amount": [1.5, 2.5, 3.5], "paid": [True, True, False]})
    assert detect_relationships({"a": a, "b": b}) == []


def test_many_to_many_is_said_and_two_links_are_ambiguous():
    sales = pd.DataFrame({"region": ["East", "East", "North"], "store": [1, 2, 3], "amount": [1.0, 2.0, 3.0]})
    targets = pd.DataFrame({"region": ["East", "East", "North"], "store": [1, 2, 3], "quarter": [1, 2, 1]})
    rels = detect_relationships({"sales": sales, "targets": targets})
    kinds = {r.left_columns[0]: r.kind for r in rels}
    assert kinds == {"region": "many-to-many", "store": "one-to-one"}
    assert "sums over it count rows more than once" in next(r.note for r in rels if r.kind == "many-to-many")
    # one key link and one many-to-many: the key link is the join
    path = join_path(rels, "sales", "targets")
    assert path.status == "linked" and path.steps[0].left_columns == ["store"]
    only_region = [r for r in rels if r.kind == "many-to-many"]
    p2 = join_path(only_region, "sales", "targets")
    assert p2.status == "linked" and p2.duplicates("sales")  # the caller must not sum over it


def test_two_key_links_between_the_same_tables_are_ambiguous():
    flights = pd.DataFrame({"origin_id": [1, 2, 2], "dest_id": [2, 1, 3], "minutes": [60, 70, 80]})
    airports = pd.DataFrame({"id": [1, 2, 3], "city": ["A", "B", "C"]})
    flights = flights.rename(columns={"origin_id": "airport_id"}).assign(airports_id=flights["dest_id"])
    rels = detect_relationships({"flights": flights, "airports": airports})
    assert {(r.left_columns[0], r.right_columns[0]) for r in rels} == {("airport_id", "id"), ("airports_id", "id")}
    path = join_path(rels, "flights", "airports")
    assert path.status == "ambiguous" and "several keys" in path.reason


def test_id_column_matches_table_name_id_and_text_digits_match_numbers():
    customers = pd.DataFrame({"id": [1, 2, 3], "region": ["E", "N", "S"]})
    orders = pd.DataFrame({"customer_id": ["1", "1", "3"], "amount": [1.0, 2.0, 3.0]})
    rels = detect_relationships({"customers": customers, "orders": orders})
    assert [(r.left, r.left_columns, r.right, r.right_columns, r.kind) for r in rels] == \
        [("customers", ["id"], "orders", ["customer_id"], "one-to-many")]


def test_session_description_names_the_keys_for_the_prompt(shop):
    desc = describe_session({"orders": shop["orders"], "customers": shop["customers"]}, "orders")
    assert desc.join_path("orders", "customers").ok
    text = desc.to_prompt()
    assert '"relationships"' in text and "many-to-one" in text
    one = describe_session({"orders": shop["orders"]}, "orders")
    assert one.relationships == [] and '"relationships"' not in one.to_prompt()


def test_several_tables_with_no_key_say_so_with_an_empty_relationships_list():
    # a missing key would leave a model to guess whether links were looked for; [] says none was found
    plants = pd.DataFrame({"plant": ["a", "b"], "height": [1.0, 2.0]})
    weather = pd.DataFrame({"day": ["mon", "tue", "wed"], "rain": [0.0, 3.5, 1.0]})
    desc = describe_session({"plants": plants, "weather": weather}, "plants")
    data = json.loads(desc.to_prompt())
    assert desc.relationships == [] and data["relationships"] == []
    assert list(data) == ["tables", "active", "relationships"]
    assert DatasetDescription.from_prompt(desc.to_prompt()).relationships == []


def test_each_tables_own_id_column_is_not_a_link():
    customers = pd.DataFrame({"id": [1, 2, 3], "region": ["E", "N", "S"]})
    orders = pd.DataFrame({"id": [1, 2, 3, 4], "customer_id": [1, 1, 2, 3], "amount": [1.0, 2.0, 3.0, 4.0]})
    rels = detect_relationships({"customers": customers, "orders": orders})
    assert [(r.left_columns, r.right_columns) for r in rels] == [(["id"], ["customer_id"])]
