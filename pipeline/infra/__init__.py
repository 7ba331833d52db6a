"""Infrastructure: params.yaml, errors, atomic files, checkpoints, resume, process pool, numerics."""
