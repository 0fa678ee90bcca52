"""The tape's IR and the small runtime the generated code calls."""
