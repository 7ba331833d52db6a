"""Typed configuration read from YAML, validated by pydantic: each section is a frozen pydantic
dataclass whose fields are the types below (strict integers, finite numbers in a range, choices,
lists), and pydantic's first failure becomes one ConfigError line naming the key, the value and what
is allowed, the allowed part worded from the field's own type (for an unknown key, the nearest known
one).

`dvc exp run -S train.lr=1e-06` writes `1e-06`, which PyYAML reads as a string: a number field
takes such a string as the number it is, as pydantic does.
"""

import dataclasses
import difflib
import functools
import math
import typing
from typing import Annotated, Literal

import annotated_types as constraint
import pydantic
from pydantic_core import PydanticCustomError

from pipeline.infra.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class Allowed:
    """What a type allows, in words, where its constraints cannot say it (`per_kind`)."""

    text: str


def _not_bool(value):
    if isinstance(value, bool):  # YAML's true is no number, although Python's True is 1
        raise ValueError(value)
    return value


def int_at_least(low):
    return Annotated[int, pydantic.Strict(), constraint.Ge(low)]


def float_in(low, high, low_open=False, high_open=True):
    lower, upper = (
        (constraint.Gt(low) if low_open else constraint.Ge(low)),
        (constraint.Lt(high) if high_open else constraint.Le(high)),
    )
    return Annotated[float, pydantic.BeforeValidator(_not_bool), pydantic.AllowInfNan(False), lower, upper]


def one_of(*choices):
    return Literal[choices]


def per_kind(choices, kinds):
    """One of `choices` for every kind, or one per kind joined by '/' (`softmax/sigmoid/sigmoid`)."""

    def one_name_where_one_does(value):
        names = value.split("/")
        if len(names) not in (1, len(kinds)) or any(name not in choices for name in names):
            raise ValueError(value)
        return value if len(set(names)) > 1 else names[0]

    allowed = f"one of {', '.join(choices)}, or {len(kinds)} of them joined by / ({' / '.join(kinds)})"
    return Annotated[str, pydantic.AfterValidator(one_name_where_one_does), Allowed(allowed)]


def _no_repeats(items):
    if len(set(items)) != len(items):
        raise PydanticCustomError("repeats", "repeats")
    return items


def list_of(item, unique=False, length=None):
    """A list (a tuple once read) of `length` items, or of any number but none."""
    if length:
        return tuple[(item,) * length]
    kind = Annotated[tuple[item, ...], constraint.MinLen(1)]
    return Annotated[kind, pydantic.AfterValidator(_no_repeats)] if unique else kind


def section(cls):
    """A section: a frozen pydantic dataclass, no key beside its fields (required unless defaulted)."""
    return pydantic.dataclasses.dataclass(
        frozen=True, config=pydantic.ConfigDict(extra="forbid", defer_build=True)
    )(cls)


def overrides(cls):
    """Some of section `cls`'s keys, each of its own type, as a dict of those given (none where absent)."""
    fields = [(f.name, f.type | None, None) for f in dataclasses.fields(cls)]
    some = section(dataclasses.make_dataclass(f"{cls.__name__}Overrides", fields, frozen=True))
    given = pydantic.AfterValidator(
        lambda o: {} if o is None else {k: v for k, v in vars(o).items() if v is not None}
    )
    return Annotated[some | None, given]


# ------------------------------------------------------------------------ errors in words


def _parts(kind):
    """(the type, its metadata) of a possibly Annotated or optional type."""
    if typing.get_origin(kind) is Annotated:
        base, *meta = typing.get_args(kind)
        inner, more = _parts(base)
        return inner, [*more, *meta]
    args = typing.get_args(kind)
    if type(None) in args:
        return _parts(next(a for a in args if a is not type(None)))
    return kind, []


def type_at(kind, loc):
    """The type found at pydantic's error location `loc` inside `kind`."""
    for part in loc:
        base, _ = _parts(kind)
        if dataclasses.is_dataclass(base):
            kind = {f.name: f.type for f in dataclasses.fields(base)}[part]
        else:  # a tuple's item or a mapping's value
            args = typing.get_args(base)
            kind = args[-1] if typing.get_origin(base) is dict else args[0 if args[-1] is ... else part]
    return kind


def describe(kind, plural=False):
    """What `kind` allows, in words: "an integer >= 1", "numbers in (0.0, 1.0)", "one of post, pre"."""
    base, meta = _parts(kind)
    bounds = (constraint.Gt, constraint.Ge, constraint.Lt, constraint.Le)
    bound = {type(m).__name__: getattr(m, type(m).__name__.lower()) for m in meta if isinstance(m, bounds)}
    words = next((m.text for m in meta if isinstance(m, Allowed)), None)
    if words is None and base is int:
        words = f"{'integers' if plural else 'an integer'} >= {bound['Ge']}"
    elif words is None and base is float:
        low, high = bound.get("Gt", bound.get("Ge", -math.inf)), bound.get("Lt", bound.get("Le", math.inf))
        low = f"{'(' if 'Gt' in bound else '['}{low}, {high}{']' if 'Le' in bound else ')'}"
        words = f"{'numbers' if plural else 'a number'} in {low}"
    elif words is None and typing.get_origin(base) is Literal:
        words = "one of " + ", ".join(typing.get_args(base))
    elif words is None and typing.get_origin(base) is tuple:
        items = typing.get_args(base)
        many = "a non-empty list of" if items[-1] is ... else f"a list of {len(items)}"
        words = f"{many} {describe(items[0], plural=True)}"
    return words or "a mapping of parameters"


def unknown_key(key, known):
    close = difflib.get_close_matches(key.split(".")[-1], known, n=1)
    hint = f" (did you mean {'.'.join(key.split('.')[:-1] + close)}?)" if close else ""
    return ConfigError(f"unknown parameter {key}{hint}; known: {', '.join(sorted(known))}")


def key_name(prefix, loc):
    """("train", "betas", 1) -> train.betas[1]"""
    words = [prefix] if prefix else []
    for part in loc:
        words[-1:] = [f"{words[-1]}[{part}]"] if isinstance(part, int) else [*words[-1:], str(part)]
    return ".".join(words)


FIRST = {"unexpected_keyword_argument": 0, "dataclass_type": 0, "missing": 1}  # a typo before its echo


def config_error(cls, err: pydantic.ValidationError, prefix=""):
    """pydantic's failure as one line: an unknown key first, then a missing one, then a bad value."""
    first = sorted(err.errors(), key=lambda e: FIRST.get(e["type"], 2))[0]
    kind, loc, value = first["type"], first["loc"], first["input"]
    if kind == "missing" and isinstance(loc[-1], int):  # a list one item short
        kind, loc = "too_short", loc[:-1]
    where = key_name(prefix, loc[:-1] if kind in ("unexpected_keyword_argument", "missing") else loc)
    if kind == "unexpected_keyword_argument":
        known = [f.name for f in dataclasses.fields(_parts(type_at(cls, loc[:-1]))[0])]
        return unknown_key(f"{where}.{loc[-1]}" if where else str(loc[-1]), known)
    if kind == "missing":
        missing = [e["loc"][-1] for e in err.errors() if e["type"] == "missing" and e["loc"][:-1] == loc[:-1]]
        return ConfigError(
            f"{where or 'params.yaml'}: missing {'parameter' if where else 'section'}(s) "
            + ", ".join(missing)
        )
    if kind == "dataclass_type":
        what = "be a mapping of parameters" if where else "hold a mapping of sections"
        return ConfigError(f"{where or 'params.yaml'} must {what}, got {value!r}")
    allowed = describe(type_at(cls, loc)) + (" without repeats" if kind == "repeats" else "")
    return ConfigError(f"{where} = {value!r} is invalid: expected {allowed}")


@functools.cache
def _adapter(cls):
    return pydantic.TypeAdapter(cls)


def parse(cls, raw, prefix=""):
    """Section `cls` from the mapping `raw` (`prefix` names it in errors), or raise ConfigError."""
    try:
        return _adapter(cls).validate_python(raw)
    except pydantic.ValidationError as err:
        raise config_error(cls, err, prefix) from None


def as_dict(obj):
    """A section as plain, JSON-ready values (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}


POSITIVE_FLOAT = float_in(0.0, math.inf, low_open=True)
POSITIVE_INT = int_at_least(1)
NATURAL = int_at_least(0)
ANY_FLOAT = float_in(-math.inf, math.inf)
