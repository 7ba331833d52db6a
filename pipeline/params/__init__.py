"""The lesson's params.yaml in one room: the rules its values are checked by, its sections, the
model's options (the paper's and the lesson's), and the lesson's own values."""
