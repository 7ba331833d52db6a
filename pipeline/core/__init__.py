"""The task and its recipe: tokens, data, batching, schedule and loss, training, decoding, evaluation."""
