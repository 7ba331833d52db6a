"""The report's key findings: what each figure shows, in a few sentences with this run's numbers.

Each finding is written from the saved metrics only. A conclusion is drawn only where the numbers
show it, and a number a run did not measure (a shallower probe, a shorter sweep) leaves its sentence
out rather than failing the report. summary.py puts them in the report's order.
"""
