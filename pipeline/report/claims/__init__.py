"""The claims table: every number lessons 6 and 10 state (and the paper's, where we check one)
against what the pipeline reproduced. rules.py holds the tolerance rules; each other module holds
the claims of one part of the work; table.py puts them in order."""
