"""Use a trained model: `python -m pipeline.tools.sort 3 1 4 1 5` prints its output and whether it sorted.

Digits may be given separately (3 1 4) or joined (314). `--checkpoint models/seed_1.pt` picks
another model, a study variant's too (`metrics/variants/<name>/seed_<s>.pt`); the default is the
first training seed's.
"""

import argparse

import torch

from pipeline.core.decoding import greedy
from pipeline.infra.entry import stage_entry
from pipeline.infra.errors import PipelineError
from pipeline.study.model import built_for, load_model
from pipeline.study.options import reads_any_length
from pipeline.tokens import DIGITS

ASCII_DIGITS = "0123456789"[:DIGITS]


def parse_digits(words, longest=None):
    """The digits to sort, at most `longest` of them (None: any number), or a one-line error naming
    what is wrong."""
    text = "".join(words).replace(",", "")
    if not text:
        raise PipelineError("give the digits to sort, e.g. `python -m pipeline.tools.sort 3 1 4 1 5`")
    bad = sorted({ch for ch in text if ch not in ASCII_DIGITS})  # not str.isdigit: '²' and '٣' are not ours
    if bad:
        raise PipelineError(f"only the digits 0-9 can be sorted; got {' '.join(repr(c) for c in bad)}")
    if longest is not None and len(text) > longest:
        raise PipelineError(
            f"{len(text)} digits is more than this model's {longest} (its max_len, less any BOS)"
        )
    return [int(ch) for ch in text]


@stage_entry
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("digits", nargs="*", help="digits to sort: 3 1 4 1 5 or 31415")
    parser.add_argument(
        "--checkpoint", default=None, help="a checkpoint (default: models/seed_<first seed>.pt)"
    )
    args = parser.parse_args(argv)
    path = args.checkpoint
    if path is None:
        from pipeline.params.lesson_load import load_lesson_params

        path = f"models/seed_{load_lesson_params().train.seeds[0]}.pt"
    model, record = load_model(path)
    longest = None if reads_any_length(model.config) else model.longest_source
    digits = parse_digits(args.digits, longest)
    model = built_for(model, len(digits))  # a model whose source carries no positions reads any length
    output = greedy(model, torch.tensor([digits]))[0].tolist()
    expected = sorted(digits)
    verdict = "sorted correctly" if output == expected else f"WRONG, expected {' '.join(map(str, expected))}"
    lengths = record.get("train_lengths", "?")
    print(f"input : {' '.join(map(str, digits))}")
    print(f"output: {' '.join(map(str, output))}  ({verdict}; {path}, trained on lengths {lengths})")


if __name__ == "__main__":
    main()
