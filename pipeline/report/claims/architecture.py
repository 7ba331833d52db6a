"""Claims on the model's parts: lesson 10's shapes and parameter counts, lesson 6's one width, the
paper's shared embedding (metrics/architecture/summary.json)."""

from pipeline.core import lesson
from pipeline.report.claims.rules import L6, L10, PAPER, exact, note, printed

DECODER_EXTRA_REASON = (
    "the lesson's words leave out the third sublayer's LayerNorm: the difference is one attention and "
    "one LayerNorm"
)


def architecture_claims(a):
    def shape(key):
        return str(tuple(a[key]))

    table = " x ".join(map(str, a["cross_attention_table_shape"]))
    widths = ", ".join(str(tuple(x)) for x in a["paper_width_output_shapes"])
    at_512 = f"(1, 7, {lesson.PAPER_D_MODEL}), (1, 30, {lesson.PAPER_D_MODEL})"
    matrices = a["embedding_matrices"]
    enc, dec = a["encoder_layer_params"], a["decoder_layer_params"]
    ln = a["decoder_layer_layernorm_params"] // a["decoder_layer_layernorms"]
    extra = (
        f"{dec:,} - {enc:,} = {dec - enc:,} = {a['encoder_layer_attention_params']:,} + {ln} (one LayerNorm)"
    )
    decoder_norms = f"{a['decoder_layer_layernorms']} ({a['decoder_layer_layernorm_params']})"
    counts = set(a["attention_params_heads_1_to_32"])
    by_heads = f"{counts.pop()} for every h" if len(counts) == 1 else f"{sorted(counts)} by h"
    # fmt: off
    # A table: one claim a line, a hanging second line where the claim's words are long.
    return [
        exact("l10-mask", L10, "causal mask: changing the last token leaves outputs 0-3 unchanged",
              lesson.MASK_KEEPS_EARLIER_OUTPUTS, a["mask_demo_first4_unchanged"]),
        exact("l10-mask-shape", L10, "MultiHead demo output shape",
              lesson.MASK_DEMO_OUTPUT_SHAPE, shape("mask_demo_output_shape")),
        exact("l10-heads", L10, "heads h", lesson.HEADS, a["heads"]),
        exact("l10-dk", L10, "d_k = 32 / 4", lesson.D_K, a["d_k"]),
        exact("l10-enc-params", L10, "encoder layer parameters",
              lesson.ENCODER_LAYER_PARAMS, a["encoder_layer_params"]),
        exact("l10-enc-attn", L10, "encoder layer: attention parameters",
              lesson.ENCODER_LAYER_ATTENTION_PARAMS, a["encoder_layer_attention_params"]),
        exact("l10-enc-ffn", L10, "encoder layer: FFN parameters",
              lesson.ENCODER_LAYER_FFN_PARAMS, a["encoder_layer_ffn_params"]),
        exact("l10-enc-ln", L10, "encoder layer: LayerNorm parameters",
              lesson.ENCODER_LAYER_LAYERNORM_PARAMS, a["encoder_layer_layernorm_params"]),
        exact("l10-enc-shape", L10, "encoder layer maps (2, 10, 32) to",
              lesson.ENCODER_LAYER_OUTPUT_SHAPE, shape("encoder_layer_output_shape")),
        exact("l10-dec-params", L10, "decoder layer parameters",
              lesson.DECODER_LAYER_PARAMS, a["decoder_layer_params"]),
        exact("l10-dec-cross", L10, "cross-attention table for 7 written and 10 input tokens",
              lesson.CROSS_ATTENTION_TABLE, table),
        exact("l10-dec-shape", L10, "decoder layer output shape",
              lesson.DECODER_LAYER_OUTPUT_SHAPE, shape("decoder_layer_output_shape")),
        exact("l10-emb-rows", L10, "E has one row per token (10 digits + BOS)",
              lesson.EMBEDDING_ROWS, a["embedding_rows"]),
        exact("l10-logits", L10, "logits (1 x 32)(32 x 11): one score per token",
              lesson.LOGITS_PER_POSITION, a["logits_shape"][-1]),
        exact("l10-params", L10, "Transformer parameters", lesson.MODEL_PARAMS, a["model_params"]),
        exact("l10-emb-params", L10, "embedding parameters, counted once though used three times",
              lesson.EMBEDDING_PARAMS, a["embedding_params"]),
        exact("paper-shared-emb", PAPER, "section 3.4: one matrix for both embeddings and the pre-softmax "
              "projection", lesson.SHARED_EMBEDDING_MATRICES, matrices, f"{matrices} matrix"),
        exact("l6-width", L6, "one width: a sublayer returns T x d_model at d_model 512 (T = 7 and 30)",
              at_512, widths),
        exact("l6-quiz-order", L6, "quiz: x + LayerNorm(Sublayer(x)) differs from the paper's operation",
              lesson.POST_NORM_DIFFERS_FROM_X_PLUS_NORM, a["post_norm_differs_from_x_plus_norm"]),
        printed("paper-emb-scale", PAPER, "section 3.4: embeddings multiplied by sqrt(d_model) = sqrt(32), "
                "read from the embedding's output", lesson.EMBEDDING_SCALE, a["embedding_scale"], 3),
        note("l10-dec-extra", L10, "the decoder layer holds one attention more than the encoder layer",
             "one attention (4,224)", extra, DECODER_EXTRA_REASON),
        exact("l10-dec-ln", L10, "decoder layer: three sublayers, three LayerNorm (parameters)",
              lesson.DECODER_LAYER_LAYERNORMS, decoder_norms),
        exact("l10-cross-all", L10, "cross-attention: every written token looks at the whole input",
              True, a["cross_attention_sees_every_input"]),
        exact("l10-rows-average", L10, "attention: each row of weights is an average (sums to 1)",
              True, a["attention_rows_sum_to_one"]),
        exact("l10-self-past", L10, "masked self-attention: a row's weight on tokens not yet written",
              0.0, a["self_attention_future_weight"]),
        exact("l10-four-matrices", L10, "attention: four matrices, W^Q, W^K, W^V and W^O",
              4, a["attention_matrices"]),
        exact("l10-shift", L10, "the decoder reads the target shifted one place, BOS first",
              True, a["decoder_input_is_shifted_target"]),
        exact("l6-cost-h", L6, "attention's cost does not depend on h (d_model 32, h = 1..32)",
              f"{lesson.ENCODER_LAYER_ATTENTION_PARAMS} for every h", by_heads),
    ]
    # fmt: on
