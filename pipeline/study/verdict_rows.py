"""The names the length study's verdict gives its rows and decodings, and its table's columns:
torch-free, so that the report reads them as the verdict writes them."""

HANDSET = "signed_handset"  # the signed count set by hand: no training, one model, never judged
TRAINED = "greedy"  # a model decoded by its own layers
READOUT = "handset_readout"  # a trained signed model's count decoded by the hand-set readout
COLUMNS = ["variant", "kind", "decoder", "seed", "length", "seq_acc"]  # metrics/verdict/per_seed.csv
