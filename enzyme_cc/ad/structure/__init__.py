"""What the IR says before any analysis: types' memory layout, control flow and loops, source
locations, and the bit-level rewrites made before synthesis."""
