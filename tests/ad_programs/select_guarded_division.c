/* Guards that keep the primal away from a division by zero, a log of zero or a square root at
   zero: `if (v == 0) r = a; else r = b - u * u / v;` (GSL's Steffenson root solver, once
   converged), `x > 0 ? log(x) : 0`, `x > 0 ? x * sqrt(x) : 0`. LLVM turns each into a select
   over both arms, so the guarded arm is computed anyway and is not finite where the guard
   holds; the reverse of the select sends it a zero adjoint, and zero times its infinite partial
   derivatives was NaN: a NaN gradient with no error. Checked at the guard (analytic values:
   central differences would step across the branch) and away from it (central differences),
   reverse mode, and forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 3

__attribute__((noinline)) static void step(double x, double x1, double xn, double *root) {
  double u = x - x1, v = xn - 2 * x + x1;
  if (v == 0) *root = xn;
  else *root = x1 - u * u / v;
}

/* the same in long double (x86_fp80: its zero is written 0xK...) */
__attribute__((noinline)) static void step_ld(long double x, long double x1, long double xn,
                                              long double *root) {
  long double u = x - x1, v = xn - 2 * x + x1;
  if (v == 0) *root = xn;
  else *root = x1 - u * u / v;
}

/* a convergence ratio computed on every Newton iteration but used only from the second
   (GSL's modified Newton in its implicit ODE steppers): inf on the first, unused there */
__attribute__((noinline)) static double norm1(const double *v) { return sqrt(v[0] * v[0]); }
__attribute__((noinline)) static void newton(double *y, double c, double *eta_prev) {
  double norm = 0.0, prev;
  for (int iter = 1; iter <= 4; iter++) {
    double d = -(*y - c) * 0.5;
    *y += d;
    prev = norm;
    norm = norm1(&d);
    double theta = norm / prev;
    double eta;
    if (iter > 1) {
      if (theta >= 1.0) return;
      eta = theta / (1.0 - theta);
    } else {
      eta = pow(fmax(*eta_prev, 2.2e-16), 0.8);
    }
    *eta_prev = eta;
    if (eta * norm < 1e-3) return;
  }
}

/* p[0], p[1]: the Steffenson step; p[2]: the log and square-root guards */
static double f(const double *p) {
  double r;
  long double rl;
  step(p[0], p[0], p[0] * p[1], &r);
  step_ld(p[1], p[1], (long double)p[1] * p[0], &rl);
  r += 0.5 * (double)rl;
  double y = p[2], e = 1.0;
  newton(&y, p[0], &e);
  r += y * y;
  double x = p[2] - 1.0;
  double g = x > 0 ? log(x) : 0.0;
  double h = x > 0 ? x * sqrt(x) : 0.0;
  return r + 2.0 * g + 3.0 * h + p[2] * p[2];
}

static void run(const char *side, double *p, const double *want) {
  double dp[N] = {0}, t[N], dot = 0, hh = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
  for (int i = 0; i < N; i++) {
    double expect = want ? want[i] : 0;
    if (!want) {
      double keep = p[i];
      p[i] = keep + hh;
      double up = f(p);
      p[i] = keep - hh;
      double down = f(p);
      p[i] = keep;
      expect = (up - down) / (2 * hh);
    }
    char name[32];
    snprintf(name, sizeof name, "%s_dp[%d]", side, i);
    check(name, dp[i], expect);
    t[i] = cos(1.0 + i);
    dot += t[i] * dp[i];
  }
  char name[32];
  snprintf(name, sizeof name, "%s_fwd", side);
  check(name, __enzyme_fwddiff((void *)f, enzyme_dup, p, t), dot);
}

int main(void) {
  /* at the guards: v = p0 (p1 - 1) = 0 and v_ld = p1 (p0 - 1) = 0, so r = 1.5 p0 p1, and
     x = 0, so g = h = 0; the Newton iteration from y = p2 = c = p0 makes one step, y =
     (p2 + p0) / 2 (its theta is 0 / 0 there, unused), so y^2 adds 0.5 (p2 + p0) to both */
  double at[N] = {1.0, 1.0, 1.0}, want[N] = {1.5 + 1.0, 1.5, 2.0 + 1.0};
  run("guard", at, want);
  double away[N] = {1.5, 1.3, 1.7};
  run("away", away, NULL);
  return failed != 0;
}
