// Enzyme's FPOpt logger in reverse mode, C++ (the callbacks' names are mangled):
// enzymeLogGrad(grad, opcodeName, calleeName, moduleName, functionName, blockIdx, instIdx) once per
// active operation per execution in the reverse sweep, with the adjoint of its result;
// enzymeLogValue(id, ...) in the forward sweep. Built with -DLOGGER (callbacks defined, logged
// adjoints checked against the analytic ones) and without (RESULT lines compared by the test).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;

static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

// per iteration: t = x[k]*x[k] (fmul), u = sin(t) (call), s = s + u (fadd); dbg only reaches printf
double energy(const double *x, int n) {
  double s = 0.0;
  for (int k = 0; k < n; k++) {
    double t = x[k] * x[k];
    double u = std::sin(t);
    s = s + u;
  }
  double dbg = s * 3.0;
  std::printf("energy: dbg = %g\n", dbg);
  return s;
}

#ifdef LOGGER
struct Rec {
  char op[16], callee[32], module[256], fn[64];
  unsigned block, inst;
  double grad;
};
static Rec recs[256];
static int nrec, values;
void enzymeLogGrad(double grad, const char *op, const char *callee, const char *module,
                   const char *fn, unsigned block, unsigned inst) {
  if (nrec == 256) std::abort();
  Rec &r = recs[nrec++];
  std::snprintf(r.op, sizeof r.op, "%s", op);
  std::snprintf(r.callee, sizeof r.callee, "%s", callee);
  std::snprintf(r.module, sizeof r.module, "%s", module);
  std::snprintf(r.fn, sizeof r.fn, "%s", fn);
  r.block = block, r.inst = inst, r.grad = grad;
}
void enzymeLogValue(const char *id, double res, unsigned n, double *ops) { values++; }
static bool ends_with(const char *s, const char *tail) {
  size_t a = std::strlen(s), b = std::strlen(tail);
  return a >= b && !std::strcmp(s + a - b, tail);
}
#endif

int main() {
  enum { N = 4 };
  double x[N] = {0.5, -1.25, 0.75, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    std::printf("RESULT dx %a\n", dx[k]);
    char name[32];
    std::snprintf(name, sizeof name, "dx[%d]", k);
    check(name, dx[k], 2 * x[k] * std::cos(x[k] * x[k]), 1e-12);
  }
#ifdef LOGGER
  check("grads", nrec, 3 * N, 0);
  check("values", values, 3 * N, 0);
  // the reverse sweep runs the iterations last to first; in each, the fadd, the sin call and the
  // fmul are logged in some order: their adjoints are 1, 1 and cos(x[k]^2)
  int fmuls = 0, fadds = 0, sins = 0;
  for (int r = 0; r < nrec && r < 3 * N; r++) {
    const Rec &g = recs[r];
    int k = N - 1 - r / 3;
    check("function", std::strstr(g.fn, "energy") != nullptr, 1, 0);
    check("module", ends_with(g.module, "grad_log.cpp"), 1, 0);
    if (!std::strcmp(g.op, "fmul")) {
      fmuls++;
      check("fmul_grad", g.grad, std::cos(x[k] * x[k]), 1e-12);
      check("fmul_callee", g.callee[0] == 0, 1, 0);
    } else if (!std::strcmp(g.op, "fadd")) {
      fadds++;
      check("fadd_grad", g.grad, 1.0, 0);
    } else if (!std::strcmp(g.op, "call")) {
      sins++;
      check("sin_grad", g.grad, 1.0, 0);
      check("sin_callee", std::strstr(g.callee, "sin") != nullptr, 1, 0);
    } else {
      check("unexpected_op", 0, 1, 0);
    }
    // positions in the function as differentiated (after -O2's unrolling, one per copy)
    for (int q = 0; q < r; q++)
      if (recs[q].block == g.block && recs[q].inst == g.inst)
        check("same_position_same_op", !std::strcmp(recs[q].op, g.op), 1, 0);
  }
  check("fmuls", fmuls, N, 0);
  check("fadds", fadds, N, 0);
  check("sins", sins, N, 0);
#endif
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
