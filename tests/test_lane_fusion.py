"""The lane taint of ad/api/lane_fusion.py on small reverse functions: which values belong to a lane,
and what makes the lanes run one after another instead."""
import pytest

from enzyme_cc.ad.api.lane_fusion import lane_values
from enzyme_cc.ir.model import parse_function


def _fn(body: str):
    lines = ["define internal void @rev(ptr %p, ptr %ad.s.p, double %c, ptr %ad.tape) {"] + \
        body.strip().splitlines() + ["}"]
    return parse_function(lines, {})


def test_adjoint_local_and_loads_belong_to_the_lane():
    fn = _fn("""
entry:
%d = alloca double
store double -0.0, ptr %d
%s = load double, ptr %ad.s.p
%m = fmul double %s, %c
store double %m, ptr %d
%q = getelementptr inbounds double, ptr %d, i64 0
%v = load double, ptr %q
%w = call double @llvm.fabs.f64(double %v)
%old = atomicrmw fadd ptr %ad.s.p, double %w monotonic
%pv = load double, ptr %p
%t = fmul double %pv, %c
ret void""")
    lane, why = lane_values(fn, {"%ad.s.p"})
    assert why is None
    assert {"%d", "%s", "%m", "%q", "%v", "%w", "%old"} <= lane
    assert not {"%pv", "%t", "%c", "%p"} & lane     # primal values stay shared


@pytest.mark.parametrize("body,why", [
    ("""
entry:
%s = load double, ptr %ad.s.p
store double %s, ptr %p
ret void""", "stored into shared memory"),
    ("""
entry:
%s = load double, ptr %ad.s.p
%z = fcmp oeq double %s, 0.0
br i1 %z, label %a, label %b
a:
ret void
b:
ret void""", "control flow"),
    ("""
entry:
%s = load double, ptr %ad.s.p
call void @log_value(double %s)
ret void""", "log_value"),
], ids=["shared_memory", "branch", "unknown_call"])
def test_lanes_kept_apart(body, why):
    """A lane's value stored into shared memory, deciding a branch, or passed to an unknown
    call: the function cannot run its lanes side by side, and the reason says which."""
    _, reason = lane_values(_fn(body), {"%ad.s.p"})
    assert reason and why in reason
