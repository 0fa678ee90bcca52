"""OpenMP in derivatives: shared memory classes, per-thread tapes, exclusive ranges, captured
values."""
