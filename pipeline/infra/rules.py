"""The rules of params.yaml's values: each converts one raw YAML value and checks it, or raises a
ConfigError that names the key, the value and what is allowed.

`dvc exp run -S train.lr=1e-06` writes `1e-06`, which PyYAML reads as a string: the float rules
accept such strings as the numbers they are.
"""

import math
from dataclasses import field

from pipeline.infra.errors import ConfigError


def _fail(key, value, allowed):
    raise ConfigError(f"{key} = {value!r} is invalid: expected {allowed}")


def _as_int(key, value, allowed):
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(key, value, allowed)
    return value


def _as_float(key, value, allowed):
    if isinstance(value, bool):
        _fail(key, value, allowed)
    if isinstance(value, str):  # `dvc exp run -S` writes 1e-06, which YAML reads as a string
        try:
            value = float(value)
        except ValueError:
            _fail(key, value, allowed)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(key, value, allowed)
    return float(value)


def int_at_least(low):
    allowed = f"an integer >= {low}"

    def rule(key, value):
        value = _as_int(key, value, allowed)
        if value < low:
            _fail(key, value, allowed)
        return value

    return rule


def float_in(low, high, low_open=False, high_open=True):
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    allowed = f"a number in {lo}{low}, {high}{hi}"

    def rule(key, value):
        value = _as_float(key, value, allowed)
        if (value <= low if low_open else value < low) or (value >= high if high_open else value > high):
            _fail(key, value, allowed)
        return value

    return rule


def one_of(*choices):
    allowed = "one of " + ", ".join(choices)

    def rule(key, value):
        if value not in choices:
            _fail(key, value, allowed)
        return value

    return rule


def per_kind(choices, kinds):
    """One of `choices` for every kind, or one per kind joined by '/' (`softmax/sigmoid/sigmoid`)."""
    allowed = f"one of {', '.join(choices)}, or {len(kinds)} of them joined by / ({' / '.join(kinds)})"

    def rule(key, value):
        names = value.split("/") if isinstance(value, str) else None
        if not names or len(names) not in (1, len(kinds)) or any(n not in choices for n in names):
            _fail(key, value, allowed)
        return value if len(set(names)) > 1 else names[0]

    return rule


def list_of(item_rule, what, unique=False, length=None):
    allowed = f"a non-empty list of {what}" if length is None else f"a list of {length} {what}"

    def rule(key, value):
        if not isinstance(value, list) or not value or (length and len(value) != length):
            _fail(key, value, allowed)
        items = tuple(item_rule(f"{key}[{i}]", item) for i, item in enumerate(value))
        if unique and len(set(items)) != len(items):
            _fail(key, value, f"{allowed} without repeats")
        return items

    return rule


def spec(default, rule):
    """A field with its default and its rule (defaults exist for tests; params.yaml sets all)."""
    factory = (lambda: default) if isinstance(default, tuple) else None
    if factory:
        return field(default_factory=factory, metadata={"rule": rule})
    return field(default=default, metadata={"rule": rule})


POSITIVE_FLOAT = float_in(0.0, math.inf, low_open=True)
POSITIVE_INT = int_at_least(1)
