"""The paper's Transformer (section 3), with the length study's position and attention schemes."""
