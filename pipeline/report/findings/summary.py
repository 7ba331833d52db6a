"""Every key finding, in the report's order: lesson 10, lesson 6 and the probes, the length study,
speed."""

from pipeline.report.findings import gap, lesson10, probes, speed, study


def all_findings(params, m, claims):
    """`m`: each stage's metrics by name, with "example" (metrics/evaluate/example.json),
    "study_meta" (metrics/study/meta.json) and "diagnosis" (metrics/study/diagnosis.json); `claims`:
    the claims table, whose trained rows carry their seeds."""
    evaluate = {**m["evaluate"], "test_size": params.data.test_size}
    findings = [
        lesson10.training(params, m["train"]),
        lesson10.accuracy_by_length(params, m["evaluate"]),
        gap.greedy_gap(claims, evaluate),
        lesson10.cross_attention(m["example"]),
        probes.residual(m["probe"]),
        probes.layernorm(m["probe"]),
        probes.gradient_depth(params.model.layers, m["probe"]),
        probes.jacobian_sweep(m["probe"]),
        study.length_study(params, m["study"], m["study_meta"]),
        study.why_it_fails(m["diagnosis"]),
        speed.speed(m["benchmark"]),
    ]
    return [f for f in findings if f is not None]
