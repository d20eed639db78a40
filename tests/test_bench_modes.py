"""benchmarks/bench_modes.py runs and gives every row, on a tiny network: its structure, never its timings."""

import math
import os

import pytest

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
TINY = {"depth": 2, "width": 8, "batch": 4, "quick": True}


@pytest.fixture
def bench_modes(monkeypatch):
    monkeypatch.syspath_prepend(BENCHMARKS)
    import bench_modes

    return bench_modes


def positive(value):
    return isinstance(value, float) and math.isfinite(value) and value > 0


@pytest.mark.slow  # every row, the PyTorch chain included where torch imports: a few seconds
def test_every_row_is_measured_with_positive_finite_numbers(bench_modes):
    rows = bench_modes.measure(**TINY)
    names = [row["row"] for row in rows]
    assert set(bench_modes.ALL_ROWS) <= set(names)
    for row in rows:
        assert positive(row["time_ms"]) and positive(row["median_ms"]), row
        measured = [row[key] for key in ("time_x", "median_x", "peak_mib", "memory_x") if row[key] is not None]
        assert all(positive(value) for value in measured), row
        if not row["row"].startswith("chain"):  # the chain has no memory column, and no ratio without PyTorch
            assert len(measured) == 4, row
    for row in rows:
        if row["row"] == "plain":
            assert row["time_x"] == 1.0
        if row["row"] == "no_grad":
            assert row["memory_x"] == 1.0
    table = bench_modes.table_text(rows)
    assert all(row["mode"] in table for row in rows)
    lines = bench_modes.verdict_text(rows).splitlines()
    assert len(lines) >= len(bench_modes.TARGETS) - 1  # the chain's needs PyTorch
    assert all(line.startswith(("holds: ", "FAILS: ")) for line in lines)


def test_one_row_brings_its_baselines_alone(bench_modes):
    rows = bench_modes.measure(rows=["grad"], rounds=1, **TINY)
    assert [row["row"] for row in rows] == ["plain", "no_grad", "grad"]
    with pytest.raises(ValueError, match="unknown rows"):
        bench_modes.measure(rows=["gard"], **TINY)
