"""The names the length study's verdict gives its rows and decodings, and its table's columns:
torch-free, so that the report reads them as the verdict writes them."""

HANDSET = "signed_handset"  # the signed count set by hand: no training, one model, never judged
TRAINED = "greedy"  # a model decoded by its own layers
READOUT = "handset_readout"  # a trained signed model's count decoded by the hand-set readout
COLUMNS = ["variant", "kind", "decoder", "seed", "length", "seq_acc"]  # metrics/verdict/per_seed.csv
CONTROL_COLUMNS = ["recipe", "weights", "seed", "kind", "length", "decoder", "seq_acc"]  # controls.csv
CERTIFICATE_COLUMNS = [  # metrics/verdict/certificates.csv: one row a model whose step has a finite state
    "variant", "weights", "seed", "certified", "states", "wrong_states", "smallest_margin",
    "largest_distance", "long_states",
]  # fmt: skip
