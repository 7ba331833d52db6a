"""One thin entry point per DVC stage: `python -m pipeline.stages.<stage>` reads, calls, writes."""
