"""Ten browsers asking at once against the app served by werkzeug: each answer lands in its own session."""

from __future__ import annotations

import threading

import pandas as pd
import requests

N_CLIENTS = 10


def _client(base: str, k: int, csv_path, out: dict) -> None:
    s = requests.Session()
    page = s.get(base.entry, timeout=30).text
    h = {"X-CSRF-Token": page.split('name="csrf-token" content="')[1].split('"')[0]}
    sid = s.post(base + "/api/sessions", headers=h, timeout=30).json()["session"]["id"]
    with open(csv_path, "rb") as f:
        r = s.post(f"{base}/api/sessions/{sid}/uploads", headers=h, files={"file": (f"client{k}.csv", f)}, timeout=60)
    assert r.status_code == 201, r.text
    job = s.post(f"{base}/api/sessions/{sid}/ask", headers=h, json={"question": "total amount"}, timeout=30).json()["job"]
    with s.get(base + job["events"], stream=True, timeout=120) as stream:
        body = stream.text
    final = [line[6:] for line in body.splitlines() if line.startswith("data: ")][-1]
    detail = s.get(f"{base}/api/sessions/{sid}", timeout=30).json()["session"]
    out[k] = (sid, final, detail)


def test_ten_clients_at_once_each_get_their_own_answer(live_server, tmp_path):
    paths = []
    for k in range(N_CLIENTS):
        # each client's total is unique (1000*k + 3), so a crossed answer cannot go unnoticed
        p = tmp_path / f"c{k}.csv"
        pd.DataFrame({"group": ["a", "b", "c"], "amount": [1000.0 * k + 1, 1.0, 1.0]}).to_csv(p, index=False)
        paths.append(p)
    out: dict = {}
    threads = [threading.Thread(target=_client, args=(live_server, k, paths[k], out)) for k in range(N_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert sorted(out) == list(range(N_CLIENTS))
    assert len({sid for sid, _, _ in out.values()}) == N_CLIENTS
    for k, (sid, final, detail) in out.items():
        expected = f"{1000 * k + 3:g}"
        assert f"**Total amount**: {expected}" in final, (k, final)
        assert detail["tables"][0]["file"] == f"client{k}.csv" and len(detail["results"]) == 1
        assert expected in detail["results"][0]["answer"]
