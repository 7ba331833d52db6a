"""Lesson 6's probes: its NumPy cells, parameter accounting, gradients and Jacobians through depth."""
