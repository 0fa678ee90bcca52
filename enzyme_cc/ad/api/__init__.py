"""Enzyme's marker calls and their lowering: markers, reverse vector mode, batch, checkpointed
loops, fixed points, sparse, truncation, global shadows, the logger."""
