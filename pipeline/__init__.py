"""A from-scratch replication of the Transformer (Vaswani et al., 2017) as a DVC pipeline."""

from pipeline.numerics.pin import pin

pin()  # before anything imports torch: the same bytes on any x86-64 CPU
