"""Derivative rules: one registry for instructions, intrinsics and library functions."""
from .registry import REVERSE, FORWARD, TANGENT, call_rule, is_inactive_call, CallRule  # noqa: F401
