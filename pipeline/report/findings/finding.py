"""What a finding is: a title, a few sentences, and the figures it sits beside."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    file: str  # under reports/figures/
    caption: str


@dataclass(frozen=True)
class Finding:
    title: str
    text: str  # Markdown; paragraphs separated by a blank line
    figures: tuple[Figure, ...]


def plural(count, word):
    return f"{count} {word}" + ("" if count == 1 else "s")
