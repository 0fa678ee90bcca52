/* Structs of doubles passed by pointer: a read-only energy, and an in-place update step. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

struct Particle { double x, y, vx, vy, m; };

double energy(const struct Particle *p) {
  return 0.5 * p->m * (p->vx * p->vx + p->vy * p->vy) + 9.81 * p->m * p->y;
}

/* one explicit Euler step with drag, in place; then the energy */
double step_energy(struct Particle *p, double dt) {
  p->x += dt * p->vx;
  p->y += dt * p->vy;
  p->vx -= dt * 0.1 * p->vx * p->vx;
  p->vy -= dt * 9.81;
  return energy(p);
}

static double *field(struct Particle *p, int k) {
  switch (k) {
  case 0: return &p->x;
  case 1: return &p->y;
  case 2: return &p->vx;
  case 3: return &p->vy;
  default: return &p->m;
  }
}

int main(void) {
  struct Particle p = {1, 2, 0.5, -1.5, 3}, dp = {0};
  __enzyme_autodiff((void *)energy, &p, &dp);
  check("d_x", dp.x, 0);
  check("d_y", dp.y, 9.81 * p.m);
  check("d_vx", dp.vx, p.m * p.vx);
  check("d_vy", dp.vy, p.m * p.vy);
  check("d_m", dp.m, 0.5 * (p.vx * p.vx + p.vy * p.vy) + 9.81 * p.y);

  /* forward tangent along tp versus its dot with the reverse gradient dp */
  struct Particle tp;
  double tg = 0;
  for (int k = 0; k < 5; k++) *field(&tp, k) = rnd(k), tg += rnd(k) * *field(&dp, k);
  check("dot_energy", __enzyme_fwddiff((void *)energy, &p, &tp), tg);

  const double dt = 0.1, h = 1e-6;
  struct Particle q0 = {1, 2, 0.5, -1.5, 3}, q = q0, dq = {0};
  __enzyme_autodiff((void *)step_energy, enzyme_dup, &q, &dq, enzyme_const, dt);
  const char *names[5] = {"step_x", "step_y", "step_vx", "step_vy", "step_m"};
  for (int k = 0; k < 5; k++) {
    struct Particle a = q0, b = q0;
    *field(&a, k) += h;
    *field(&b, k) -= h;
    check(names[k], *field(&dq, k), (step_energy(&a, dt) - step_energy(&b, dt)) / (2 * h));
  }
  /* step_energy maps q to (energy, q updated in place). Forward with tangent t gives (jr, t_out);
     reverse seeded with w in the shadow of q (and 1 on the return) gives the adjoint g of the
     input q: jr + t_out . w == t . g */
  struct Particle t, t_out, w, g;
  for (int k = 0; k < 5; k++) {
    *field(&t, k) = *field(&t_out, k) = rnd(5 + k);
    *field(&w, k) = *field(&g, k) = rnd(10 + k);
  }
  q = q0;
  double jr = __enzyme_fwddiff((void *)step_energy, enzyme_dup, &q, &t_out, enzyme_const, dt);
  q = q0;
  __enzyme_autodiff((void *)step_energy, enzyme_dup, &q, &g, enzyme_const, dt);
  double lhs = jr, rhs = 0;
  for (int k = 0; k < 5; k++) {
    lhs += *field(&t_out, k) * *field(&w, k);
    rhs += *field(&t, k) * *field(&g, k);
  }
  check("dot_step_energy", lhs, rhs);
  return report();
}
