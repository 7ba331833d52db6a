"""params.yaml read and checked whole: every section parsed (pipeline/params/rules.py), then the
rules across sections; every invalid value is one clear error, before any stage writes anything."""

from pathlib import Path

import yaml

from pipeline.infra.errors import ConfigError
from pipeline.params.model import ModelConfig, check_config, longest_source
from pipeline.params.rules import parse, section
from pipeline.params.sections import DataParams, EvaluateParams, NormParams, ProbeParams, TrainParams
from pipeline.params.study import StudyParams, check_study


@section
class Params:
    data: DataParams
    model: ModelConfig
    train: TrainParams
    evaluate: EvaluateParams
    norm: NormParams
    probe: ProbeParams
    study: StudyParams


def check_across(p: Params):
    """Rules that involve more than one value."""
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
    check_study(p.study)


def parse_params(raw) -> Params:
    """Validate a params mapping (as read from YAML) into Params, or raise ConfigError."""
    params = parse(Params, raw)
    check_across(params)
    return params


def load_params(path="params.yaml"):
    """Read and validate params.yaml whole: a stage then hands the library only the values it reads,
    and dvc.yaml's params for the stage are those values (pipeline/tools/stage_deps.py)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: run from the project root") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ConfigError(f"{path} is not valid YAML{line}: {getattr(err, 'problem', err)}") from None
    return parse_params(raw)
