"""params.yaml in one room: the rules its values are checked by, its sections (the lesson's and the
length study's), the registry of the model's options, and the lesson's own values."""
