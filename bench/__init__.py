"""enzyme-cc's benchmark suite (the paper's section 4): `python -m bench [--quick]`."""
