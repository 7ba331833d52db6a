"""Helpers that know nothing of the task: errors, atomic files, typed configuration rules, the
process pool, the device, the pinned CPU numerics, metrics files, run records, statistics."""
