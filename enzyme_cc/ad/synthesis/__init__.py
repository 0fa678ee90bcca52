"""The derivative functions themselves: preparation, the forward and reverse sweeps, calls of
differentiated callees, and the module-level driver."""
