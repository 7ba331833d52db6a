import pytest
import torch

from pipeline.infra.errors import ConfigError
from pipeline.model import positions as model
from pipeline.model import transformer
from pipeline.model.hooks import attention_weights
from pipeline.model.transformer import (
    DecoderLayer,
    Dropout,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    causal_mask,
    count_parameters,
    padding_mask,
)
from pipeline.params import model as lesson_options
from pipeline.params.model import ModelConfig
from pipeline.params.rules import as_dict, parse
from pipeline.study import model as study
from pipeline.study import options
from pipeline.study.positions import Sinusoidal
from tests.conftest import model_config, study_config

POSITIONS = model.POSITIONS


def test_parameter_counts_equal_lesson_10():
    model = Transformer(model_config())
    assert count_parameters(EncoderLayer(32, 4, 128, 0.1)) == 12_704
    assert count_parameters(DecoderLayer(32, 4, 128, 0.1)) == 16_992
    assert count_parameters(model) == 59_744
    assert model.embedding.weight.numel() == 352  # one matrix, counted once, used three times


def test_encoder_layer_counts_split_as_the_lesson_says():
    layer = EncoderLayer(32, 4, 128, 0.1)
    assert count_parameters(layer.attn) == 4_224
    assert count_parameters(layer.ffn) == 8_352
    assert sum(count_parameters(s.ln) for s in layer.sub) == 128


def test_shapes():
    torch.manual_seed(0)
    model = Transformer(model_config()).eval()
    src, tgt_in = torch.randint(0, 10, (2, 10)), torch.randint(0, 11, (2, 7))
    memory = model.encode(src)
    assert memory.shape == (2, 10, 32)
    assert model.decode(tgt_in, memory).shape == (2, 7, 11)
    with attention_weights(model) as found:
        model.decode(tgt_in, memory)
    crosses = [found[f"decoder.{i}.cross"] for i in range(2)]
    assert [w.shape for (w,) in crosses] == [(2, 4, 7, 10)] * 2  # 7 written x 10 read


def test_causal_mask_hides_later_tokens():
    torch.manual_seed(0)
    attn = MultiHeadAttention(32, 4)
    x = torch.randn(2, 5, 32)
    x2 = x.clone()
    x2[:, 4] = torch.randn(32)  # change the last token
    mask = causal_mask(5)
    out, out2 = attn(x, x, mask), attn(x2, x2, mask)
    assert out.shape == (2, 5, 32)
    assert torch.allclose(out[:, :4], out2[:, :4])
    assert not torch.allclose(out[:, 4], out2[:, 4])


def test_decoder_output_at_a_position_ignores_later_inputs():
    torch.manual_seed(0)
    model = Transformer(model_config()).eval()
    src, tgt = torch.randint(0, 10, (3, 10)), torch.randint(0, 11, (3, 8))
    changed = tgt.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 10
    a, b = model(src, tgt), model(src, changed)
    assert torch.allclose(a[:, :5], b[:, :5], atol=1e-6)


def test_padding_never_changes_outputs_at_real_positions():
    torch.manual_seed(0)
    for norm in ("post", "pre"):
        model = Transformer(model_config(norm=norm)).eval()
        src = torch.randint(0, 10, (1, 6))
        padded = torch.cat([src, torch.randint(0, 10, (1, 4))], dim=1)  # 4 junk tokens after
        mask = padding_mask(torch.tensor([6]), 10)
        tgt_in = torch.randint(0, 11, (1, 6))
        plain = model(src, tgt_in)
        masked = model(padded, tgt_in, mask)
        assert torch.allclose(plain, masked, atol=1e-5)


def test_embeddings_are_tied_and_scaled():
    model = Transformer(model_config(dropout=0.0)).eval()
    tokens = torch.tensor([[3]])
    expected = model.embedding.weight[3] * 32**0.5 + model.positions.pe[0]
    assert torch.allclose(model.embed(tokens)[0, 0], expected)
    memory = torch.zeros(1, 1, 32)
    logits = model.decode(tokens, memory)
    assert logits.shape[-1] == model.embedding.weight.shape[0]  # h E^T: the same matrix


def test_pre_norm_adds_one_final_layer_norm_per_stack():
    post, pre = Transformer(model_config()), Transformer(model_config(norm="pre"))
    assert count_parameters(pre) - count_parameters(post) == 2 * 2 * 32


def test_dropout_keeps_one_minus_p_of_the_elements_and_preserves_the_mean():
    """The model's dropout: as nn.Dropout, each element kept with probability 1 - p and scaled by
    1 / (1 - p), so the expected output is the input; in evaluation it is the identity."""
    drop = Dropout(0.1).train()
    x = torch.ones(200, 1000)
    torch.manual_seed(0)
    y = drop(x)
    kept = y != 0
    assert torch.allclose(y[kept], torch.tensor(1 / 0.9))
    share = kept.float().mean().item()
    assert abs(share - 0.9) < 4 * (0.9 * 0.1 / x.numel()) ** 0.5  # within 4 standard errors
    assert abs(y.mean().item() - 1.0) < 0.01
    torch.manual_seed(0)
    assert torch.equal(drop(x), y)  # the same generator state, the same mask
    assert drop.eval()(x) is x and Dropout(0.0).train()(x) is x


def test_every_option_has_its_class_and_an_unknown_name_is_one_line():
    """The lesson's model takes the paper's names (pipeline/params/model.py), each with its class; a
    study variant's model every name of the study's options (pipeline/study/options.py), each with a
    class found without importing anything for its side effects; a name with none is one line."""
    assert set(POSITIONS) == set(model.POSITIONS) == set(lesson_options.POSITIONS)
    assert set(transformer.NORMS) == set(lesson_options.NORMS)
    assert set(study.POSITION_CLASSES) == set(options.POSITIONS)
    assert set(study.WEIGHTINGS) == set(options.ATTENTION) and set(study.RESIDUALS) == set(options.NORMS)
    with pytest.raises(
        ConfigError, match=r"^model.positions = rotary: no class of the length study builds it"
    ):
        study.class_of(study.POSITION_CLASSES, "rotary", "model.positions")
    gated = {name for name in options.ATTENTION if options.ATTENTION[name].gated}
    signed = {"signed", "signed_tanh", "signed_clamp", "signed_owed"}
    assert gated == {"sigmoid", "sigmoid_log", "sigmoid_st", "split", "hard_sigmoid", *signed}


@pytest.mark.parametrize("name", sorted(options.POSITIONS))
def test_each_position_schemes_rules_describe_what_its_module_does(name):
    """The facts the study's parameter rules read (pipeline/study/options.py) against the module itself."""
    rules = options.POSITIONS[name]
    scheme = study.POSITION_CLASSES[name](study_config(positions=name, d_model=16, heads=2, max_len=12))
    source = torch.zeros(2, 5, dtype=torch.long)
    assert scheme.source(source).shape[1] - source.shape[1] == rules.source_rows
    assert isinstance(scheme, Sinusoidal) == rules.sinusoids
    tokens = torch.zeros(2, 5, dtype=torch.long)
    scheme.train()
    drawn = [scheme.vectors(tokens, 0, encoder=False) for _ in range(4)]
    draws = drawn[0] is not None and not all(torch.equal(drawn[0], d) for d in drawn[1:])
    assert draws == rules.draws_positions  # training draws each sequence's positions afresh


def test_the_paper_model_holds_the_lessons_options_only():
    """The lesson's model has no field, class or hook for the study's options: its configuration is
    the paper's sizes, positions and norm; its decoder layer reads the stream and the memory only."""
    assert {f for f in ModelConfig.__dataclass_fields__} == {
        "d_model", "heads", "layers", "d_ff", "dropout", "norm", "positions", "max_len"
    }  # fmt: skip
    for hook in ("rows_fed", "decoder_positions", "source", "encoder_bias", "decoder_draw"):
        assert not hasattr(Transformer, hook) and not hasattr(model.Sinusoidal, hook), hook
    with pytest.raises(ConfigError, match="model.positions"):
        parse(ModelConfig, {**as_dict(model_config()), "positions": "bos"}, "model")
