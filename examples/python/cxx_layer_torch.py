"""A C++ function as a layer of a small PyTorch model: its weights are torch Parameters, the
batch axis is looped over in C, and the backward pass is the C++ code's enzyme-cc derivative.

    python examples/python/cxx_layer_torch.py [iterations]
"""
import os
import sys

import torch

import enzyme_cc.torch
from enzyme_cc.ffi import In, Int, Out, Signature

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer.cpp")
TANH_POOL = Signature("tanh_pool", [In("x", ("n",)), In("W", ("h", "n")), In("b", ("h",)),
                                    Int("n"), Int("h"), Out("y", ("h",))])


class TanhPool(torch.nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.op = enzyme_cc.torch.op(TANH_POOL, sources=[SOURCE], lang="c++")
        self.W = torch.nn.Parameter(torch.randn(h, n, dtype=torch.float64) / n ** 0.5)
        self.b = torch.nn.Parameter(torch.zeros(h, dtype=torch.float64))

    def forward(self, x):                   # x: (batch, n) -> (batch, h)
        return self.op(x, self.W, self.b)


def main(iters=200):
    torch.manual_seed(0)
    n, h = 8, 16
    model = torch.nn.Sequential(TanhPool(n, h), torch.nn.Linear(h, 1, dtype=torch.float64))
    x = torch.randn(256, n, dtype=torch.float64)
    target = torch.sin(x[:, :1] * 2) + x[:, 1:2] ** 2
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for it in range(iters):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if it % 50 == 0 or it == iters - 1:
            print(f"iter {it:4d}  loss {loss.item():.6f}")
    return losses


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
