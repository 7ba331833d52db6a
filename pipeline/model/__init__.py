"""The paper's Transformer (section 3) and the lesson's options: its positions, attention and norms."""
