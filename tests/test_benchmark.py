"""The speed benchmark: its reference model has our shape and trains in our loop, its timings take
turns and report their spread, it says when the machine is busy, and its files are what the figure
reads."""

import json
from functools import partial

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.core.data import make_datasets
from pipeline.core.loop import train
from pipeline.model.reference import ReferenceTransformer
from pipeline.model.transformer import Transformer, count_parameters
from pipeline.numerics import pin as numerics
from pipeline.numerics import step_profile
from pipeline.report.figures import load_benchmark, plot_benchmark
from pipeline.tools import study_batches
from pipeline.tools.benchmark import step, timing
from pipeline.tools.benchmark.step import ParameterAdam
from pipeline.tools.benchmark.suite import write_results
from pipeline.tools.benchmark.timing import interleaved, round_robin, spread
from tests.conftest import tiny_params


@pytest.mark.parametrize("stock", [False, True])
def test_the_reference_has_our_shape_and_trains_in_our_loop(stock):
    params = tiny_params(model={"layers": 2, "dropout": 0.1}, train={"steps": 3})
    reference = partial(ReferenceTransformer, stock=stock)
    assert count_parameters(reference(params.model)) == count_parameters(Transformer(params.model))
    (model,), (losses,) = train(
        params.model,
        params.train,
        [0],
        make_datasets(params.data)[0],
        build_model=reference,
        optimizer=ParameterAdam,
    )
    assert isinstance(model, ReferenceTransformer) and len(losses) == 3 and all(np.isfinite(losses))


def test_every_implementation_is_timed_in_turn_with_the_warmup_dropped():
    params = tiny_params(model={"layers": 1}, train={"steps": 5})
    length = params.data.train_lengths[0]
    times = step.time_steps(params.model, params.train, length, steps=4, rounds=2, warmup=1)
    assert list(times) == list(step.IMPLEMENTATIONS)
    assert all(len(values) == 2 * (4 - 1 - 1) for values in times.values())  # 3 gaps per block, 1 dropped


def test_rounds_take_turns_and_alternate_the_order():
    assert list(round_robin("abc", 3)) == list("abccbaabc")
    calls = []
    seconds, results = interleaved(
        {"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2}, 2
    )
    assert calls == list("ab" + "ab" + "ba")  # one warm-up call each, then the rounds
    assert results == {"a": 1, "b": 2} and [len(v) for v in seconds.values()] == [2, 2]


def test_spread_is_the_quartiles_within_the_values_measured():
    assert spread([5.0]) == (5.0, 5.0, 5.0)
    assert spread([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)
    q1, median, q3 = spread([1.0, 3.0])
    assert 1.0 <= q1 <= median == 2.0 <= q3 <= 3.0


def test_a_busy_machine_is_named_and_recorded(monkeypatch, capsys):
    monkeypatch.setattr(timing.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (0.8, 0.5, 0.4))
    assert timing.check_load_at_start() == 0.8
    assert "busy machine" not in capsys.readouterr().err
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (1.5, 0.5, 0.4))
    assert timing.check_load_at_start() == 1.5
    assert "busy machine: timings are not comparable" in capsys.readouterr().err
    described = timing.describe(1.5, quick=True)
    assert described["busy_machine"] and described["load_average_per_core_before"] == 0.75
    assert described["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert described["numerics_mode"] == numerics.mode()  # the products' speed depends on MKL's branch


def test_the_step_profile_counts_every_operation_once():
    """Each operator's time lands in exactly one group (the named ones, or everything else), per step."""
    self_us = {"aten::mm": 4000, "aten::bmm": 2000, "aten::copy_": 1000, "aten::embedding": 500}
    calls = {"aten::mm": 8, "aten::bmm": 4, "aten::copy_": 2, "aten::embedding": 2}
    groups = step_profile.grouped(self_us, calls, steps=2)
    assert groups["matrix products (mm, bmm, addmm)"] == (3.0, 6.0)  # ms and calls per step
    assert groups["copies (copy_)"] == (0.5, 1.0) and groups[step_profile.REST] == (0.25, 1.0)
    assert sum(ms for ms, _ in groups.values()) == sum(self_us.values()) / 1e3 / 2
    names = [op for ops in step_profile.GROUPS.values() for op in ops]
    assert len(names) == len(set(names))  # no operator in two groups


def test_the_step_profiles_self_times_and_calls_are_torchs_key_averages():
    """The one-pass sums over the profiler's events give, operator by operator, the self times and
    call counts torch's own (slow) aggregation gives, redispatches and nested operators included."""
    from torch.autograd.profiler import profile

    params = tiny_params(model={"dropout": 0.1}, train={"steps": 2})
    data = make_datasets(params.data)[0]
    with profile() as prof:
        train(params.model, params.train, [0], data)
    self_us, calls = step_profile.self_times(prof.kineto_results.events())
    averages = prof.key_averages()
    assert calls == {e.key: e.count for e in averages}
    assert self_us == pytest.approx({e.key: e.self_cpu_time_total for e in averages}, abs=1e-6)


def test_the_step_profile_refuses_too_few_steps_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        step_profile.main(["--steps", "3"])
    assert stop.value.code == 2
    assert (
        capsys.readouterr().err
        == "error: --steps = 3 is invalid: expected an integer >= 8 (the first warm up)\n"
    )


def test_the_figure_reads_the_files_the_benchmark_writes(tmp_path):
    metrics = {
        "train_step_speedup": 1.4, "decode_rows": 100, "decode_growth_exponent_uncached": 1.7,
        "decode_growth_exponent_cached": 1.1, "seeds_steps": 200, "seeds_ratio_ideal": 1.5, "cpu": "cpu",
        "cpu_count": 2,
        "torch": torch.__version__, "threads": 1, "load_average_before": 0.5, "load_average_after": 1.0,
    }  # fmt: skip
    tables = {
        "train_step": pd.DataFrame(
            {"implementation": ["ours", "nn.Transformer, foreach Adam"], "median_ms": [20.0, 28.0],
             "q1_ms": [19.0, 27.0], "q3_ms": [22.0, 30.0], "steps_timed": [100, 100]}
        ),
        "decoding": pd.DataFrame(
            {"length": [10, 64], "uncached_ms": [80.0, 1900.0], "cached_ms": [40.0, 300.0],
             "speedup": [2.0, 6.3]}
        ),
        "throughput": pd.DataFrame({"decoder": ["greedy, cached"], "sequences_per_s": [9000.0]}),
        "seeds": pd.DataFrame(
            {"setup": ["one seed", "train_all"], "seeds": [1, 3], "processes": [1, 2], "wall_s": [7.0, 13.0],
             "ratio_to_one": [1.0, 1.86], "cpu_share": [1.0, 0.98]}
        ),
    }  # fmt: skip
    write_results(metrics, tables, tmp_path / "benchmark.json")
    saved = load_benchmark(tmp_path / "benchmark.json")
    assert saved["metrics"] == json.loads(json.dumps(metrics))
    assert saved["train_step"][1] == {
        "implementation": "nn.Transformer, foreach Adam", "median_ms": "28.000", "q1_ms": "27.000",
        "q3_ms": "30.000", "steps_timed": "100",
    }  # fmt: skip
    assert (tmp_path / "benchmark" / "seeds.csv").read_bytes().count(b"\r") == 0
    plot_benchmark(tmp_path / "benchmark.json", tmp_path / "figure.png")
    assert (tmp_path / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_study_batches_measure_runs_each_mixed_variant_both_ways():
    """The one-length batches measure trains a study variant's own model and recipe (not the
    lesson's parameters with a variant's recipe laid in), mixed and by length, at toy size."""
    small = {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16}
    params = tiny_params(study={"model": small, "train": {"batch_size": 8, "warmup": 2}})
    metrics, table = study_batches.measure_study_batches(params.study, quick=True)
    assert list(table["variant"]) == list(params.study.variants)[:2]
    assert (table["mixed_ms"] > 0).all() and (table["by_length_ms"] > 0).all()
    assert set(metrics) == {f"study_batches_speedup_{v}" for v in table["variant"]}
