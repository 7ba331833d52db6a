"""The lesson's sections of params.yaml (data, train, evaluate, norm, probe; the model's is
pipeline/params/model.py), each a frozen, typed section (pipeline/params/rules.py) whose fields
declare a type and a rule; params.yaml is the one source of values, but for an option that is off
unless set, whose default is the value that leaves it off."""

from pipeline.params.rules import NATURAL, POSITIVE_FLOAT, POSITIVE_INT, float_in, list_of, one_of, section

LENGTHS = list_of(POSITIVE_INT, unique=True)
SEEDS = list_of(NATURAL, unique=True)
BETAS = list_of(float_in(0.0, 1.0, low_open=True), length=2)


@section
class DataParams:
    """The sorting task: sources of random digits, targets their sorted copy."""

    train_lengths: LENGTHS
    train_size: POSITIVE_INT
    test_lengths: LENGTHS
    test_size: POSITIVE_INT
    seed: NATURAL


@section
class RecipeParams:
    """The paper's recipe (section 5.3-5.4) as lesson 10 runs it: what the lesson's model and the
    study's variants both train with."""

    steps: POSITIVE_INT
    batch_size: POSITIVE_INT
    lr: POSITIVE_FLOAT
    betas: BETAS
    eps: POSITIVE_FLOAT
    warmup: POSITIVE_INT
    label_smoothing: float_in(0.0, 1.0)
    seeds: SEEDS
    device: one_of("auto", "cpu", "cuda")
    # Options the lesson leaves off, each off at its default (the study's recipes may set them):
    # decoupled weight decay (AdamW's, Loshchilov and Hutter, 2019) per unit of learning rate, 0 is Adam
    weight_decay: float_in(0.0, float("inf")) = 0.0
    # the learning rate's floor after the warm-up: the paper's 1/sqrt(step) decay stops there (0: never)
    lr_floor: float_in(0.0, float("inf")) = 0.0


@section
class TrainParams(RecipeParams):
    """The lesson's model's training: the recipe, with progress and resume."""

    log_every: POSITIVE_INT
    resume_every: NATURAL  # 0: off; N: save a resumable state every N steps


@section
class EvaluateParams:
    """How decoding is measured."""

    batch_size: POSITIVE_INT
    show_failures: NATURAL
    beam_size: POSITIVE_INT  # the paper's beam (section 6.1); 1 is greedy
    length_penalty: float_in(0.0, float("inf"))  # alpha of Wu et al. (2016)


@section
class NormParams:
    """The pre-norm comparison: how many of train.seeds (the first) are retrained with the other norm."""

    count: POSITIVE_INT


@section
class ProbeParams:
    """Lesson 6's probes of residual connections and LayerNorm, on toy stacks and real models."""

    depths: LENGTHS
    sweep_layers: LENGTHS
    seed: NATURAL
