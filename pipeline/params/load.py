"""params.yaml read and checked whole: every section parsed (pipeline/params/rules.py), then the
rules across sections; every invalid value is one clear error, before any stage writes anything.
The stages that read the length study's section load it so, and the numerics stage, which runs
before any stage trains; the lesson's stages read their own sections only
(pipeline/params/lesson_load.py)."""

from pipeline.params.lesson_load import LessonParams, check_lesson
from pipeline.params.rules import parse, read_params_file, section
from pipeline.params.study import StudyParams, check_study


@section
class Params(LessonParams):
    """The whole file: the lesson's sections and the length study's."""

    study: StudyParams


def check_across(p: Params):
    """Rules that involve more than one value."""
    check_lesson(p)
    check_study(p.study)


def parse_params(raw) -> Params:
    """Validate a params mapping (as read from YAML) into Params, or raise ConfigError."""
    params = parse(Params, raw)
    check_across(params)
    return params


def load_params(path="params.yaml"):
    """Read and validate params.yaml whole: a stage then hands the library only the values it reads,
    and dvc.yaml's params for the stage are those values (pipeline/tools/stage_deps.py)."""
    return parse_params(read_params_file(path))
