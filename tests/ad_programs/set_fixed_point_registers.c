/* Loops marked with __enzyme_set_fixed_point that carry values from one iteration to the next
   in registers (after mem2reg at -O0, or as written), as Fortran loops marked with
   !$enzyme fixed_point do:
   - a counted for loop whose carried sum reaches the result (its adjoint takes part in the
     adjoint iteration and flows back out of the loop),
   - a while loop tested at its top carrying a tolerance it tightens and passes to the
     iteration's function, and a count used after the loop,
   - loops carrying the state itself in a register (the value they store into the global state,
     as load PRE leaves it), a do-while loop with a parameter it reloads each iteration and a
     counted one whose result is the register,
   - a while loop whose test does the work (rotated by the link step),
   - a loop whose state is only in a register (the global it names is written, never read).
   Checked against the implicit-function theorem's derivative at the converged state, the
   gradient through every iteration of the same loop unmarked, central differences, and forward
   vs reverse mode. */
#include <enzyme/fixed_point.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1e-12 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

/* ---- 1: x = 0.5 cos(x) + p, acc = 0.1 acc + x: the result x + acc = (1 + 1/0.9) x*. The sum
   converges faster than the state, whose convergence alone stops the iterations ---- */
static double counted(double p) {
  double x[1] = {0.5}, acc = 0;
  for (int i = 0; i < 80; i++) {
    __enzyme_set_fixed_point(1e-28, (int64_t)-1, (void *)0, x, (int64_t)sizeof x);
    acc = 0.1 * acc + x[0];
    x[0] = 0.5 * cos(x[0]) + p;
  }
  return x[0] + acc;
}

/* ---- 2: a while loop over a global state, tested at its top ---- */
#define N 5
double u[N], pr[N];
int64_t iters;
__attribute__((noinline)) static double iterate(double tol) {
  double t[N], err = 0;
  for (int k = 0; k < N; k++)
    t[k] = 0.25 * cos(u[k] - 0.5 * u[(k + 1) % N]) + pr[k] * pr[k];
  for (int k = 0; k < N; k++) {
    err = fmax(err, fabs(t[k] - u[k]));
    u[k] = t[k];
  }
  return err > tol ? err : 0;
}
#define WHILE_LOOP(MARK)                                                                      \
  for (int k = 0; k < N; k++) {                                                               \
    u[k] = 0;                                                                                 \
    pr[k] = x[k];                                                                             \
  }                                                                                           \
  double err = 1, tol = 1e-8;                                                                 \
  int64_t n = 0;                                                                              \
  while (err > 0) {                                                                           \
    MARK;                                                                                     \
    err = iterate(tol);                                                                       \
    tol = fmax(tol * 0.1, 1e-15);                                                             \
    n++;                                                                                      \
  }                                                                                           \
  iters = n;                                                                                  \
  double s = 0;                                                                               \
  for (int k = 0; k < N; k++)                                                                 \
    s += (k + 1) * u[k] * u[k];                                                               \
  return s;
static double marked(const double *x) {
  WHILE_LOOP(__enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, u, (int64_t)sizeof u))
}
static double plain(const double *x) { WHILE_LOOP((void)0) }

/* ---- 3: g = 0.3 sin(g) + pg^2 with g carried in a register as well as stored ---- */
double g, pg;
static double carried(const double *pin, double tol) {
  pg = *pin;
  g = 0.1;
  double a = g, pp = pg, e;
  do {
    __enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, &g, (int64_t)sizeof g);
    double na = 0.3 * sin(a) + pp * pp;
    g = na;
    e = fabs(na - a);
    a = na;
    pp = pg;
  } while (e > tol);
  return g * g;
}

/* ---- 4: a counted loop carrying the state a = 0.5 cos(a) + p in a register (and storing it
   into the global the marker names), from the first guess p; the result is the register ---- */
double g4;
static double counted_register(double p) {
  g4 = p;
  double a = g4;
  for (int i = 0; i < 80; i++) {
    __enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, &g4, (int64_t)sizeof g4);
    a = 0.5 * cos(a) + p;
    g4 = a;
  }
  return a * a;
}

/* ---- 5: a while loop whose test does the work (a DO WHILE condition larger than what LLVM
   rotates by default): the link step rotates it so that the step ends with the test ---- */
double w[3], q5;
#define RESIDUAL                                                                              \
  (fabs(0.3 * sin(w[0]) + q5 - w[1]) + fabs(0.2 * cos(w[1]) * q5 - w[2]) +                    \
   fabs(w[2] * w[0] * 0.1 + exp(-w[1]) - w[0]))
#define TESTED(MARK)                                                                          \
  q5 = q;                                                                                     \
  w[0] = w[1] = w[2] = 0;                                                                     \
  while (RESIDUAL > 1e-14) {                                                                  \
    MARK;                                                                                     \
    double a = 0.3 * sin(w[0]) + q5, b = 0.2 * cos(w[1]) * q5;                                \
    double c = w[2] * w[0] * 0.1 + exp(-w[1]);                                                \
    w[1] = a;                                                                                 \
    w[2] = b;                                                                                 \
    w[0] = c;                                                                                 \
  }                                                                                           \
  return w[0] + 2 * w[1] + 3 * w[2];
static double tested(double q) {
  TESTED(__enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, w, (int64_t)sizeof w))
}
static double tested_plain(double q) { TESTED((void)0) }

/* ---- 6: the iteration's state only in a register: the global the marker names is written
   (twice the state) but never read in the loop. The register's adjoint updates count in the
   convergence test, so the adjoint iteration does not stop after one pass ---- */
double g6;
static double register_only(double p) {
  double a = 0.5;
  g6 = 0;
  for (int i = 0; i < 60; i++) {
    __enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, &g6, (int64_t)sizeof g6);
    a = 0.5 * cos(a) + p;
    g6 = 2 * a;
  }
  return g6;
}

int main(void) {
  char name[48];
  double h = 1e-6;
  {
    double p = 0.3, d = __enzyme_autodiff((void *)counted, p), x = 0;
    for (int i = 0; i < 200; i++)
      x = 0.5 * cos(x) + p;
    check("counted_rev", d, (1 + 1 / 0.9) / (1 + 0.5 * sin(x)), 1e-10);
    check("counted_fd", d, (counted(p + h) - counted(p - h)) / (2 * h), 1e-6);
    check("counted_fwd", __enzyme_fwddiff((void *)counted, p, 1.0), d, 1e-10);
  }
  {
    double x[N], d0[N] = {0}, d[N] = {0}, v[N], dot = 0;
    for (int k = 0; k < N; k++) {
      x[k] = 0.3 + 0.1 * k;
      v[k] = 1.0 - 0.3 * k;
    }
    __enzyme_autodiff((void *)plain, enzyme_dup, x, d0);
    int64_t n0 = iters;
    __enzyme_autodiff((void *)marked, enzyme_dup, x, d);
    check("while_iters", (double)iters, (double)n0, 0);
    for (int k = 0; k < N; k++) {
      snprintf(name, sizeof name, "while_vs_taped_%d", k);
      check(name, d[k], d0[k], 1e-10);
      double keep = x[k];
      x[k] = keep + h;
      double up = marked(x);
      x[k] = keep - h;
      double dn = marked(x);
      x[k] = keep;
      snprintf(name, sizeof name, "while_fd_%d", k);
      check(name, d[k], (up - dn) / (2 * h), 1e-6);
      dot += v[k] * d[k];
    }
    check("while_fwd_rev_dot", __enzyme_fwddiff((void *)marked, enzyme_dup, x, v), dot, 1e-10);
  }
  {
    double p = 0.6, dp = 0, tol = 1e-15;
    __enzyme_autodiff((void *)carried, enzyme_dup, &p, &dp, enzyme_const, tol);
    double gs = 0.1;
    for (int i = 0; i < 200; i++)
      gs = 0.3 * sin(gs) + p * p;
    check("carried_rev", dp, 2 * gs * 2 * p / (1 - 0.3 * cos(gs)), 1e-10);
    double up = carried(&(double){p + h}, tol), dn = carried(&(double){p - h}, tol);
    check("carried_fd", dp, (up - dn) / (2 * h), 1e-6);
    double t = 1;
    check("carried_fwd", __enzyme_fwddiff((void *)carried, enzyme_dup, &p, &t, enzyme_const, tol),
          dp, 1e-10);
  }
  {
    double p = 0.4, d = __enzyme_autodiff((void *)counted_register, p), a = 0;
    for (int i = 0; i < 200; i++)
      a = 0.5 * cos(a) + p;
    check("counted_register_rev", d, 2 * a / (1 + 0.5 * sin(a)), 1e-10);
    check("counted_register_fd", d,
          (counted_register(p + h) - counted_register(p - h)) / (2 * h), 1e-6);
    check("counted_register_fwd", __enzyme_fwddiff((void *)counted_register, p, 1.0), d, 1e-10);
  }
  {
    double q = 0.5, d = __enzyme_autodiff((void *)tested, q);
    check("tested_vs_taped", d, __enzyme_autodiff((void *)tested_plain, q), 1e-10);
    check("tested_fd", d, (tested(q + h) - tested(q - h)) / (2 * h), 1e-6);
    check("tested_fwd", __enzyme_fwddiff((void *)tested, q, 1.0), d, 1e-10);
  }
  {
    double p = 0.2, d = __enzyme_autodiff((void *)register_only, p), a = 0;
    for (int i = 0; i < 200; i++)
      a = 0.5 * cos(a) + p;
    check("register_only_rev", d, 2 / (1 + 0.5 * sin(a)), 1e-10);
    check("register_only_fd", d, (register_only(p + h) - register_only(p - h)) / (2 * h), 1e-6);
    check("register_only_fwd", __enzyme_fwddiff((void *)register_only, p, 1.0), d, 1e-10);
  }
  return failed != 0;
}
