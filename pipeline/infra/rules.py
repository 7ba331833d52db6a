"""Typed configuration read from YAML: rules that convert and check one raw value each, or raise a
ConfigError that names the key, the value and what is allowed, and the parser that fills a frozen
dataclass whose fields carry those rules (they declare types and rules, never default values).

`dvc exp run -S train.lr=1e-06` writes `1e-06`, which PyYAML reads as a string: the float rules
accept such strings as the numbers they are.
"""

import dataclasses
import difflib
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


def required(rule):
    """A dataclass field that must be given, checked by `rule` when read from YAML."""
    return field(metadata={"rule": rule})


def section():
    """A dataclass field that must be given: a nested section, parsed as its own dataclass type."""
    return field()


POSITIVE_FLOAT = float_in(0.0, math.inf, low_open=True)
POSITIVE_INT = int_at_least(1)
ANY_FLOAT = float_in(-math.inf, math.inf)


def unknown_key(key, known):
    close = difflib.get_close_matches(key.split(".")[-1], known, n=1)
    hint = f" (did you mean {'.'.join(key.split('.')[:-1] + close)}?)" if close else ""
    raise ConfigError(f"unknown parameter {key}{hint}; known: {', '.join(sorted(known))}")


def check_keys(raw, known, prefix):
    """`raw` must be a mapping whose keys are all in `known` (`prefix` names it; "" at the top)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{prefix or 'params.yaml'} must be a mapping of parameters, got {raw!r}")
    for key in raw:
        if key not in known:
            unknown_key(f"{prefix}.{key}" if prefix else str(key), list(known))


def parse_section(cls, raw, prefix, partial=False):
    """A dataclass `cls` from the mapping `raw`, each field by its rule (a field without one is a
    nested section). `partial`: the keys given only, as a dict (an override of some of them)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    check_keys(raw, fields, prefix)
    missing = [name for name in fields if name not in raw]
    if missing and not partial:
        raise ConfigError(f"{prefix or 'params.yaml'}: missing parameter(s) {', '.join(missing)}")
    values = {}
    for name, f in fields.items():
        if name not in raw:
            continue
        key = f"{prefix}.{name}" if prefix else name
        if "rule" in f.metadata:
            values[name] = f.metadata["rule"](key, raw[name])
        else:  # a nested section
            values[name] = parse_section(f.type, raw[name], key)
    return values if partial else cls(**values)


def as_dict(obj):
    """A dataclass as plain, JSON-ready values (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}
