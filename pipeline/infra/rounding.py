"""The rounding rule: how far two implementations of one function may lie apart for rounding alone.

A dot product of n terms summed in two orders differs by about n epsilon of its terms' size, so two
implementations of one network in one floating-point type give logits at most epsilon x the largest
|logit| x the longest dot product apart. The claim that our model is nn.Transformer's function and
the tests that check it share this rule, so neither bound is a number one machine measured.
"""

EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23}  # each type's machine epsilon


def rounding_bound(dtype, logit_max, dot_length):
    """The largest |logit difference| rounding explains in `dtype` ("float32" or "float64")."""
    return EPSILON[dtype] * logit_max * dot_length
