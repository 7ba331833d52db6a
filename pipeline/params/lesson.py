"""What lesson 10 ("Implementarlo entero", 002_2821ac794a08d866.txt) fixes that the code uses: the
model and recipe it trains, and the example it sorts. Every number the lessons state, with their
words, is a claim in pipeline/report/claims.yaml."""

from pipeline.params.model import ModelConfig
from pipeline.params.sections import RecipeParams

# 'El modelo: d sub model treinta y dos, cuatro heads, dos capas de cada lado, FFN de ciento
# veintiocho, dropout cero coma uno'; post-norm ('post-norm, como el paper'), sinusoids ('senos del
# episodio 4', a table of 64 rows: pe(64, d)). The architecture's claims are about this size, whatever
# params.yaml sets.
MODEL = ModelConfig(
    d_model=32,
    heads=4,
    layers=2,
    d_ff=128,
    dropout=0.1,
    norm="post",
    positions="sinusoidal",
    max_len=64,
)
# 'Adam(m.parameters(), lr=2e-3, betas=(0.9, 0.98), eps=1e-9)', 'forma(s + 1, warmup=100)',
# 'label_smoothing=0.1', 'for paso in range(1, 1201)', 'datos(64)': the loop's constants, one seed.
RECIPE = RecipeParams(
    steps=1200,
    batch_size=64,
    lr=2e-3,
    betas=(0.9, 0.98),
    eps=1e-9,
    warmup=100,
    label_smoothing=0.1,
    seeds=(0,),
    device="cpu",
)
# 'datos(1000, ...)': every accuracy the lesson prints is on 1,000 sequences, of the length it trains
# and tests on (a claim may apply to another): what a lesson's number is read against, not a choice of
# ours, so the report's tests of them read these rather than data.test_size
LESSON_TEST_SIZE = 1000
LESSON_LENGTH = 10
# 'entrada: 2 9 2 0 0 2 6 7 9 4' / 'salida:  0 0 2 2 2 4 6 7 9 9'
EXAMPLE_INPUT = [2, 9, 2, 0, 0, 2, 6, 7, 9, 4]
EXAMPLE_OUTPUT = [0, 0, 2, 2, 2, 4, 6, 7, 9, 9]
