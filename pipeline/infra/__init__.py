"""Helpers that know nothing of the task: errors, atomic files, a stage's outputs, its entry, and the
workers it runs jobs on."""
