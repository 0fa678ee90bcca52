"""The benchmark suite's gradient variants agree on the smallest inputs (bench/, issue #6).

Each benchmark is built with enzyme-cc (the default pipeline and the Ref pipeline, AD before
optimization) and its binary's --selfcheck compares every AD variant it has (enzyme-cc, ADOL-C)
with finite differences and with each other; the gradient call must also leave the primal's
inputs unchanged (the Ref pipeline for REF_DEFAULT in the default suite, for every benchmark in
the slow tier). Every benchmark links in both pipelines today, so a refusal is a failure
naming the message (a Ref link refused by a new check hid as an expected failure once); a wrong
gradient or a crash is a failure too. No wall time is asserted.
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import builder, harness, suite  # noqa: E402
from bench.runner import run_selfcheck  # noqa: E402
from conftest import will_run  # noqa: E402

BENCHES = {b.name: b for b in suite.benchmarks()}
# the benchmarks whose Ref pipeline runs in the default suite (a C++ and a C one); the others'
# Ref links and checks are in the slow tier (the Ref pipeline's own tests: test_ad_programs)
REF_DEFAULT = ("gmm", "bruss")


@pytest.fixture(scope="module")
def builds(request):
    refs = {item.callspec.params["name"] for item in request.session.items
            if item.module is request.module and will_run(item) and
            item.originalname == "test_ref_pipeline_gradients_agree"}
    return builder.build_all(list(BENCHES.values()), jobs=2, log=lambda m: None, ref=refs)


def _usable(b):
    if b.skipped:
        pytest.skip(b.skipped)
    assert not b.compile_error, f"the benchmark does not compile: {b.compile_error}"


@pytest.mark.parametrize("name", list(BENCHES))
def test_default_pipeline_gradients_agree(builds, name):
    b = builds[name]
    _usable(b)
    case = BENCHES[name].cases["test"][0]
    binary = b.base_binary()
    assert binary, f"nothing runnable was built: {b.noad.error if b.noad else ''}"
    r = run_selfcheck(binary, case.args, case.check)
    assert r["status"] == "ok", f"{name} ({os.path.basename(binary)}): {r['message']}\n" + \
        "\n".join(r["lines"])
    assert b.enzyme.ok, harness._link_msg(b.enzyme)


@pytest.mark.parametrize("name", [n if n in REF_DEFAULT else
                                  pytest.param(n, marks=pytest.mark.slow) for n in BENCHES])
def test_ref_pipeline_gradients_agree(builds, name):
    b = builds[name]
    _usable(b)
    assert b.ref.ok, "Ref link (ENZYME_CC_PREOPT=0): " + harness._link_msg(b.ref)
    case = BENCHES[name].cases["test"][0]
    r = run_selfcheck(b.ref.binary, case.args, case.check)
    assert r["status"] == "ok", f"{name} (Ref): {r['message']}\n" + "\n".join(r["lines"])


def test_tables_show_every_failure_kind():
    """The harness reports failures in its table instead of crashing on them."""
    bench = BENCHES["gmm"]
    link_err = builder.Link(error="enzyme-cc: error: in function 'f': cannot differentiate")
    b = builder.Build("gmm", ok=True, adolc=True, enzyme=link_err,
                      ref=builder.Link(ok=True, binary="x", stages={"differentiate": 0.5}),
                      noad=builder.Link(ok=True, binary="y"))
    cases = bench.cases["quick"]
    runs = [
        {"bench": "gmm", "case": cases[0].label, "variant": "primal", "status": "ok",
         "median": 0.01},
        {"bench": "gmm", "case": cases[0].label, "variant": "enzyme", "status": "build",
         "message": harness._link_msg(link_err)},
        {"bench": "gmm", "case": cases[0].label, "variant": "ref", "status": "WRONG",
         "message": "WRONG GRADIENT: entry 3 is 1, finite differences give 2"},
        {"bench": "gmm", "case": cases[0].label, "variant": "adolc", "status": "crash",
         "message": "crash (SIGSEGV)"},
        {"bench": "gmm", "case": cases[0].label, "variant": "fd", "status": "timeout",
         "message": "no result within 60s"},
    ]
    text, summary = harness.tables([bench], {"gmm": b}, runs, "quick")
    assert "enzyme-cc: error" in text
    assert "WRONG GRADIENT" in text
    assert "crash" in text and "timeout" in text
    assert "cannot differentiate" in text          # the footnote keeps the message
    assert summary["gmm"]["enzyme"] is None


def test_vector_mode_table():
    """Euler's vector-mode variants get their own table with a grad/primal each; the headline
    enzyme-cc column and Table 1 keep the two-sweep reverse Jacobian."""
    bench = BENCHES["euler"]
    assert bench.vector == ["enzyme-fwd2", "enzyme-rev2"]
    ok = builder.Link(ok=True, binary="x", stages={"differentiate": 0.1})
    b = builder.Build("euler", ok=True, adolc=False, enzyme=ok, ref=ok)
    label = bench.cases["quick"][0].label
    times = {"primal": 1.0, "enzyme": 4.4, "ref": 9.0, "enzyme-fwd2": 1.1}
    runs = [{"bench": "euler", "case": label, "variant": v, "status": "ok", "median": t}
            for v, t in times.items()]
    runs.append({"bench": "euler", "case": label, "variant": "enzyme-rev2", "status": "WRONG",
                 "message": "WRONG GRADIENT: entry 1 is 0, finite differences give 2"})
    text, summary = harness.tables([bench], {"euler": b}, runs, "quick")
    vec = text.split("Vector modes", 1)[1].split("\n\n", 1)[0]
    row = next(line for line in vec.splitlines() if line.startswith("Euler"))
    assert row.split()[-3:] == ["4.4", "1.1", "-"], row       # grad/primal of each variant
    assert "WRONG GRADIENT" in row
    assert summary["euler"]["enzyme"] == 4.4                   # the headline: two sweeps
