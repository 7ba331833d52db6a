"""The report: claims and their tolerance rules, figures, the report's sections."""
