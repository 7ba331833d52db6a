import dataclasses
import functools
import hashlib
import io
import json

import numpy as np
import pytest
import torch

from pipeline.core.batching import make_batch
from pipeline.core.data import make_datasets
from pipeline.core.loop import FAR_ABOVE, RUNNING_WINDOW, build_optimizer, check_loss, train
from pipeline.core.loss import smoothed_loss
from pipeline.core.resume import resume_for_seeds
from pipeline.core.train import loss_summary
from pipeline.infra import files, pool
from pipeline.infra.errors import DataError, TrainingDiverged
from pipeline.infra.workers import set_up_worker
from pipeline.model.checkpoint import check_fits, load_checkpoint, save_checkpoint
from pipeline.model.transformer import Transformer
from pipeline.tokens import BOS, IGNORE
from pipeline.tools.benchmark.step import ParameterAdam
from tests.conftest import (
    RECORDED_BYTES,
    model_config,
    recorded_bytes,
    skip_unless_same_numerics,
    this_machines_operations,
    tiny_params,
    trained_alone,
)


def train_data(params):
    return make_datasets(params.data)[0]


def state_bytes(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def weights_digest(model):
    """SHA-256 of every tensor's name and bytes: the weights alone, not torch.save's archive format."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def test_decoder_input_is_bos_then_target_shifted():
    batch = make_batch(np.array([[3, 1, 2]]), np.array([[1, 2, 3]]), np.array([3]))
    assert batch.tgt_in.tolist() == [[BOS, 1, 2]]
    assert batch.target.tolist() == [[1, 2, 3]] and batch.src_mask is None


def test_padding_is_masked_and_ignored_by_the_loss():
    batch = make_batch(np.array([[3, 1, 0], [2, 5, 4]]), np.array([[1, 3, 0], [2, 4, 5]]), np.array([2, 3]))
    assert batch.target.tolist() == [[1, 3, IGNORE], [2, 4, 5]]
    assert batch.src_mask[:, 0, 0].tolist() == [[False, False, True], [False, False, False]]
    logits = torch.randn(2, 3, 11)
    changed = logits.clone()
    changed[0, 2] = 100.0  # anything at the padded position
    assert smoothed_loss(logits, batch.target, 0.1) == smoothed_loss(changed, batch.target, 0.1)


def test_tiny_model_overfits_one_batch():
    torch.manual_seed(0)
    model = Transformer(model_config(d_model=32, heads=4, layers=1, d_ff=64, dropout=0.0, max_len=8))
    src = torch.randint(0, 10, (8, 5))
    tgt = src.sort(dim=1).values
    batch = make_batch(src.numpy(), tgt.numpy(), np.full(8, 5))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(500):
        loss = smoothed_loss(model(batch.src, batch.tgt_in), batch.target, 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.1  # from ~17 at initialisation (logits h E^T are large)
    assert (model(batch.src, batch.tgt_in).argmax(-1) == tgt).all()


def test_training_reduces_the_loss():
    params = tiny_params(train={"steps": 60})
    _, losses = trained_alone(params.model, params.train, 0, train_data(params))
    assert len(losses) == 60
    assert np.mean(losses[-10:]) < np.mean(losses[:10])


def test_same_seed_same_weights_other_seed_other_weights():
    params = tiny_params()
    data = train_data(params)
    a, la = trained_alone(params.model, params.train, 0, data)
    b, lb = trained_alone(params.model, params.train, 0, data)
    c, _ = trained_alone(params.model, params.train, 1, data)
    assert la == lb and state_bytes(a) == state_bytes(b)
    assert state_bytes(a) != state_bytes(c)


# Weights after 12 steps of tiny models, recorded in tests/recorded_bytes.json: any change to the
# model or the loop that moves a bit of the pipeline's training shows here. They hold where the
# operations compute as on the machine that recorded them (the numerics fingerprint); elsewhere the
# test skips, naming the operations that round differently, rather than fail for rounding alone.
RECORDED_CASES = {
    "post-norm, dropout": ({"model": {"dropout": 0.1, "layers": 2}}, 0),
    "padded rows, dropout": ({"data": {"train_lengths": (3, 5, 7)}, "model": {"dropout": 0.1}}, 2),
}
# The same, trained as the stages train: beside seed 7, together (the same bytes as alone).
COMPANION = 7


def trained(overrides, seed, together):
    params = tiny_params(train={"steps": 12}, **overrides)
    if not together:
        return trained_alone(params.model, params.train, seed, train_data(params))
    models, losses = train(params.model, params.train, [seed, COMPANION], train_data(params))
    return models[0], losses[0]


@pytest.mark.numerics
@pytest.mark.parametrize("together", [False, True], ids=["one model", "seeds together"])
@pytest.mark.parametrize("name", list(RECORDED_CASES))
def test_training_gives_the_recorded_bytes(name, together):
    recorded = recorded_bytes()
    skip_unless_same_numerics(recorded)
    model, losses = trained(*RECORDED_CASES[name], together)
    expected = recorded["training_together" if together else "training"][name]
    assert weights_digest(model) == expected["weights_sha256"] and losses[-1] == expected["last_loss"]


def trained_digest(seed):
    """Worker: seed `seed`'s tiny model, trained after the workers' own set-up, as its digest."""
    set_up_worker("cpu")
    params = tiny_params(train={"steps": 12}, model={"dropout": 0.1})
    return weights_digest(train(params.model, params.train, [seed], train_data(params))[0][0])


@pytest.fixture
def deterministic_restored():
    before = torch.are_deterministic_algorithms_enabled()
    yield
    torch._C._set_deterministic_algorithms(before)  # as set_up_worker sets it


@pytest.mark.slow
def test_a_seed_trains_to_the_same_bytes_forked_spawned_or_in_this_process(
    monkeypatch, deterministic_restored
):
    """The pool forks where it can (fast) and spawns elsewhere: the start must not move a bit."""
    here = [trained_digest(seed) for seed in (0, 1)]
    assert torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() == 1
    for start in ("fork", "spawn"):
        monkeypatch.setattr(pool, "START", start)
        assert pool.run_jobs(trained_digest, [(0,), (1,)], workers=2) == here, start
    assert here[0] != here[1]


@pytest.mark.numerics
def test_flat_adam_changes_no_bits():
    """The training loop updates all parameters as one flat buffer in ATen's fused Adam kernel;
    torch.optim.Adam(fused=True) over each parameter, as a user writes it, must give the same losses
    and the same weights, bit for bit; and after training each parameter owns its storage again, as a
    freshly built model's does."""
    params = tiny_params(model={"dropout": 0.1, "layers": 2}, train={"steps": 12})
    data = train_data(params)
    flat, flat_losses = trained_alone(params.model, params.train, 0, data)
    each, each_losses = trained_alone(
        params.model, params.train, 0, data, optimizer=functools.partial(ParameterAdam, fused=True)
    )
    assert flat_losses == each_losses and state_bytes(flat) == state_bytes(each)
    assert all(
        p.grad is None and p.data.untyped_storage().nbytes() == p.numel() * 4 for p in flat.parameters()
    )


def test_the_loop_trains_a_model_it_is_given_to_build():
    params = tiny_params(train={"steps": 12})
    data = train_data(params)
    built = []

    def build(config):
        built.append(config)
        return Transformer(config)

    ours, losses = trained_alone(params.model, params.train, 0, data)
    given, given_losses = trained_alone(params.model, params.train, 0, data, build_model=build)
    assert built == [params.model]
    assert given_losses == losses and state_bytes(given) == state_bytes(ours)


@pytest.mark.parametrize("seeds", [[0], [0, 1]], ids=["alone", "together"])
def test_divergence_stops_with_the_step_and_the_likely_cause(seeds):
    params = tiny_params(train={"lr": 1e6, "warmup": 1, "steps": 50})
    with pytest.raises(TrainingDiverged, match=r"diverged at step \d+: .*learning rate"):
        train(params.model, params.train, seeds, train_data(params))


def test_divergence_check_ignores_a_first_batch_easier_than_the_next():
    # one length a batch: a length-1 first batch far below a length-10 second one is no divergence
    check_loss(3.0, 2, 1e-4, [0.2], warmup=100)
    check_loss(30.0, 50, 1e-4, [2.4] * 49, warmup=100)  # a swing during the warm-up is no divergence


def test_divergence_check_stops_non_finite_losses_at_any_step():
    for bad in (float("nan"), float("inf")):
        with pytest.raises(TrainingDiverged, match=r"diverged at step 1: loss (nan|inf)"):
            check_loss(bad, 1, 1e-4, [], warmup=100)


def test_divergence_check_stops_a_loss_far_above_its_running_level_after_the_warm_up():
    earlier = [0.6] * (RUNNING_WINDOW + 100)
    check_loss(FAR_ABOVE * 0.6 * 0.99, 201, 1e-4, earlier, warmup=100)  # high, but not far above
    with pytest.raises(TrainingDiverged, match=r"diverged at step 201: loss 2.5, 4.2 times its running"):
        check_loss(2.5, 201, 1e-4, earlier, warmup=100)


def test_loss_summary_snapshots():
    summary = loss_summary([float(i) for i in range(1, 301)], 100)
    assert summary["loss_step_100"] == 100.0 and summary["loss_step_300"] == 300.0
    assert summary["loss_final"] == 300.0 and summary["loss_last100_mean"] == pytest.approx(250.5)


def test_checkpoint_rebuilds_the_model_from_its_own_config(tmp_path):
    config = model_config(d_model=16, heads=2, layers=1, d_ff=32, max_len=12)
    model = Transformer(config)
    save_checkpoint(tmp_path / "m.pt", model, seed=3)
    loaded, record = load_checkpoint(tmp_path / "m.pt")
    assert loaded.config == config and record["seed"] == 3
    assert state_bytes(loaded) == state_bytes(model)


def test_checkpoint_bytes_do_not_depend_on_the_file_name(tmp_path):
    model = Transformer(model_config(d_model=8, heads=2, layers=1, d_ff=8))
    save_checkpoint(tmp_path / "a.pt", model)
    save_checkpoint(tmp_path / "b.pt", model)
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()


def test_truncated_or_foreign_checkpoint_is_a_clear_error(tmp_path):
    model = Transformer(model_config(d_model=8, heads=2, layers=1, d_ff=8))
    save_checkpoint(tmp_path / "m.pt", model)
    data = (tmp_path / "m.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="cut.pt is corrupt or truncated"):
        load_checkpoint(tmp_path / "cut.pt")
    files.write_torch(tmp_path / "other.pt", {"weights": torch.zeros(3)})
    with pytest.raises(DataError, match="not a checkpoint of this project"):
        load_checkpoint(tmp_path / "other.pt")
    with pytest.raises(DataError, match="missing.pt not found"):
        load_checkpoint(tmp_path / "missing.pt")


def test_checkpoint_whose_weights_do_not_fit_its_config_is_refused(tmp_path):
    model = Transformer(model_config(d_model=8, heads=2, layers=1, d_ff=8))
    files.write_torch(
        tmp_path / "m.pt",
        {
            "format": 1,
            "vocab": 11,
            "model": dataclasses.asdict(model_config(d_model=16, heads=2, layers=1, d_ff=8)),
            "state_dict": model.state_dict(),
        },
    )
    with pytest.raises(DataError, match="weights do not fit its configuration"):
        load_checkpoint(tmp_path / "m.pt")


def test_evaluation_refuses_lengths_beyond_the_checkpoints_positions():
    model = Transformer(model_config(d_model=8, heads=2, layers=1, d_ff=8, max_len=10))
    check_fits(model, [6, 10], "m.pt")
    with pytest.raises(
        DataError, match=r"max_len = 10 \(sources up to 10\), but the test data has lengths \[12\]"
    ):
        check_fits(model, [10, 12], "m.pt")


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("seeds", [[0], [0, 1]], ids=["alone", "together"])
def test_resumed_training_ends_with_the_same_bytes_as_an_uninterrupted_run(tmp_path, seeds):
    params = tiny_params(train={"steps": 30, "resume_every": 10}, model={"dropout": 0.1})
    data = train_data(params)
    whole, whole_losses = train(params.model, params.train, seeds, data)

    def stop_at_25(step, losses, lr):
        if step == 25:
            raise Interrupt

    saved = resume_for_seeds(params.model, params.train, seeds, len(data["source"]), tmp_path)
    with pytest.raises(Interrupt):
        train(params.model, params.train, seeds, data, on_step=stop_at_25, resume=saved)
    assert saved.load()["step"] == 20  # the last periodic state before the interruption
    seen = []
    resumed, losses = train(
        params.model, params.train, seeds, data, on_step=lambda s, v, lr: seen.append(s), resume=saved
    )
    assert seen == list(range(1, 31))  # replayed steps reach the logger too
    assert losses == whole_losses
    assert [state_bytes(m) for m in resumed] == [state_bytes(m) for m in whole]


def test_a_state_saved_under_other_parameters_or_seeds_is_ignored(tmp_path):
    params = tiny_params(train={"steps": 20, "resume_every": 10})
    rows = len(train_data(params)["source"])
    other = tiny_params(train={"steps": 20, "resume_every": 10, "lr": 0.001})
    adam = build_optimizer(Transformer(params.model).parameters(), params.train)
    resume_for_seeds(other.model, other.train, [0], rows, tmp_path).save(
        10, adam, [[1.0]], [torch.Generator()]
    )
    assert resume_for_seeds(params.model, params.train, [0], rows, tmp_path).load() is None
    saved = resume_for_seeds(params.model, params.train, [0, 1], rows, tmp_path)
    saved.save(10, adam, [[1.0], [1.0]], [torch.Generator()] * 2)
    assert saved.load()["step"] == 10
    assert resume_for_seeds(params.model, params.train, [0, 2], rows, tmp_path).load() is None


def record_bytes(path=RECORDED_BYTES):
    """Rewrite tests/recorded_bytes.json from this machine, in the numerics mode it runs in: after a
    change that moves the training's bits on purpose, from the root:
    `python -c "import pipeline, tests.test_train as t; t.record_bytes()"` (pipeline first: the pin)."""
    from pipeline.numerics import pin as numerics

    training = {"training": {}, "training_together": {}}
    for name, (overrides, seed) in RECORDED_CASES.items():
        for key, together in (("training", False), ("training_together", True)):
            model, losses = trained(overrides, seed, together)
            training[key][name] = {"weights_sha256": weights_digest(model), "last_loss": losses[-1]}
    recorded = {
        **json.loads(path.read_text()),
        "recorded_on": numerics.cpu_identity(),
        "torch": torch.__version__,
    }
    recorded |= {"numerics": this_machines_operations(), **training}
    path.write_text(json.dumps(recorded, indent=2) + "\n")
    print(f"written: {path} (mode {numerics.mode()})")
