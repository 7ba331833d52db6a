"""dvc.yaml follows the code and reads at a glance: each stage lists exactly the project modules its
command imports, directly or through others, so editing any of them reruns the stage and no other
change does (a missing module would let DVC serve results the code no longer makes), and exactly the
params its module reads: the `params.<section>.<key>` it writes out, the only values it hands the
library, which never sees all of params; everything the report reads is some stage's output; no
variant depends on the lesson's model or training. Both pipelines: the lesson's (dvc.yaml) and the length
study's (study/dvc.yaml); the lesson's reads nothing of the study."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from pipeline.report.inputs import ReportParams
from pipeline.tools.stage_deps import (
    PIPELINES,
    command_files,
    import_closure,
    only_a_docstring,
    rewritten,
    stage_reads,
    stages,
)

ROOT = Path(__file__).resolve().parent.parent
TEXTS = {pipeline: (ROOT / pipeline).read_text() for pipeline in PIPELINES}
TEXT, STUDY_TEXT = TEXTS["dvc.yaml"], TEXTS["study/dvc.yaml"]
STAGES = [(name, module, deps, p) for p, text in TEXTS.items() for name, module, deps in stages(text)]
IDS = [f"{s[3]}:{s[0]}" for s in STAGES]


def stage_of(name):
    """A stage's entry in whichever pipeline holds it."""
    for text in TEXTS.values():
        found = yaml.safe_load(text)["stages"].get(name)
        if found:
            return found
    raise KeyError(name)


@pytest.mark.parametrize("name,module,deps,pipeline", STAGES, ids=IDS)
def test_stage_deps_equal_the_import_closure(name, module, deps, pipeline):
    code = import_closure(module)
    repeated = sorted({d for d in deps if deps.count(d) > 1})
    assert not repeated, f"stage {name}: dvc.yaml lists deps twice: {', '.join(repeated)}"
    listed = {d for d in deps if d.startswith("pipeline/")} - set(command_files(TEXTS[pipeline])[name])
    missing, extra = sorted(code - listed), sorted(listed - code)
    hint = " (python -m pipeline.tools.stage_deps --write)"
    assert not missing, f"stage {name}: dvc.yaml lacks deps it imports: {', '.join(missing)}{hint}"
    assert not extra, f"stage {name}: dvc.yaml lists deps it never imports: {', '.join(extra)}{hint}"


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_tool_that_writes_the_code_deps_leaves_dvc_yaml_as_it_is(pipeline):
    assert rewritten(TEXTS[pipeline], pipeline) == TEXTS[pipeline]


def test_the_lessons_pipeline_reads_nothing_of_the_study():
    """No lesson stage imports the study's code or its pages', reads its parameters, or depends on an
    output of the study's pipeline."""
    study_outputs = outputs(STUDY_TEXT)
    for name, module, deps, pipeline in STAGES:
        if pipeline != "dvc.yaml":
            continue
        code = import_closure(module)
        assert not [f for f in code if f.startswith(("pipeline/study/", "pipeline/report/study/"))], name
        assert "pipeline/study/params.py" not in code, name
        assert not [d for d in deps if produced(d, study_outputs)], name
    assert "study" not in yaml.safe_load((ROOT / "params.yaml").read_text())


def test_the_studys_stages_run_from_the_root_and_read_their_own_file():
    for name, stage in yaml.safe_load(STUDY_TEXT)["stages"].items():
        body = stage.get("do", stage)
        assert body.get("wdir") == "..", name
        own = [p for p in body.get("params", []) if isinstance(p, dict)]
        assert own and set(own[0]) == {"study/params.yaml"}, name


def test_the_closure_follows_imports_through_other_modules():
    closure = import_closure("pipeline.stages.train")
    assert {"pipeline/__init__.py", "pipeline/numerics/pin.py", "pipeline/core/seed_axis.py"} <= closure
    assert "pipeline/report/pages.py" not in closure


def test_a_stage_brings_the_room_of_its_work_and_what_that_imports():
    closure = import_closure("pipeline.stages.benchmark")
    assert {"pipeline/tools/benchmark/suite.py", "pipeline/tools/benchmark/step.py"} <= closure
    assert {"pipeline/core/loop.py", "pipeline/__init__.py", "pipeline/numerics/pin.py"} <= closure


def test_a_package_marker_is_a_dep_only_when_it_holds_code(tmp_path):
    """An __init__.py holding only its docstring runs nothing; one with a statement is code."""
    marker, code = tmp_path / "__init__.py", tmp_path / "sub" / "__init__.py"
    code.parent.mkdir()
    marker.write_text('"""A package."""\n')
    code.write_text('"""A package."""\n\nfrom x import y  # noqa\n')
    assert only_a_docstring(marker) and not only_a_docstring(code)
    closure = import_closure("pipeline.stages.data")
    assert "pipeline/stages/__init__.py" not in closure and "pipeline/__init__.py" in closure  # pins


def top_level_names(path):
    """The top-level names a module imports anywhere in it (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_search_imports_ray():
    """Ray is the search's: the one module that imports it is the search's pool, and no other stage
    runs that module, so no other stage pays Ray's import."""
    importers = [p for p in sorted((ROOT / "pipeline").rglob("*.py")) if "ray" in top_level_names(p)]
    assert [p.relative_to(ROOT).as_posix() for p in importers] == ["pipeline/infra/ray_pool.py"]
    spreading = {s[0] for s in STAGES if "pipeline/infra/ray_pool.py" in import_closure(s[1])}
    assert spreading == {"search"}


def test_only_the_stages_that_build_the_hand_set_model_depend_on_its_construction():
    builders = {s[0] for s in STAGES if "pipeline/study/counting_sort.py" in s[2]}
    # search: frozen, rerun on purpose; verdict: the signed count set by hand takes its pieces
    assert builders == {"variant", "study", "search", "verdict"}


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
    search = next(s[2] for s in STAGES if s[0] == "search")
    assert "pipeline/study/search.yaml" in search


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_dvc_yaml_reads_at_a_glance(pipeline):
    assert len(TEXTS[pipeline].splitlines()) < 200


def outputs(text=TEXT):
    """Every output path of every stage of a pipeline (foreach stages with their `${key}`)."""
    found = set()
    for stage in yaml.safe_load(text)["stages"].values():
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


@pytest.mark.parametrize("name,pipelines", [("report", ("dvc.yaml",)), ("study_pages", PIPELINES)])
def test_everything_a_report_reads_is_a_stages_output(name, pipelines):
    """The lesson's report reads the lesson's outputs; the study's pages, the study's and the lesson's."""
    outs = set().union(*(outputs(TEXTS[p]) for p in pipelines))
    read = [d for d in stage_of(name)["deps"] if not d.startswith("pipeline/")]
    assert read and all(produced(d, outs) for d in read), [d for d in read if not produced(d, outs)]


def test_every_parameter_the_report_names_is_one_the_report_stage_hands_it():
    """The report's code and templates read `params.<field>` of ReportParams, which the report stage
    fills from the keys its params name (norm_count from norm.count, ...)."""
    fields = {f.name for f in dataclasses.fields(ReportParams)}
    lesson = [p for p in (ROOT / "pipeline/report").rglob("*.py") if "study" not in p.parent.parts]
    sources = [*lesson, *(ROOT / "pipeline/report/templates").glob("*.j2")]
    read = {
        m.group(1)
        for path in sources
        for m in re.finditer(r"(?<![.\w])params\.([a-z_]+)", path.read_text())
        if m.group(1) != "yaml"  # "params.yaml", the file
    }
    assert read and read <= fields, f"the report reads {sorted(read - fields)}, which ReportParams lacks"
    listed = stage_of("report")["params"]
    assert sorted(
        k.replace(".", "_") if k.split(".")[0] in ("norm", "probe") else k for k in listed
    ) == sorted(fields)


def test_no_variant_stage_depends_on_the_lessons_model_or_training():
    params = stage_of("variant")["do"]["params"]
    assert params and not [p for p in params if str(p).split(".")[0] in ("model", "train", "data")]


def flat_params(listed):
    """A stage's params as one list of keys, in order: those of params.yaml, then each file's."""
    return [key for p in listed for key in (next(iter(p.values())) if isinstance(p, dict) else [p])]


@pytest.mark.parametrize("name,module,deps,pipeline", STAGES, ids=IDS)
def test_each_stages_params_are_the_keys_its_module_reads(name, module, deps, pipeline):
    listed = stage_of(name)
    listed = flat_params(listed.get("do", listed).get("params", []))
    reads = [key.strip('"') for key in stage_reads(module)]
    assert sorted(listed) == sorted(reads), f"stage {name}"


def test_a_stage_that_reads_parameters_without_a_params_line_is_refused():
    without = TEXT.replace("    params: [data]\n", "", 1)
    with pytest.raises(ValueError, match="stage data has no params: but its module reads parameters"):
        rewritten(without)


def reads_of(source, tmp_path, monkeypatch):
    """What stage_reads finds in a stage module of `source`."""
    import pipeline.tools.stage_deps as deps

    (tmp_path / "stage.py").write_text(source)
    monkeypatch.setattr(deps, "module_file", lambda name: tmp_path / "stage.py")
    return stage_reads("pipeline.stages.example")


def test_a_stage_reads_the_keys_it_writes_out_a_whole_section_where_it_names_one(tmp_path, monkeypatch):
    source = "params = load()\nf(params.train.seeds[0], params.train.lr, params.data)\ng(params.data.seed)\n"
    assert reads_of(source, tmp_path, monkeypatch) == ["train.seeds", "train.lr", "data"]


def test_a_foreach_stage_reads_its_own_entry_only(tmp_path, monkeypatch):
    source = "params = load()\nv = params.study.variants[name]\nf(v, params.study.model)\n"
    assert reads_of(source, tmp_path, monkeypatch) == ['"study.variants.${key}"', "study.model"]
    variant = [key.strip('"') for key in stage_reads("pipeline.stages.variant")]
    assert "study.variants.${key}" in variant and "study.variants" not in variant and "study" not in variant


def test_a_stage_that_hands_all_of_params_on_is_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="hands all of params on .line 2.: pass its sections or values"):
        reads_of("params = load()\nrun(params)\n", tmp_path, monkeypatch)


LIBRARY = [  # the parameters' loaders (the lesson's, the study's) build Params; nothing else takes it
    p
    for p in (ROOT / "pipeline").rglob("*.py")
    if p.parent.name not in ("stages", "params")
    and p.relative_to(ROOT).as_posix() != "pipeline/study/load.py"
]


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_library_function_takes_all_of_params(path):
    """Library functions take the sections or values they use, so that what a stage hands them is all
    they can read (the numerics tools and stage_deps read params.yaml as entry points of their own)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in [*node.args.args, *node.args.kwonlyargs]:
                annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                assert annotation != "Params", f"{path.name}: {node.name}({arg.arg}: Params)"
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert "Params" not in imported, f"{path.name} imports Params"
