"""The length study's parameters, read and checked whole: its own file (study/params.yaml, the section
`study`) and the lesson's sections its stages compare with (params.yaml); every section parsed
(pipeline/params/rules.py), then the rules across sections; every invalid value is one clear error,
before any stage writes anything. The lesson's stages read params.yaml alone
(pipeline/params/lesson_load.py): the lesson reads nothing of the study."""

from pathlib import Path

from pipeline.infra.errors import ConfigError
from pipeline.params.lesson_load import LessonParams, check_lesson, refuse_the_studys_keys
from pipeline.params.rules import parse, read_params_file, section
from pipeline.study.params import StudyParams, check_study

STUDY_PARAMS = "study/params.yaml"  # the study's own file, beside its dvc.yaml


@section
class Params(LessonParams):
    """The lesson's sections and the length study's."""

    study: StudyParams


def check_across(p: Params):
    """Rules that involve more than one value."""
    check_lesson(p)
    check_study(p.study)


def parse_params(raw) -> Params:
    """Validate a params mapping (the lesson's sections and `study`) into Params, or raise ConfigError."""
    refuse_the_studys_keys({k: v for k, v in raw.items() if k != "study"} if isinstance(raw, dict) else raw)
    params = parse(Params, raw)
    check_across(params)
    return params


def joined_files(lesson_path, study_path):
    """The lesson's file and the study's as one mapping: each holds its own sections only."""
    lesson, study = read_params_file(lesson_path), read_params_file(study_path)
    if not isinstance(study, dict) or set(study) != {"study"}:
        found = ", ".join(map(str, study)) if isinstance(study, dict) else type(study).__name__
        raise ConfigError(f"{study_path} holds the section study alone; found: {found}")
    if isinstance(lesson, dict) and "study" in lesson:
        raise ConfigError(f"{lesson_path} has a section study: the length study's values go in {study_path}")
    return {**lesson, **study} if isinstance(lesson, dict) else lesson


def load_params(path="params.yaml", study_path=None):
    """Read and validate the lesson's params.yaml and the study's file (by default study/params.yaml
    beside it) whole: a study stage then hands the library only the values it reads, and its
    dvc.yaml's params are those values (pipeline/tools/stage_deps.py)."""
    study_path = Path(path).parent / STUDY_PARAMS if study_path is None else study_path
    return parse_params(joined_files(path, study_path))
