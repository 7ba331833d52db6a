"""Markdown as a reader reads it in a terminal or a diff: long prose lines wrapped to a width, never
breaking what Markdown gives a meaning (a list item's marker, a heading, a table, a fence, code) nor
a number from its unit. Knows nothing of what the text says."""

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
    """The words of a paragraph; a lone "%" stays with its number, "±" with the number after it and "×"
    with both, so that "99.5 %", "[0.6 %-30.3 %]", "± 0.2" and "5,182 × 10⁻⁷" never split across lines."""
    return re.split(r"(?<![±×])\s+(?!%(?:[\s:;,.)\]-]|$)|×)", text.strip())


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


def heading_anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped (accented letters kept),
    spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
