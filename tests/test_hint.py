"""The study's count hint: its target, its head trained beside the sort, and the sort model it leaves."""

import torch

from pipeline.core.batching import make_batch
from pipeline.core.data import make_datasets
from pipeline.params.rules import as_dict
from pipeline.study.model import StudyTransformer
from pipeline.study.variant import CountHint, copies_to_come, hinted_loss
from pipeline.tokens import BOS, IGNORE
from tests.conftest import study_config, tiny_params, trained_alone


def test_copies_to_come_counts_the_digit_just_written_still_ahead():
    target = torch.tensor([[1, 1, 1, 4, 7, 7], [0, 3, 3, IGNORE, IGNORE, IGNORE]])
    tgt_in = torch.tensor([[BOS, 1, 1, 1, 4, 7], [BOS, 0, 3, 3, 0, 0]])
    # row 0: after BOS none; after the first 1 two more 1s, then one, then none; after 4 none; after 7 one
    assert copies_to_come(tgt_in, target).tolist() == [[0, 2, 1, 0, 0, 1], [0, 0, 1, 0, 0, 0]]


def test_the_hint_trains_beside_the_sort_and_leaves_the_sort_model_alone():
    params = tiny_params(data={"train_lengths": (3, 5), "train_size": 256}, train={"steps": 12, "warmup": 2})
    data = make_datasets(params.data)[0]
    config = study_config(**as_dict(params.model))  # the lesson's sizes, as a study variant
    plain, plain_losses = trained_alone(config, params.train, 0, data, build_model=StudyTransformer)
    with_hint = {"build_model": lambda c: CountHint(StudyTransformer(c), 0.5), "loss_of": hinted_loss}
    hinted, hinted_losses = trained_alone(config, params.train, 0, data, **with_hint)
    again, again_losses = trained_alone(config, params.train, 0, data, **with_hint)
    hinted, again = hinted.model, again.model  # the sort's model, the head left behind
    assert hinted.state_dict().keys() == plain.state_dict().keys()  # the head is dropped
    assert hinted_losses[0] > plain_losses[0]  # the first step: the same model, plus the count's error
    assert not torch.equal(hinted.embedding.weight, plain.embedding.weight)  # the hint's gradient reached it
    assert hinted_losses == again_losses  # seeded: the head's initial weights too
    pairs = zip(hinted.state_dict().values(), again.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    batch = make_batch(data["source"][:4], data["target"][:4], data["lengths"][:4])
    assert hinted(batch.src, batch.tgt_in).shape == (4, batch.tgt_in.shape[1], 11)
