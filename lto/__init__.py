"""The link-time pipeline: merge bitcode, optimize, differentiate, optimize, emit, relink."""
