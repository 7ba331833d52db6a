"""The report's pages: reports/README.md and APPENDIX.md and their Spanish editions README.es.md and
APPENDIX.es.md (and the length study's, reports/study/, from pipeline/report/study/templates/), each
page one template (templates/*.md.j2) rendered in each language: the template
orders the page, pipeline/report/context.py gives it the numbers, the language's catalogue
(words/<language>.yaml) every word, and each number is written the language's way as it is written
(pipeline/infra/locale.py); long prose lines wrapped for reading (pipeline/infra/markdown.py), table
cells made safe. Same inputs, same bytes."""

import re
import statistics
from pathlib import Path

import jinja2
import yaml

from pipeline.infra.errors import DataError
from pipeline.infra.locale import SUPERSCRIPT, Phrase, Writer, number, percent
from pipeline.infra.markdown import heading_anchor, wrap_markdown


@jinja2.pass_context
def cell(context, value):
    """A value as a Markdown table cell, in the page's language: a "|" would end the cell, so it
    becomes "/"."""
    return context["writer"].write(value).replace("|", "/")


# The lesson's TeX as plain text: the few commands its quoted words hold.
TEX = [
    (r"\\text\{([^}]*)\}", r"\1"),
    (r"\\times", "×"),
    (r"\\quad", " "),
    (r"\\,", " "),  # a thin space between groups of digits
    (r"\\varphi", "φ"),
    (r"_\{\\text\{([^}]*)\}\}", r"_\1"),
    (r"_\{([^}]*)\}", r"_\1"),
]
SUPERSCRIPTS = SUPERSCRIPT | str.maketrans("N", "ᴺ")  # the digits as the Spanish numbers write them


def tex_text(words):
    """The lesson's words with its TeX written as text: `$5.182 \\times 10^{-7}$` -> 5.182 × 10⁻⁷,
    `d_{\\text{model}}` -> d_model, `2^{N}` -> 2ᴺ; the dollars that open and close math dropped."""
    for pattern, replacement in TEX:
        words = re.sub(pattern, replacement, words)
    words = re.sub(
        r"\^\{([-0-9N]+)\}|\^([0-9N])", lambda m: (m.group(1) or m.group(2)).translate(SUPERSCRIPTS), words
    )
    return re.sub(r"\s+", " ", words.replace("$", "")).strip()


def quoted(words):
    """The lesson's words as a table cell, between «», its TeX written as text."""
    if not words:
        return ""
    return f"«{tex_text(words).replace('|', '/')}»"


def ours(claim):
    """A trained claim's seeds as the first table shows them, mean [min–max]; any other its result."""
    values = claim.per_seed
    if not values:
        return claim.reproduced
    spec, unit, scale = (".1f", " %", 100) if claim.percent else (".3f", "", 1)
    pattern = f"{{:{spec}}}{unit} [{{:{spec}}}–{{:{spec}}}]"
    return Phrase(pattern, *(scale * v for v in (statistics.fmean(values), min(values), max(values))))


# ------------------------------------------------------------------------------------- pages

TEMPLATES = Path(__file__).parent / "templates"
WORDS = Path(__file__).with_name("words")  # a catalogue per language: words/en.yaml, words/es.yaml
PAGES = {"README.md": "en", "README.es.md": "es", "APPENDIX.md": "en", "APPENDIX.es.md": "es"}  # language


def catalogue(lang):
    """A language's words: every key the templates say, and its words for what reaches a page in
    English (claims.yaml's texts, claims.py's results)."""
    return yaml.safe_load((WORDS / f"{lang}.yaml").read_text())


def missing(context, what):
    """Words a page says that its language's catalogue lacks: an error, never a blank or English."""
    return DataError(f"{WORDS.name}/{context['lang']}.yaml: no {what}, which {context.name} says")


@jinja2.pass_context
def say(context, key, **fields):
    """The page's words for `key` (a dotted path in its catalogue), their fields filled in: a number
    by the field's format in the page's way, a result in the page's words."""
    words = context["words"]
    for part in key.split("."):
        if not isinstance(words, dict) or part not in words:
            raise missing(context, f"words for {key}")
        words = words[part]
    return context["writer"].format(words, **fields)


@jinja2.pass_context
def series(context, key, items, field=None, last=None):
    """Each `n: value` of `items` said with `key` (its fields n and v, or the value's own fields; with
    `field`, v is that field of the value), those without a value left out, joined by commas and
    before the last by the words `last`."""
    values = {n: v.get(field) if field else v for n, v in items.items()}
    fields = {n: v if isinstance(v, dict) else {"v": v} for n, v in values.items() if v is not None}
    said = [say(context, key, n=n, **v) for n, v in fields.items()]
    if last and len(said) > 1:
        return ", ".join(said[:-1]) + say(context, last) + said[-1]
    return ", ".join(said)


@jinja2.pass_context
def verdict(context, claim):
    """A claim's status as the report shows it, in the page's language."""
    return context["words"]["verdict"]["undecided" if claim.undecided else claim.status]


@jinja2.pass_context
def recipe(context, name):
    """A study recipe by its name in the page's words (the catalogue's recipe_names), its code name
    where it has none."""
    return context["words"].get("recipe_names", {}).get(name, f"`{name}`")


@jinja2.pass_context
def strength(context, claim):
    """How much a claim's verdict shows, in the page's language: a strong or a weak test where data
    could falsify it (neither a note nor too wide to tell), else a dash."""
    judged = claim.test and claim.status != "note" and not claim.undecided
    return context["words"]["tests"][claim.test] if judged else "-"


@jinja2.pass_context
def stated(context, english, table, key):
    """English from claims.yaml or search.yaml (a claim's text, a note's reason, why a search row was
    tried) in the page's language: the catalogue's `table` text for `key` where the language has that
    table (then one missing is an error, not English in a Spanish page), else the English."""
    texts = context["words"].get(table, {key: english})
    if key not in texts:
        raise missing(context, f"{table} text for {key}")
    return texts[key]


def attention_named(words, attention):
    """An attention setting in words: one kind everywhere, or each site's (encoder/decoder/cross)."""
    kinds = [words["recipe"]["attention"][k] for k in attention.split("/")]
    return kinds[0] if len(kinds) == 1 else words["recipe"]["sites"].format(*kinds)


def setting_named(context, key, value):
    """One value a variant sets for itself, in words: "8,000 steps", "gates start at -8"."""
    recipe, lang = context["words"]["recipe"], context["lang"]
    if key not in recipe["settings"]:
        raise missing(context, f"recipe words for the setting {key}")
    lengths = ", ".join(number(v, "", lang) for v in value) if isinstance(value, list | tuple) else value
    pct = percent(value, 0, lang) if isinstance(value, float) else value
    value = recipe["values"].get(value, value) if isinstance(value, str) else value
    return context["writer"].format(recipe["settings"][key], v=value, lengths=lengths, pct=pct)


@jinja2.pass_context
def changes(context, entry):
    """What a study variant (a search row's dict, or params' Variant) changes from the study's recipe,
    in the page's words: its positions, its attention, then each value it sets for itself."""
    words = context["words"]
    get = entry.get if isinstance(entry, dict) else lambda key: getattr(entry, key, None)
    done = [
        setting_named(context, k, v)
        for section in ("model", "train", "data")
        for k, v in (get(section) or {}).items()
    ]
    named = [words["recipe"]["positions"][get("positions")], attention_named(words, get("attention"))]
    return "; ".join([*named, *done])


def environment(templates=TEMPLATES):
    """The Jinja environment of the templates in the folder `templates`: a missing value an error,
    every value printed in the page's language, and the filters and calls that give a page its words
    and numbers."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, not a blank in the report
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # Markdown, not HTML
        finalize=jinja2.pass_context(lambda c, value: c["writer"].write(value)),  # in the page's language
    )
    env.globals.update(say=say, series=series)
    env.filters.update(cell=cell, quoted=quoted, ours=ours, changes=changes, verdict=verdict, stated=stated)
    env.filters.update(strength=strength, recipe=recipe, capfirst=lambda text: text[:1].upper() + text[1:])
    env.filters.update(  # numbers, and a variant's positions and attention, in the page's way
        pct=jinja2.pass_context(lambda c, fraction, decimals=1: percent(fraction, decimals, c["lang"])),
        num=jinja2.pass_context(lambda c, value, spec="": number(value, spec, c["lang"])),
        anchor=heading_anchor,
        positions=jinja2.pass_context(lambda c, name: c["words"]["recipe"]["positions"][name]),
        attention=jinja2.pass_context(lambda c, name: attention_named(c["words"], name)),
    )
    return env


def render(context, templates=TEMPLATES, pages=PAGES):
    """{page name: Markdown} for every page of `pages` ({page: its language}), from the report's
    context: each page's template (in the folder `templates`) in its language, its words from that
    language's catalogue. The lesson's report and the length study's pages each render their own."""
    env, words = environment(templates), {lang: catalogue(lang) for lang in set(pages.values())}
    rendered = {}
    for page, lang in pages.items():
        writer = Writer(lang, words[lang].get("results"))
        template = env.get_template(page.split(".")[0] + ".md.j2")
        text = template.render(**context, words=words[lang], lang=lang, writer=writer)
        rendered[page] = wrap_markdown(text)
    return rendered
