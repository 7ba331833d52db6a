"""Tables as CSV text, through pandas: one way to write every table the pipeline saves."""

import pandas as pd


def csv_text(rows, columns=None, float_format=None):
    """Rows (dicts, or sequences with `columns`) as CSV text: a header, "\\n" line ends, no index,
    floats in `float_format` (e.g. "%.6f"; default: shortest exact repr), blanks for missing cells."""
    frame = pd.DataFrame(rows, columns=columns)
    return frame.to_csv(index=False, lineterminator="\n", float_format=float_format, na_rep="")
