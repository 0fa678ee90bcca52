"""Analyses of the primal: activity, type analysis, what memory a function writes, what an
untyped copy moves."""
