"""Typed configuration read from YAML, validated by pydantic: each section is a frozen pydantic
dataclass whose fields are the types below (strict integers, finite numbers in a range, choices,
lists). Every type says what it allows in words, and a failure is reported in those words: pydantic's
first failure becomes one ConfigError line naming the key, the value and what is allowed (for an
unknown key, the nearest known one).

`dvc exp run -S train.lr=1e-06` writes `1e-06`, which PyYAML reads as a string: a number field
takes such a string as the number it is, as pydantic does.
"""

import dataclasses
import difflib
import functools
import math
from pathlib import Path
from typing import Annotated, Literal

import annotated_types as constraint
import pydantic
import yaml
from pydantic_core import ArgsKwargs, PydanticCustomError

from pipeline.infra.errors import ConfigError

OWN = ("invalid", "unknown_key", "missing_keys", "not_mapping")  # the failures worded here


@dataclasses.dataclass(frozen=True)
class Words:
    """How a list of a type's values says what they must be ("integers >= 1")."""

    plural: str


def plural(kind):
    return next(m.plural for m in kind.__metadata__ if isinstance(m, Words))


def allowing(kind, words, plural=None):
    """`kind`, whose failures say `words` ("an integer >= 1"); `plural` is how a list of them says it.
    A failure inside it (a list's item) keeps its own words and place."""

    def in_words(value, handler):
        try:
            return handler(value)
        except pydantic.ValidationError as err:
            if any(e["type"] in OWN for e in err.errors()):
                raise
            raise PydanticCustomError("invalid", "expected {allowed}", {"allowed": words}) from None

    return Annotated[kind, pydantic.WrapValidator(in_words), Words(plural or words)]


def _not_bool(value):
    if isinstance(value, bool):  # YAML's true is no number, although Python's True is 1
        raise ValueError(value)
    return value


def int_at_least(low):
    return allowing(
        Annotated[int, pydantic.Strict(), constraint.Ge(low)], f"an integer >= {low}", f"integers >= {low}"
    )


def float_in(low, high, low_open=False, high_open=True):
    lower = constraint.Gt(low) if low_open else constraint.Ge(low)
    upper = constraint.Lt(high) if high_open else constraint.Le(high)
    number = Annotated[float, pydantic.BeforeValidator(_not_bool), pydantic.AllowInfNan(False), lower, upper]
    span = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    return allowing(number, f"a number in {span}", f"numbers in {span}")


def one_of(*choices):
    return allowing(Literal[choices], "one of " + ", ".join(choices))


def per_kind(choices, kinds):
    """One of `choices` for every kind, or one per kind joined by '/' (`softmax/sigmoid/sigmoid`)."""

    def one_name_where_one_does(value):
        names = value.split("/")
        if len(names) not in (1, len(kinds)) or any(name not in choices for name in names):
            raise ValueError(value)
        return value if len(set(names)) > 1 else names[0]

    words = f"one of {', '.join(choices)}, or {len(kinds)} of them joined by / ({' / '.join(kinds)})"
    return allowing(Annotated[str, pydantic.AfterValidator(one_name_where_one_does)], words)


def _no_repeats(items):
    if len(set(items)) != len(items):
        raise ValueError("repeats")
    return items


def list_of(item, unique=False, length=None):
    """A list (a tuple once read) of `length` items, or of any number but none."""
    if length:
        return allowing(tuple[(item,) * length], f"a list of {length} {plural(item)}")
    kind = Annotated[tuple[item, ...], constraint.MinLen(1)]
    if unique:
        kind = Annotated[kind, pydantic.AfterValidator(_no_repeats)]
    return allowing(kind, f"a non-empty list of {plural(item)}" + (" without repeats" if unique else ""))


def mapping_of(value, words):
    """A mapping of names to `value`s, one at least."""
    return allowing(Annotated[dict[str, value], constraint.MinLen(1)], words)


def section(cls):
    """A section: a frozen pydantic dataclass, a mapping of its fields (required unless defaulted)
    and no other key."""

    def keys_known(raw):
        if isinstance(raw, ArgsKwargs):  # built in code, not read
            return raw
        if not isinstance(raw, dict):
            raise PydanticCustomError("not_mapping", "not a mapping")
        fields = dataclasses.fields(built)
        names = [f.name for f in fields]
        unknown = [str(k) for k in raw if k not in names]
        if unknown:
            raise PydanticCustomError("unknown_key", "unknown key", {"key": unknown[0], "known": names})
        missing = [f.name for f in fields if f.name not in raw and f.default is dataclasses.MISSING]
        if missing:
            raise PydanticCustomError("missing_keys", "missing keys", {"missing": missing})
        return raw

    cls.keys_known = pydantic.model_validator(mode="before")(keys_known)
    built = pydantic.dataclasses.dataclass(
        frozen=True, kw_only=True, config=pydantic.ConfigDict(defer_build=True)
    )(cls)
    return built


def overrides(cls):
    """Some of section `cls`'s keys, each of its own type, as a dict of those given (none where absent)."""
    fields = [(f.name, f.type | None, None) for f in dataclasses.fields(cls)]
    some = section(dataclasses.make_dataclass(f"{cls.__name__}Overrides", fields, frozen=True))
    given = pydantic.AfterValidator(
        lambda o: {} if o is None else {k: v for k, v in vars(o).items() if v is not None}
    )
    return Annotated[some | None, given]


# ------------------------------------------------------------------------ errors in words


def key_name(prefix, loc):
    """("train", "betas", 1) -> train.betas[1]"""
    words = [prefix] if prefix else []
    for part in loc:
        words[-1:] = [f"{words[-1]}[{part}]"] if isinstance(part, int) else [*words[-1:], str(part)]
    return ".".join(words)


FIRST = {"unknown_key": 0, "not_mapping": 0, "missing_keys": 1}  # a typo before its echo, then values


def config_error(err: pydantic.ValidationError, prefix=""):
    """pydantic's failure as one line: an unknown key first, then a missing one, then a bad value."""
    first = sorted(err.errors(), key=lambda e: FIRST.get(e["type"], 2))[0]
    kind, where, value, ctx = first["type"], key_name(prefix, first["loc"]), first["input"], first.get("ctx")
    if kind == "unknown_key":
        key = f"{where}.{ctx['key']}" if where else ctx["key"]
        close = difflib.get_close_matches(ctx["key"], ctx["known"], n=1)
        hint = f" (did you mean {'.'.join(key.split('.')[:-1] + close)}?)" if close else ""
        return ConfigError(f"unknown parameter {key}{hint}; known: {', '.join(sorted(ctx['known']))}")
    if kind == "missing_keys":
        what = "parameter" if where else "section"
        return ConfigError(f"{where or 'params.yaml'}: missing {what}(s) {', '.join(ctx['missing'])}")
    if kind == "not_mapping":
        what = "be a mapping of parameters" if where else "hold a mapping of sections"
        return ConfigError(f"{where or 'params.yaml'} must {what}, got {value!r}")
    return ConfigError(f"{where} = {value!r} is invalid: {first['msg']}")


@functools.cache
def _adapter(cls):
    return pydantic.TypeAdapter(cls)


def parse(cls, raw, prefix=""):
    """Section `cls` from the mapping `raw` (`prefix` names it in errors), or raise ConfigError."""
    try:
        return _adapter(cls).validate_python(raw)
    except pydantic.ValidationError as err:
        raise config_error(err, prefix) from None


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


def load_sections(cls, path="params.yaml"):
    """The sections of params.yaml that `cls` (a section whose fields are sections) names, read and
    checked; the file's other sections left unread, so a stage that reads one depends on no other's
    rules (the numerics stage, which runs before any training, checks the whole file)."""
    raw = read_params_file(path)
    names = {f.name for f in dataclasses.fields(cls)}
    return parse(cls, {k: v for k, v in raw.items() if k in names} if isinstance(raw, dict) else raw)


def as_dict(obj):
    """A section as plain, JSON-ready values (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}


POSITIVE_FLOAT = float_in(0.0, math.inf, low_open=True)
POSITIVE_INT = int_at_least(1)
NATURAL = int_at_least(0)
ANY_FLOAT = float_in(-math.inf, math.inf)
