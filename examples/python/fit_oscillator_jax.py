"""Fit a C ODE simulation's parameters to data with JAX: a jitted gradient step (plain gradient
descent with momentum) whose derivative is the C code's enzyme-cc VJP, called through XLA's FFI.

    python examples/python/fit_oscillator_jax.py [iterations]
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

import enzyme_cc.jax
from oscillator import S0, SIMULATE, SOURCE, STEPS, TRUE_P

jax.config.update("jax_enable_x64", True)


def main(iters=300):
    simulate = enzyme_cc.jax.op(SIMULATE, sources=[SOURCE])
    s0 = jnp.array(S0)
    data = simulate(jnp.array(TRUE_P), s0, steps=STEPS) + \
        0.01 * np.random.default_rng(0).standard_normal(STEPS)

    def loss(p):
        return jnp.mean((simulate(p, s0, steps=STEPS) - data) ** 2)

    @jax.jit
    def step(p, v):
        value, g = jax.value_and_grad(loss)(p)
        v = 0.9 * v - 0.01 * g
        return p + v, v, value

    p, v, losses = jnp.array([1.2, 0.4, 0.3]), jnp.zeros(3), []
    for it in range(iters):
        p, v, value = step(p, v)
        losses.append(float(value))
        if it % 50 == 0 or it == iters - 1:
            print(f"iter {it:4d}  loss {float(value):.6f}  p {np.round(np.asarray(p), 4)}")
    print(f"true p {TRUE_P}")
    return losses


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
