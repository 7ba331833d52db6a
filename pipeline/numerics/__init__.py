"""Byte reproducibility in one wing: the CPU code paths pinned before torch loads (pin), the
fingerprint of what each operation computes on this machine (fingerprint), the record the numerics
stage keeps (record), and the tools that compare machines (compare) and say what the pin costs
(pin_cost, step_profile)."""
