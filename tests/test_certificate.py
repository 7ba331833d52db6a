"""The length study's certificate for every length, where a decoding step has a finite state; exact
sequences read in one forward; the controls of what training adds."""

import dataclasses

import numpy as np
import pytest
import torch

from pipeline.core.decoding import accuracy_by_length, greedy_cached, sorted_tests
from pipeline.study import certificate
from pipeline.study.certificate import (
    certify,
    coverage,
    fed_tokens,
    has_finite_state,
    owed_sets,
    reachable_states,
    shortest_input,
)
from pipeline.study.controls import control_lengths, handset_of, untrained_models
from pipeline.study.forced import forced_greedy
from pipeline.study.model import StudyTransformer, built_for, load_model
from pipeline.study.readout import handset_readout, handset_readout_forced
from pipeline.study.signed_handset import signed_handset_model
from pipeline.study.verdict_sets import verdict_set
from pipeline.tokens import BOS
from tests.test_length_verdict import ROOT, SIGNED

OWED = dataclasses.replace(SIGNED, attention="none/none/signed_owed")
KINDS = ("uniform", "repeats", "long_counts")


@pytest.fixture(autouse=True)
def short_long_inputs(monkeypatch):
    monkeypatch.setattr(certificate, "LONG_LENGTHS", (40,))  # the suite's: lengths cost seconds


def rows_exact(tokens, source):
    return (tokens == torch.as_tensor(np.sort(source, 1), dtype=torch.long)).all(1)


# ----------------------------------------------------------------------------- the states


def test_the_states_are_the_token_fed_and_a_non_empty_set_of_owed_digits_not_below_it():
    states = reachable_states()
    assert len(states) == len(set(states)) == 3059  # 1,023 after BOS, 2^(10-d) - 1 after each digit d
    for fed, owed in states:
        assert owed and (fed == BOS or owed >> fed << fed == owed)


def test_a_states_shortest_input_is_in_that_state():
    for fed, owed in reachable_states()[::37]:
        source, tokens = shortest_input(fed, owed)
        target = np.sort(np.array([source]), 1)
        step = len(tokens) - 1
        assert fed_tokens(target)[0, step] == fed and owed_sets(target)[0, step] == owed
        assert len(source) <= 11


def test_coverage_counts_the_states_that_rows_visit():
    found = coverage({2: np.array([[0, 0], [3, 7]])})
    # [0, 0]: (BOS, {0}), (0, {0}); [3, 7]: (BOS, {3, 7}), (3, {7})
    assert found["visited"] == 4 and found["states"] == 3059 and len(found["missed"]) == 3055


# ------------------------------------------------------------------------------ certificate


def test_only_the_owed_count_without_positions_or_self_attention_has_a_finite_state():
    assert has_finite_state(OWED)
    assert not has_finite_state(SIGNED)  # counts without a bound: the state grows with the length
    assert not has_finite_state(dataclasses.replace(OWED, attention="none/sigmoid/signed_owed"))
    assert not has_finite_state(dataclasses.replace(OWED, positions="bos_offset"))


def test_the_owed_count_set_by_hand_is_certified_and_sorts_every_kind_at_length_120():
    model = built_for(signed_handset_model(OWED), 120)
    found = certify(model, KINDS, 1)
    assert found["certified"] and found["wrong_states"] == 0 and found["smallest_margin"] > 10
    assert 2 * found["largest_distance"] < found["smallest_margin"]
    for kind in KINDS:  # what the certificate says, sampled
        source = verdict_set(kind, 120, 20, 4)
        assert rows_exact(greedy_cached(model, torch.as_tensor(source, dtype=torch.long)), source).all()


def test_an_untrained_owed_count_is_not_certified():
    torch.manual_seed(0)
    found = certify(built_for(StudyTransformer(OWED).eval(), 40), KINDS, 1)
    assert not found["certified"] and found["wrong_states"] > 0


def test_a_step_of_a_long_input_gives_its_states_logits():
    """The invariance the certificate measures, on random weights: a distance of rounding alone."""
    torch.manual_seed(1)
    found = certify(built_for(StudyTransformer(OWED).eval(), 40), KINDS, 1)
    assert found["long_states"] > 10 and found["largest_distance"] < 1e-4


def test_the_committed_signed_owed_checkpoints_are_certified_as_the_verdict_records():
    import json

    record = json.loads((ROOT / "metrics/verdict.json").read_text())["certificates"]["signed_owed_repeats"]
    model, _ = load_model(ROOT / "metrics/variants/signed_owed_repeats/seed_200.pt")
    found = certify(built_for(model, 40), KINDS, 1)
    assert found["certified"] == record["trained"]["every_seed_certified"]
    assert found["smallest_margin"] >= record["trained"]["smallest_margin"]


# --------------------------------------------------------------------------- one forward


def trained(name, seed=200):
    return load_model(ROOT / f"metrics/variants/{name}/seed_{seed}.pt")[0]


@pytest.mark.parametrize(
    "name, seed", [("signed_count_hint_repeats", 200), ("sums_count_hint_repeats", 200), ("bos_mixed", 100)]
)
def test_a_row_is_exact_in_one_forward_exactly_where_greedy_decoding_sorts_it(name, seed):
    """Models that sort some rows and not others, so that both sides of the equivalence are met."""
    model = built_for(trained(name, seed), 60)
    met = set()
    for kind in KINDS:
        for n in (12, 30, 60):
            if n > model.longest_source:
                continue
            source = verdict_set(kind, n, 100, 2)
            src = torch.as_tensor(source, dtype=torch.long)
            greedy, forced = (
                rows_exact(greedy_cached(model, src), source),
                rows_exact(forced_greedy(model, src), source),
            )
            assert torch.equal(greedy, forced), (kind, n)
            met |= set(greedy.tolist())
    assert met == {True, False}


def test_the_readout_in_one_forward_sorts_the_rows_its_decoding_sorts():
    for model in (
        built_for(trained("signed_count_hint_repeats"), 60),
        built_for(StudyTransformer(OWED).eval(), 60),
    ):
        for kind in KINDS:
            source = verdict_set(kind, 60, 60, 3)
            src = torch.as_tensor(source, dtype=torch.long)
            assert torch.equal(
                rows_exact(handset_readout(model, src), source),
                rows_exact(handset_readout_forced(model, src), source),
            )


# ------------------------------------------------------------------------------ controls


def test_the_untrained_controls_are_the_weights_training_started_from():
    recipe = type("Recipe", (), {"seeds": (200, 201, 202, 203), "init": "random"})()
    models = untrained_models(OWED, recipe)
    assert list(models) == ["200", "201", "202"]
    torch.manual_seed(201)
    again = StudyTransformer(OWED)
    assert all(torch.equal(a, b) for a, b in zip(models["201"].parameters(), again.parameters(), strict=True))


def test_a_hand_set_exists_for_the_counts_and_the_sums_and_not_for_softmax():
    assert handset_of(OWED) is not None and handset_of(SIGNED) is not None
    assert handset_of(dataclasses.replace(SIGNED, attention="none/sigmoid/sigmoid")) is not None
    assert handset_of(dataclasses.replace(SIGNED, attention="softmax")) is None


def test_the_controls_lengths_are_inside_and_beyond_training():
    data = type("Data", (), {"train_lengths": (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)})()
    verdict = type("Verdict", (), {"table_lengths": (20, 40, 60)})()
    assert control_lengths(data, verdict) == [5, 10, 20, 60]


def test_the_readout_sorts_an_untrained_owed_count_that_its_own_layers_do_not():
    torch.manual_seed(2)
    model = built_for(StudyTransformer(OWED).eval(), 60)
    tests = sorted_tests({60: verdict_set("repeats", 60, 40, 1)})
    rows, _ = accuracy_by_length(
        model, tests, 40, decoders={"own": forced_greedy, "read": handset_readout_forced}
    )
    accuracy = {r["decoder"]: r["seq_acc"] for r in rows}
    assert accuracy["read"] == 1.0 and accuracy["own"] < 0.5
