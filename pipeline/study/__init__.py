"""The length-generalisation study: its data sets, variants, diagnosis and summary."""
