"""Markdown helpers for the report: long prose lines wrapped for reading, table cells made safe."""

import re

WIDTH = 100
# Lines kept as they are: tables, headings, images, HTML, indented code.
KEEP = ("|", "#", "![", "<", "    ")
LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)]) ")


def starts_markup(word):
    """Whether a word at the start of a line would turn that line into a list item, a heading, a
    quote, a table row, a rule or a fence: such a word stays on the line before."""
    return bool(re.fullmatch(r"[-*+=_]+|\d+[.)]", word)) or word.startswith(("#", ">", "|", "```"))


def words_of(text):
    """The words of a paragraph; a lone "%" stays with its number and "±" with the number after it,
    so that "99.5 %", "[0.6 %-30.3 %]" and "± 0.2" never split across lines."""
    return re.split(r"(?<!±)\s+(?!%(?:[\s:;,.)\]-]|$))", text.strip())


def wrap_line(text, width, first="", rest=""):
    """Greedy wrap of one paragraph: the first line starts with `first`, the others with `rest`."""
    lines, words, indent = [], [], first
    for word in words_of(text):
        if words and len(indent + " ".join([*words, word])) > width:
            if not starts_markup(word):
                lines.append(indent + " ".join(words))
                words, indent = [], rest
            elif len(words) > 1:  # a word that would start markup takes the word before it along
                carry = words.pop()
                lines.append(indent + " ".join(words))
                words, indent = [carry], rest
        words.append(word)
    return [*lines, indent + " ".join(words)]


def wrap_markdown(text, width=WIDTH):
    """Wrap every paragraph and list item longer than `width`; code blocks and tables stay as they are."""
    out, fenced = [], False
    for line in text.split("\n"):
        fence = line.startswith("```")
        fenced = fenced != fence  # a fence line opens or closes a block
        if fence or fenced or len(line) <= width or line.startswith(KEEP):
            out.append(line)
            continue
        item = LIST_ITEM.match(line)
        prefix = item.group(0) if item else ""
        out += wrap_line(line[len(prefix) :], width, first=prefix, rest=" " * len(prefix))
    return "\n".join(out)


def cell(value):
    """A value as a Markdown table cell: a "|" would end the cell, so it becomes "/"."""
    return str(value).replace("|", "/")


def quoted(words):
    """The lesson's words as a table cell: as they are, or as code where they hold the lesson's TeX
    ($, backslashes), which Markdown would otherwise typeset or eat."""
    if not words:
        return ""
    return f"`{words}`" if any(ch in words for ch in "$\\") else f"«{cell(words)}»"
