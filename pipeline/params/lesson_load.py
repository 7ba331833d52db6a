"""params.yaml read, and the lesson's sections checked (data, model, train, evaluate, norm, probe),
with the rules across them. The file holds the lesson's sections alone: the length study's live in
its own file (study/params.yaml, read by pipeline/study/load.py), and nothing of the lesson reads
them."""

from pipeline.infra.errors import ConfigError
from pipeline.params.model import ModelConfig, check_config
from pipeline.params.rules import parse, read_params_file, section
from pipeline.params.sections import DataParams, EvaluateParams, NormParams, ProbeParams, TrainParams


@section
class LessonParams:
    data: DataParams
    model: ModelConfig
    train: TrainParams
    evaluate: EvaluateParams
    norm: NormParams
    probe: ProbeParams


def check_lesson(p):
    """Rules that involve more than one of the lesson's values (`p`: LessonParams or Params)."""
    check_config("model", p.model, p.data.train_lengths)
    if p.train.batch_size > p.data.train_size:
        raise ConfigError(
            f"train.batch_size = {p.train.batch_size} exceeds data.train_size = {p.data.train_size}: "
            "a batch must fit in the training set"
        )
    for key in ("train_lengths", "test_lengths"):
        for length in getattr(p.data, key):
            if length > p.model.max_len:
                raise ConfigError(
                    f"data.{key} has {length}, beyond model.max_len = {p.model.max_len}: "
                    f"lengths must be in [1, {p.model.max_len}]"
                )


def refuse_the_studys_keys(raw):
    """A section or a model option of the length study's in the lesson's mapping: one line naming
    where it goes, rather than the rules' "unknown parameter"."""
    if not isinstance(raw, dict):
        return
    if "study" in raw:
        raise ConfigError(
            "params.yaml has a section study: the length study's values go in study/params.yaml"
        )
    if isinstance(raw.get("model"), dict) and "attention" in raw["model"]:
        raise ConfigError(
            f"model.attention = {raw['model']['attention']}: the lesson's model has the paper's softmax "
            "attention only; another weighting goes in a study variant (study/params.yaml, "
            "study.variants.<name>.attention)"
        )


def parse_lesson(raw) -> LessonParams:
    """The lesson's sections of a params mapping, checked, or ConfigError."""
    refuse_the_studys_keys(raw)
    params = parse(LessonParams, raw)
    check_lesson(params)
    return params


def load_lesson_params(path="params.yaml") -> LessonParams:
    """Read params.yaml and check the lesson's sections: a lesson stage then hands the library only
    the values it reads, and dvc.yaml's params for the stage are those values."""
    return parse_lesson(read_params_file(path))
