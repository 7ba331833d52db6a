"""What the two lessons state, in one place: every value the project compares against.

Each value carries the lesson's own words (Spanish), so that a reader can find it in the text:
lesson 10, "Implementarlo entero" (002_2821ac794a08d866.txt, cited here as L10) and lesson 6,
"Apilar sin perder lo de abajo" (000_d57fe2a1e816378e.txt, L6).
Values the lesson prints with a fixed precision are kept as text: the digits it prints are the
claim ("0.0" is not "0"). lesson_words.csv holds, for each row of the claims table, the lesson's
words it checks, verbatim (the claims table's `words` column).
"""

import csv
from pathlib import Path

from pipeline.core.params import Recipe
from pipeline.model.config import ModelConfig

WORDS_PATH = Path(__file__).with_name("lesson_words.csv")


def lesson_words():
    """{claim id: the lesson's own words it checks}, from lesson_words.csv."""
    with WORDS_PATH.open(newline="") as f:
        return {row["id"]: row["words"] for row in csv.DictReader(f)}


# --- Lesson 10, part 1: attention and layers ---------------------------------------------------

# L10: 'salida (2, 5, 32) · tokens 0–3 iguales: True'
MASK_KEEPS_EARLIER_OUTPUTS = True
MASK_DEMO_OUTPUT_SHAPE = "(2, 5, 32)"
# L10: 'una tabla por head: h = 4, d_k = 32/4 = 8'
HEADS = 4
D_K = 8
# L10: 'entra (2, 10, 32) sale (2, 10, 32) · parámetros 12704'; 'la atención tiene cuatro mil
# doscientos veinticuatro, la FFN ocho mil trescientos cincuenta y dos, y los LayerNorm, ciento
# veintiocho'
ENCODER_LAYER_OUTPUT_SHAPE = "(2, 10, 32)"
ENCODER_LAYER_PARAMS = 12_704
ENCODER_LAYER_ATTENTION_PARAMS = 4_224
ENCODER_LAYER_FFN_PARAMS = 8_352
ENCODER_LAYER_LAYERNORM_PARAMS = 128
# L10: 'la tabla de la cross-attention es de siete por diez'; 'sale (2, 7, 32) · parámetros 16992'
CROSS_ATTENTION_TABLE = "7 x 10"
DECODER_LAYER_OUTPUT_SHAPE = "(2, 7, 32)"
DECODER_LAYER_PARAMS = 16_992
# L10: 'tres subcapas, tres LayerNorm' (3 x 2 x 32 parameters)
DECODER_LAYER_LAYERNORMS = "3 (192)"

# L10: 'El modelo: d sub model treinta y dos, cuatro heads, dos capas de cada lado, FFN de ciento
# veintiocho, dropout cero coma uno'; post-norm ('post-norm, como el paper'), sinusoids ('senos del
# episodio 4', a table of 64 rows: pe(64, d)). The architecture's claims are about this size, whatever
# params.yaml sets (sigmoid_bias: unused by softmax attention).
MODEL = ModelConfig(
    d_model=32,
    heads=4,
    layers=2,
    d_ff=128,
    dropout=0.1,
    norm="post",
    positions="sinusoidal",
    attention="softmax",
    sigmoid_bias=-8.0,
    max_len=64,
)
# L10: 'Adam(m.parameters(), lr=2e-3, betas=(0.9, 0.98), eps=1e-9)', 'forma(s + 1, warmup=100)',
# 'label_smoothing=0.1', 'for paso in range(1, 1201)', 'datos(64)': the loop's constants, one seed.
RECIPE = Recipe(
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

# --- Lesson 10, part 2: the model --------------------------------------------------------------

# L10: 'una sola matriz, E: once filas, una por token'; 'logits = h E⊤: (1×32)(32×11)'
EMBEDDING_ROWS = 11
LOGITS_PER_POSITION = 11
# L10: 'parámetros: 59,744 · embeddings: 352 (una sola vez)'
MODEL_PARAMS = 59_744
EMBEDDING_PARAMS = 352
# L10: 'El base del paper tenía sesenta y cinco millones.'
PAPER_BASE_MODEL_PARAMS = 65e6
# L10 quotes the paper's section 3.4: 'we share the same weight matrix between the two embedding
# layers and the pre-softmax linear transformation ... we multiply those weights by √d_model'
SHARED_EMBEDDING_MATRICES = 1
# L10: 'los embeddings, multiplicados por raíz de d', with 'd sub model treinta y dos': √32
EMBEDDING_SCALE = "5.657"

# --- Lesson 10, part 3: training ---------------------------------------------------------------

# L10: 'paso  300: pérdida 0.928' ... 'paso 1200: pérdida 0.579' (one batch of 64 each)
LOSS_BY_STEP = {300: 0.928, 600: 0.674, 900: 0.607, 1200: 0.579}
# L10: 'Mil doscientos pasos, unos diez segundos.'
TRAINING_TIME = "about 10 s"
# L10: 'q = (0,909; 0,0091 × 10)', 'label smoothing con ε = 0,1 y V = 11'
SMOOTHED_TARGET_CORRECT = "0.909"
SMOOTHED_TARGET_OTHER = "0.0091"
# L10: 'min_p L = −Σ q_k log q_k = 0,514'; 'El correcto aporta cero coma cero ocho siete, los otros
# diez juntos, cero coma cuatro dos siete.'
LOSS_FLOOR = "0.514"
LOSS_FLOOR_CORRECT_SHARE = "0.087"
LOSS_FLOOR_OTHERS_SHARE = "0.427"
# L10: '0,579 − 0,514 = 0,065', 'lo que todavía le falta aprender'
LOSS_GAP_TO_FLOOR = 0.065

# --- Lesson 10, part 4: generating and measuring ----------------------------------------------

# L10: 'greedy         : secuencias 99.5% · dígitos 99.9%'
#      'teacher forcing: secuencias 99.5% · dígitos 99.9%' ('Igual que con teacher forcing.')
GREEDY_SEQ_ACC, GREEDY_DIGIT_ACC = 0.995, 0.999
# L10: 'x, y, y_in = datos(1000, torch.Generator().manual_seed(123))   # 1000 nuevas': every accuracy
# the lesson reports is over 1,000 sequences (the length table's too, with manual_seed(5))
TEST_SIZE = 1000
TEACHER_FORCING_SEQ_ACC, TEACHER_FORCING_DIGIT_ACC = 0.995, 0.999
# L10: 'entrada: 2 9 2 0 0 2 6 7 9 4' / 'salida:  0 0 2 2 2 4 6 7 9 9'
EXAMPLE_INPUT = [2, 9, 2, 0, 0, 2, 6, 7, 9, 4]
EXAMPLE_OUTPUT = [0, 0, 2, 2, 2, 4, 6, 7, 9, 9]
# L10, "Lo que no aprendió": 'largo  6: secuencias   0.0% · dígitos 28.6%' ... (trained on 10);
# {length: (exact sequences %, digits %)}
LENGTH_TABLE = {6: (0.0, 28.6), 8: (9.0, 57.0), 10: (99.3, 99.9), 12: (45.4, 82.1), 14: (0.3, 37.2)}
# L10: 'la salida empieza con cero dos de cada tres veces y termina con nueve otras tantas'
SORTED_STARTS_WITH_0 = SORTED_ENDS_WITH_9 = 2 / 3

# --- Lesson 6 ----------------------------------------------------------------------------------

# L6: 'Cuatro sumandos'; 'Con N bloques salen 2^N ... exactamente uno que no atraviesa nada'
PATHS_TWO_BLOCKS = 4
PATHS_THROUGH_NO_SUBLAYER = 1
# L6: 'la subcapa tiene prohibido devolver otra forma que no sea T × d_model'; 'Los 512 del artículo'
PAPER_D_MODEL = 512
# L6: 'ε es una constante pequeña — 10^-5 en casi todas las implementaciones'
LAYERNORM_EPS = 1e-5
# L6: '2 d_model d_ff = 2 097 152 frente a 4 d_model² = 1 048 576'; the quiz asks the first again
FFN_WEIGHTS = 2_097_152
ATTENTION_WEIGHTS = 1_048_576
# L6: 'Sesgos y vectores de normalización incluidos, son 3 150 336 parámetros por bloque, y el encoder
# del artículo apila N = 6: unos 18.9 millones'
ENCODER_BLOCK_PARAMS = 3_150_336
SIX_ENCODER_BLOCKS_PARAMS = 18.9e6
# L6 quiz: 'x + LayerNorm(Sublayer(x)), es una operación distinta de la del artículo. True'
POST_NORM_DIFFERS_FROM_X_PLUS_NORM = True
# L6, LayerNorm cell (default_rng(7)): 'entran con medias entre $0.98$ y $2.89$' (the lesson states only
# that range, not each row's mean)
LAYERNORM_INPUT_MEAN_RANGE = "0.98 to 2.89"
# L6: 'salen con media 0 y desviación 1; con γ = 4 y β = −1 salen con media −1 y desviación 4'
LAYERNORM_OUTPUT_MEAN_STD = "0, 1"
LAYERNORM_AFFINE_MEAN_STD = "-1, 4"
# L6: 'tocar la fila 4 mueve la fila 0 en 0.0 por filas y en 1.889 por columnas'
ROW0_SHIFT_PER_ROW = "0.0"
ROW0_SHIFT_PER_COLUMN = "1.889"
# L6, residual cell (default_rng(0), 12 FFNs): 'Sin la suma cae de 0.109 con una capa a 5.182 × 10^-7
# con doce —siete órdenes de magnitud'; 'Con la suma se queda entre 1.00 y 1.80 todo el camino'
WITHOUT_SUM_ONE_LAYER = "1.09e-01"  # 0.109, as three significant digits
WITHOUT_SUM_TWELVE_LAYERS = "5.182e-07"
WITHOUT_SUM_ORDERS_OF_MAGNITUDE = 7
WITH_SUM_RANGE = "1.00 to 1.80"
RESIDUAL_CELL_LAYERS = 12
