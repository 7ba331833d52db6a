"""A from-scratch replication of the Transformer (Vaswani et al., 2017) as a DVC pipeline."""
