"""Fit a C ODE simulation's parameters to data with torch.optim.Adam: the gradient of the loss
with respect to the parameters flows through the C code's enzyme-cc derivative.

    python examples/python/fit_oscillator_torch.py [iterations]
"""
import sys

import torch

import enzyme_cc.torch
from oscillator import S0, SIMULATE, SOURCE, STEPS, TRUE_P


def main(iters=300):
    simulate = enzyme_cc.torch.op(SIMULATE, sources=[SOURCE])      # built once, then cached
    s0 = torch.tensor(S0, dtype=torch.float64)
    data = simulate(torch.tensor(TRUE_P, dtype=torch.float64), s0, steps=STEPS)
    data = data + 0.01 * torch.randn(STEPS, dtype=torch.float64,
                                     generator=torch.Generator().manual_seed(0))
    p = torch.tensor([1.2, 0.4, 0.3], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.02)
    losses = []
    for it in range(iters):
        opt.zero_grad()
        loss = ((simulate(p, s0, steps=STEPS) - data) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if it % 50 == 0 or it == iters - 1:
            print(f"iter {it:4d}  loss {loss.item():.6f}  p {p.detach().numpy().round(4)}")
    print(f"true p {TRUE_P}")
    return losses


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
