"""A from-scratch replication of the Transformer (Vaswani et al., 2017) as a DVC pipeline."""

from pipeline.infra import numerics

numerics.pin()  # before anything imports torch: the same bytes on any x86-64 CPU
