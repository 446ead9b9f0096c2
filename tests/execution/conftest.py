"""Fixtures for the sandbox tests: small tables as Parquet files and a started Sandbox on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from auto_analyst.config import Settings
from auto_analyst.execution.sandbox import Sandbox


def kill_worker(sb: Sandbox) -> None:
    """SIGKILL a session's worker from outside (as the OOM killer would) and wait until it is gone."""
    import os
    import select
    import signal

    if sb._pidfd < 0:
        os.kill(sb._state_pid, signal.SIGKILL)
    else:  # the session's init: its whole PID namespace goes with it
        signal.pidfd_send_signal(sb._pidfd, signal.SIGKILL)
        poller = select.poll()
        poller.register(sb._pidfd, select.POLLIN)
        poller.poll(5000)


def make_settings(tmp_path: Path, **overrides) -> Settings:
    values = {"home": tmp_path, "run_timeout": 5, "run_cpu_seconds": 20, "run_memory_mb": 1024, "max_table_rows": 50}
    values.update(overrides)
    return Settings.load(values)


@pytest.fixture
def table_files(tmp_path: Path) -> dict[str, Path]:
    sales = pd.DataFrame({
        "region": ["north", "south", "north", "east", "south", "north"],
        "amount": [10.0, 20.0, 30.0, np.nan, 5.0, 2.5],
        "day": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-06"]),
    })
    shops = pd.DataFrame({"shop": ["a", "b"], "staff": [3, 4]})
    data = tmp_path / "data"
    data.mkdir()
    paths = {"sales": data / "sales.parquet", "shops": data / "shops.parquet"}
    sales.to_parquet(paths["sales"])
    shops.to_parquet(paths["shops"])
    return paths


@pytest.fixture
def make_sandbox(tmp_path: Path, table_files: dict[str, Path]):
    """make_sandbox(**setting_overrides) -> a started Sandbox with both tables loaded ("sales" active)."""
    made: list[Sandbox] = []

    def make(**overrides) -> Sandbox:
        sb = Sandbox(make_settings(tmp_path, **overrides), tmp_path / f"work{len(made)}", tmp_path / "figures")
        made.append(sb)
        sb.start()
        sb.load_tables(table_files, "sales")
        return sb

    yield make
    for sb in made:
        sb.close()


@pytest.fixture
def sandbox(make_sandbox) -> Sandbox:
    return make_sandbox()
