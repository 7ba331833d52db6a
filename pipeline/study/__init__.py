"""The length-generalisation study, the lesson's wing: its parameters and options, the model that
composes them into the paper's, its data sets, variants, diagnosis, verdict and summary."""
