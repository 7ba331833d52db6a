"""params.yaml read, and the lesson's sections checked (data, model, train, evaluate, norm, probe),
with the rules across them. The file holds the lesson's sections alone: the length study's live in
its own file (study/params.yaml, read by pipeline/params/load.py), and nothing of the lesson reads
them."""

from pipeline.infra.errors import ConfigError
from pipeline.params.model import ModelConfig, check_config, check_lesson_model
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
    check_lesson_model("model", p.model)
    check_config("model", p.model, p.data.train_lengths)
    if p.train.batch_size > p.data.train_size:
        raise ConfigError(
            f"train.batch_size = {p.train.batch_size} exceeds data.train_size = {p.data.train_size}: "
            "a batch must fit in the training set"
        )
    for key in ("train_lengths", "test_lengths"):  # the lesson's positions add no row to the source
        for length in getattr(p.data, key):
            if length > p.model.max_len:
                raise ConfigError(
                    f"data.{key} has {length}, beyond model.max_len = {p.model.max_len}: "
                    f"lengths must be in [1, {p.model.max_len}]"
                )


def parse_lesson(raw) -> LessonParams:
    """The lesson's sections of a params mapping, checked, or ConfigError."""
    if isinstance(raw, dict) and "study" in raw:
        raise ConfigError(
            "params.yaml has a section study: the length study's values go in study/params.yaml"
        )
    params = parse(LessonParams, raw)
    check_lesson(params)
    return params


def load_lesson_params(path="params.yaml") -> LessonParams:
    """Read params.yaml and check the lesson's sections: a lesson stage then hands the library only
    the values it reads, and dvc.yaml's params for the stage are those values."""
    return parse_lesson(read_params_file(path))
