"""dvc.yaml follows the code and reads at a glance: each stage lists exactly the project modules its
command imports, directly or through others, so editing any of them reruns the stage and no other
change does (a missing module would let DVC serve results the code no longer makes), and exactly the
params its module declares it reads, the only ones it can read; everything the report reads is some
stage's output; no variant depends on the lesson's model or training."""

import pickle
import re
from pathlib import Path

import pytest
import yaml

from pipeline.core.params import parse_params
from pipeline.core.reads import UndeclaredRead, declared
from pipeline.tools.stage_deps import command_files, declared_reads, import_closure, rewritten, stages

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "dvc.yaml").read_text()
STAGES = list(stages(TEXT))


@pytest.mark.parametrize("name,module,deps", STAGES, ids=[s[0] for s in STAGES])
def test_stage_deps_equal_the_import_closure(name, module, deps):
    code = import_closure(module)
    repeated = sorted({d for d in deps if deps.count(d) > 1})
    assert not repeated, f"stage {name}: dvc.yaml lists deps twice: {', '.join(repeated)}"
    listed = {d for d in deps if d.startswith("pipeline/")} - set(command_files(TEXT)[name])
    missing, extra = sorted(code - listed), sorted(listed - code)
    hint = " (python -m pipeline.tools.stage_deps --write)"
    assert not missing, f"stage {name}: dvc.yaml lacks deps it imports: {', '.join(missing)}{hint}"
    assert not extra, f"stage {name}: dvc.yaml lists deps it never imports: {', '.join(extra)}{hint}"


def test_the_tool_that_writes_the_code_deps_leaves_dvc_yaml_as_it_is():
    assert rewritten(TEXT) == TEXT


def test_the_closure_follows_imports_through_other_modules():
    closure = import_closure("pipeline.stages.train")
    assert {"pipeline/__init__.py", "pipeline/infra/numerics.py", "pipeline/core/resume.py"} <= closure
    assert "pipeline/report/readme.py" not in closure


def test_a_package_run_with_dash_m_brings_its_main_and_what_main_imports():
    closure = import_closure("pipeline.tools.benchmark")
    assert {"pipeline/tools/benchmark/__init__.py", "pipeline/tools/benchmark/__main__.py"} <= closure
    assert {"pipeline/tools/benchmark/suite.py", "pipeline/core/training.py"} <= closure


def test_only_the_stages_that_build_the_hand_set_model_depend_on_its_construction():
    builders = {name for name, _, deps in STAGES if "pipeline/model/handset.py" in deps}
    assert builders == {"variant", "study", "search"}  # search: frozen, rerun on purpose


def test_the_data_files_a_module_reads_are_deps_as_its_code_is():
    report, architecture = (
        import_closure("pipeline.stages.report"),
        import_closure("pipeline.stages.architecture"),
    )
    templates = {"pipeline/report/templates/README.md.j2", "pipeline/report/templates/APPENDIX.md.j2"}
    assert {"pipeline/report/claims.yaml", *templates} <= report
    assert (
        "pipeline/probes/lesson10_layers.txt" in architecture
        and "pipeline/report/claims.yaml" not in architecture
    )


def test_a_file_the_command_line_names_is_a_dep():
    search = next(deps for name, _, deps in STAGES if name == "search")
    assert "pipeline/study/search.yaml" in search


def test_dvc_yaml_reads_at_a_glance():
    assert len(TEXT.splitlines()) < 250


def outputs():
    """Every output path of every stage (foreach stages with their `${key}`)."""
    found = set()
    for stage in yaml.safe_load(TEXT)["stages"].values():
        body = stage.get("do", stage)
        for section in ("outs", "metrics"):
            for entry in body.get(section, []):
                found.add(next(iter(entry)) if isinstance(entry, dict) else entry)
    return found


def produced(path, outs):
    """Whether `path` is an output, lies inside an output folder, or matches a foreach output."""
    for out in outs:
        pattern = re.escape(out).replace(re.escape("${key}"), "[^/]+")
        if re.fullmatch(pattern, path) or path.startswith(out.rstrip("/") + "/"):
            return True
    return False


def test_everything_the_report_reads_is_a_stages_output():
    report = yaml.safe_load(TEXT)["stages"]["report"]
    outs = outputs()
    read = [d for d in report["deps"] if not d.startswith("pipeline/")]
    assert read and all(produced(d, outs) for d in read), [d for d in read if not produced(d, outs)]


def test_every_parameter_the_report_names_is_among_its_params():
    """The report's code and templates read params.<section>.<key> directly (a key reached through a
    variable, `m = params.model; m.d_model`, is not seen: its section is declared whole here)."""
    report = yaml.safe_load(TEXT)["stages"]["report"]
    declared = report["params"]
    sources = [*(ROOT / "pipeline/report").rglob("*.py"), *(ROOT / "pipeline/report/templates").glob("*.j2")]
    read = {
        ".".join(filter(None, m.groups()))
        for path in sources
        for m in re.finditer(r"\bparams\.([a-z_]+)(?:\.([a-z_]+))?", path.read_text())
        if m.group(1) != "yaml"  # "params.yaml", the file
    }
    missing = sorted(k for k in read if not any(k == d or k.startswith(f"{d}.") for d in declared))
    assert read and not missing, f"the report reads {missing}, which its params in dvc.yaml leave out"


def test_no_variant_stage_depends_on_the_lessons_model_or_training():
    params = yaml.safe_load(TEXT)["stages"]["variant"]["do"]["params"]
    assert params and not [p for p in params if str(p).split(".")[0] in ("model", "train", "data")]


@pytest.mark.parametrize("name,module,deps", STAGES, ids=[s[0] for s in STAGES])
def test_each_stages_params_are_the_keys_its_module_declares_it_reads(name, module, deps):
    listed = yaml.safe_load(TEXT)["stages"][name]
    listed = listed.get("do", listed).get("params", [])
    assert listed == [key.strip('"') for key in declared_reads(module)], f"stage {name}"


def test_a_stage_that_declares_reads_without_a_params_line_is_refused():
    without = TEXT.replace("    params: [data]\n", "", 1)
    with pytest.raises(ValueError, match="stage data has no params: but its module declares READS"):
        rewritten(without)


def test_a_stage_sees_only_the_keys_it_declares_and_a_worker_process_sees_the_same():
    params = declared(
        parse_params(yaml.safe_load((ROOT / "params.yaml").read_text())), ["data", "train.seeds"]
    )
    assert params.data.seed == 0 and params.train.seeds == tuple(range(10))
    with pytest.raises(UndeclaredRead, match="this stage reads train.lr, which its READS leave out"):
        print(params.train.lr)
    with pytest.raises(UndeclaredRead, match="reads model,"):
        print(params.model)
    again = pickle.loads(pickle.dumps(params))
    assert again.train.seeds == params.train.seeds
    with pytest.raises(UndeclaredRead):
        print(again.train.steps)


def test_a_foreach_stage_sees_its_own_entry_only():
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    first, *others = raw["study"]["variants"]
    params = declared(parse_params(raw), ["study.variants.${key}"], own=first)
    assert params.study.variants[first].positions and list(params.study.variants) == [first]
    assert first in params.study.variants and all(o not in params.study.variants for o in others)
    with pytest.raises(UndeclaredRead, match=f"study.variants.{others[0]}"):
        params.study.variants[others[0]]
