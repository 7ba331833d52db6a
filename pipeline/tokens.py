"""The vocabulary of the sorting task (lesson 10): ten digits and BOS, eleven tokens in all."""

DIGITS = 10  # tokens 0-9 are the digits themselves
BOS = 10  # the decoder's start token, never an output
VOCAB = 11
IGNORE = -100  # target value at padded positions: the loss skips it
