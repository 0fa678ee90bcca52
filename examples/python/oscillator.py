"""The oscillator's declared signature, shared by the PyTorch and JAX examples."""
import os

from enzyme_cc.ffi import In, Int, Out, Signature

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oscillator.c")
# simulate(p[3], s0[2], steps, traj[steps]): p = {omega, zeta, a} and the initial state are
# differentiable; steps is an integer the caller gives
SIMULATE = Signature("simulate", [In("p", (3,)), In("s0", (2,)), Int("steps"),
                                  Out("traj", ("steps",))])
TRUE_P, S0, STEPS = [1.7, 0.15, 0.8], [1.0, 0.0], 200
