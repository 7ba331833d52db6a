"""Against the readout that drifts with length: the signed count read through a bound (tanh, or a
hard threshold), training rows with long counts of one digit, and search rows ranked on the
verdict's three kinds of input."""

import dataclasses
import json

import numpy as np
import pytest
import torch

from pipeline.infra.errors import ConfigError
from pipeline.model.transformer import MultiHeadAttention
from pipeline.study.bar import recipe_of, search_rank
from pipeline.study.load import parse_params
from pipeline.study.model import StudyTransformer, weighting
from pipeline.study.owed_count import vocabulary_rows
from pipeline.study.search import kinds_reach, load_rows, row_recipe, row_study, run_search, with_seeds
from pipeline.study.sets import training_set
from pipeline.study.signed_count import signed_count
from pipeline.tokens import BOS
from tests.test_length_verdict import SIGNED
from tests.test_search import tiny_raw
from tests.test_study import with_variants

# ---------------------------------------------------------------------------------- the bound


def difference_read(attention, copies, written):
    """The signed count of one token `copies` times in the input, `written` times written, every gate
    open: (1, 1, d_model) after W^O."""
    torch.manual_seed(0)
    heads = MultiHeadAttention(8, 2, weighting(attention, 2, 30.0))
    with torch.no_grad():  # a value of 20 in every coordinate: one copy saturates either bound in float32
        heads.wv.weight.copy_(20.0 * torch.eye(8))
        heads.wv.bias.zero_()
    row = torch.ones(1, 1, 8)
    q = heads.project_q(row)
    kv = heads.project_kv(row.expand(1, copies, 8))
    written_kv = heads.project_kv(row.expand(1, max(written, 1), 8))
    written_mask = None if written else torch.ones(1, 1, 1, 1, dtype=torch.bool)
    with torch.no_grad():
        return signed_count(heads, q, kv, written_kv, written_mask=written_mask)


@pytest.mark.parametrize("attention", ["signed_tanh", "signed_clamp"])
def test_a_bounded_count_reads_one_copy_owed_as_it_reads_fifty(attention):
    """The decision "is a copy still owed" reads the same whatever the count: one copy owed and fifty
    give the same output, where the signed count as counted grows fifty times."""
    one, fifty = difference_read(attention, 3, 2), difference_read(attention, 50, 0)
    assert torch.equal(one, fifty)
    none_owed = difference_read(attention, 4, 4)
    assert (one - none_owed).abs().max() > 0.1  # owed or not still differ (W^O of a unit vector)
    counted_one, counted_fifty = difference_read("signed", 3, 2), difference_read("signed", 50, 0)
    bias = difference_read("signed", 4, 4)  # W^O's bias, what no copy owed reads
    ratio = (counted_fifty - bias).norm() / (counted_one - bias).norm()
    assert abs(ratio - 50) < 0.01


def test_the_bounded_counts_are_cross_attentions_of_the_signed_counts_encoder():
    ok = with_variants({"t": {"positions": "bos", "attention": "none/none/signed_clamp"}})
    parse_params(ok)
    misplaced = with_variants({"t": {"positions": "bos", "attention": "none/signed_tanh/signed_tanh"}})
    with pytest.raises(ConfigError, match="'signed_tanh' is a cross-attention.*none/none/signed_tanh"):
        parse_params(misplaced)
    encoder = with_variants({"t": {"positions": "bos", "attention": "softmax/none/signed_tanh"}})
    with pytest.raises(ConfigError, match="encoder attention none, positions bos"):
        parse_params(encoder)


# --------------------------------------------------------------------- the per-digit threshold


def twins(attention="none/none/signed_owed"):
    """An untrained signed count and the same weights under `attention`."""
    torch.manual_seed(0)
    signed = StudyTransformer(SIGNED).eval()
    other = StudyTransformer(dataclasses.replace(SIGNED, attention=attention)).eval()
    other.load_state_dict(signed.state_dict())
    return signed, other


def teacher_forced(model, sources, written):
    src = torch.as_tensor(sources, dtype=torch.long)
    tgt_in = torch.cat([torch.full((len(src), 1), BOS), torch.as_tensor(written, dtype=torch.long)], 1)
    with torch.no_grad():
        return model(src, tgt_in)


def test_the_owed_count_is_the_signed_count_where_no_digit_is_owed_twice():
    """Rows of distinct digits owe at most one copy of each: the threshold changes nothing, and the
    owed count gives the signed count's logits (float32's default tolerances: sums in another order)."""
    signed, owed = twins()
    rng = np.random.default_rng(0)
    sources = np.stack([rng.permutation(10)[:7] for _ in range(50)])
    written = np.sort(sources, 1)[:, :5]
    torch.testing.assert_close(
        teacher_forced(owed, sources, written), teacher_forced(signed, sources, written)
    )


def test_the_owed_count_reads_a_step_of_a_long_input_as_a_step_of_a_short_one_owing_the_same_digits():
    """After one 3 of [3, 5, 3, 3] (3 and 5 owed) and after thirty 3s of forty 3s and a 5 (the same
    two digits owed, eleven copies of 3): the same logits, at position 1 and at position 30. Nothing
    the decoder reads depends on the length or on how many copies are owed (no positions, no decoder
    self-attention, the threshold); the signed count's logits differ."""
    signed, owed = twins()
    short, long = ([[3, 5, 3, 3]], [[3]]), ([[3] * 20 + [5] + [3] * 20], [[3] * 30])
    for model, same in ((owed, True), (signed, False)):
        a, b = teacher_forced(model, *short)[:, -1], teacher_forced(model, *long)[:, -1]
        assert torch.allclose(a, b, atol=1e-5) == same, model.config.attention


def test_the_owed_count_decodes_token_by_token_as_it_decodes_at_once():
    _, owed = twins()
    sources = np.array([[4, 4, 1, 9, 4, 0], [7, 7, 7, 7, 2, 2]])
    written = np.sort(sources, 1)
    full = teacher_forced(owed, sources, written)
    src = torch.as_tensor(sources, dtype=torch.long)
    tgt_in = torch.cat([torch.full((2, 1), BOS), torch.as_tensor(written, dtype=torch.long)], 1)
    with torch.no_grad():
        cache = owed.start_cache(owed.encode(src), steps=tgt_in.shape[1])
        stepped = torch.stack([owed.decode_step(tgt_in[:, t], cache) for t in range(tgt_in.shape[1])], 1)
    torch.testing.assert_close(stepped, full)


# ------------------------------------------------------------------------- long-count rows


def most_copies(data):
    rows = zip(data["source"], data["lengths"], strict=True)
    return np.array([np.bincount(source[:n], minlength=10).max() for source, n in rows])


def test_long_count_rows_hold_one_digit_in_most_of_the_row_and_leave_the_other_rows_alone():
    repeats = training_set([10], 4000, 0, repeats=0.25)
    both = training_set([10], 4000, 0, repeats=0.25, long_counts=0.25)
    changed = (repeats["source"] != both["source"]).any(1)
    assert 0.2 < changed.mean() < 0.3  # about a quarter of all rows, redrawn
    assert (most_copies(both)[changed] > 5).all()  # more than half of each row of 10: one digit
    assert (both["target"] == np.sort(both["source"], axis=1)).all()
    uniform = training_set([10], 4000, 0)
    repeat_heavy = (uniform["source"] != repeats["source"]).any(1)
    assert not (changed & repeat_heavy).any()  # long counts are drawn from the rows left uniform
    assert (most_copies(both) >= 10).sum() > 20  # ten copies of one digit: every copy one digit
    assert most_copies(uniform).max() < 10


def test_repeat_heavy_and_long_count_rows_share_the_rows_at_most_whole():
    raw = with_variants({"v": {"positions": "bos", "attention": "softmax", "data": {"repeats": 0.6}}})
    raw["study"]["data"]["long_counts"] = 0.5
    with pytest.raises(ConfigError, match=r"study.variants.v: data.repeats = 0.6 and data.long_counts = 0.5"):
        parse_params(raw)


def test_a_recipe_names_long_counts_only_where_they_are_on():
    """A recipe recorded before long-count rows existed reads the same today."""
    study = parse_params(
        with_variants(
            {
                "off": {"positions": "bos", "attention": "softmax"},
                "on": {"positions": "bos", "attention": "softmax", "data": {"long_counts": 0.25}},
            }
        )
    ).study
    assert "long_counts" not in recipe_of(study, "off") and recipe_of(study, "on")["long_counts"] == 0.25


# ------------------------------------------------------------- the search on three kinds


def test_a_row_tested_on_three_kinds_records_each_and_ranks_by_all_three(tmp_path):
    raw = tiny_raw()
    sums = {"positions": "bos", "attention": "none/sigmoid/sigmoid"}
    rows = [{"name": "sums", "variant": sums}, {"name": "sums_kinds", "variant": sums, "kinds": True}]
    out, params = tmp_path / "search.json", parse_params(raw)
    run_search(params.study, params.evaluate.batch_size, rows, out, workers=1)
    plain, judged = json.loads(out.read_text())["rows"]
    assert "kinds" not in plain and "kinds" not in plain["recipe"]["test"]
    assert set(judged["kinds"]) == {"uniform", "repeats", "long_counts"}
    assert judged["recipe"]["test"]["kinds"] == {
        "kinds": ["uniform", "repeats", "long_counts"],
        "size": params.study.verdict.test_size,
    }
    assert set(map(int, judged["kinds"]["repeats"]["0"])) == set(range(1, params.study.max_length + 1))
    by_kind = {k: {int(n): [a] for n, a in acc["0"].items()} for k, acc in judged["kinds"].items()}
    assert judged["kinds_reach"] == kinds_reach(by_kind, params.study.bar)
    # the same seeds, trained with the same recipe, are not trained again when the row is recorded
    before = out.read_text()
    run_search(params.study, params.evaluate.batch_size, rows, out, workers=1)
    assert out.read_text() == before


def test_the_reach_on_three_kinds_is_the_shortest_kinds_reach():
    bar = parse_params(tiny_raw()).study.bar
    every = {n: [1.0, 1.0] for n in range(1, 9)}
    assert kinds_reach({"uniform": every, "repeats": {**every, 6: [1.0, 0.97]}}, bar) == 5  # one seed low
    assert kinds_reach({"uniform": every, "long_counts": {**every, 1: [0.9, 1.0]}}, bar) == 0


def test_a_row_judged_on_three_kinds_ranks_above_every_row_judged_on_uniform_digits_alone():
    uniform_only = {"min_seed": 1.0, "reach": 40, "acc_40": 0.99}
    judged = {"min_seed": 0.9, "reach": 30, "acc_40": 0.5, "kinds_reach": 3}
    assert search_rank(judged) > search_rank(uniform_only)
    assert search_rank({**judged, "kinds_reach": 20}) > search_rank(judged)
    assert search_rank({**judged, "min_seed": 1.0}) > search_rank(judged)


def test_kinds_is_true_or_absent(tmp_path):
    rows = tmp_path / "rows.yaml"
    rows.write_text("- {name: a, variant: {positions: bos, attention: softmax}, kinds: yes please}\n")
    with pytest.raises(ConfigError, match="row a: kinds is true or absent"):
        load_rows(rows)


def test_the_rows_aimed_at_the_readout_are_screened_on_three_kinds_from_the_searchs_seed():
    """Every row of the rows file that is tested on the three kinds draws them from study.seed, never
    the verdict's; a recipe without kinds is the recipe recorded before them."""
    study = parse_params(tiny_raw()).study
    rows = with_seeds(load_rows("pipeline/study/search.yaml"), study)
    judged = [r for r in rows if r.get("kinds")]
    assert len(judged) >= 10
    for row in judged:
        recipe = row_recipe(row_study(study, row), row)
        assert recipe["test"]["seed"] == study.seed != study.verdict.seed
    plain = next(r for r in rows if not r.get("kinds"))
    assert "kinds" not in row_recipe(row_study(study, plain), plain)["test"]


def test_the_owed_count_reads_the_vocabulary_whatever_the_models_length():
    """A model that reads fewer tokens than the vocabulary holds reads its table in parts: the same
    rows (the encoder sees each token alone), and it trains and decodes."""
    _, owed = twins()
    short = StudyTransformer(dataclasses.replace(owed.config, max_len=6)).eval()
    short.load_state_dict(owed.state_dict(), strict=False)  # the causal mask is a buffer of max_len
    torch.testing.assert_close(vocabulary_rows(short, "cpu"), vocabulary_rows(owed, "cpu"))
    assert torch.isfinite(teacher_forced(short, [[2, 2, 1]], [[1, 2]])).all()
