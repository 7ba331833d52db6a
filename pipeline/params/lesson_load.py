"""params.yaml read, and the lesson's sections checked (data, model, train, evaluate, norm, probe),
with the rules across them. A lesson stage reads only these, so an edit to the length study's rules
(pipeline/params/study.py) reruns none of them; the numerics stage, which runs before any stage
trains, checks the whole file (pipeline/params/load.py), so a bad study value is still one clear
line before any training."""

from pathlib import Path

import yaml

from pipeline.infra.errors import ConfigError
from pipeline.params.model import ModelConfig, check_config, longest_source
from pipeline.params.rules import parse, section
from pipeline.params.sections import DataParams, EvaluateParams, NormParams, ProbeParams, TrainParams


@section
class LessonParams:
    data: DataParams
    model: ModelConfig
    train: TrainParams
    evaluate: EvaluateParams
    norm: NormParams
    probe: ProbeParams


STUDY_SECTIONS = ("study",)  # the sections the lesson's stages never read


def check_lesson(p):
    """Rules that involve more than one of the lesson's values (`p`: LessonParams or Params)."""
    check_config("model", p.model, p.data.train_lengths)
    if p.train.batch_size > p.data.train_size:
        raise ConfigError(
            f"train.batch_size = {p.train.batch_size} exceeds data.train_size = {p.data.train_size}: "
            "a batch must fit in the training set"
        )
    longest = longest_source(p.model)
    for key in ("train_lengths", "test_lengths"):
        for length in getattr(p.data, key):
            if length > longest:
                raise ConfigError(
                    f"data.{key} has {length}, beyond model.max_len = {p.model.max_len}"
                    + (" less the BOS that opens the source" if longest < p.model.max_len else "")
                    + f": lengths must be in [1, {longest}]"
                )


def read_params_file(path="params.yaml"):
    """params.yaml's mapping as read, or one clear error where the file is missing or not YAML."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: run from the project root") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ConfigError(f"{path} is not valid YAML{line}: {getattr(err, 'problem', err)}") from None


def parse_lesson(raw) -> LessonParams:
    """The lesson's sections of a params mapping, checked, or ConfigError; the study's left unread."""
    lesson = {k: v for k, v in raw.items() if k not in STUDY_SECTIONS} if isinstance(raw, dict) else raw
    params = parse(LessonParams, lesson)
    check_lesson(params)
    return params


def load_lesson_params(path="params.yaml") -> LessonParams:
    """Read params.yaml and check the lesson's sections: a lesson stage then hands the library only
    the values it reads, and dvc.yaml's params for the stage are those values."""
    return parse_lesson(read_params_file(path))
