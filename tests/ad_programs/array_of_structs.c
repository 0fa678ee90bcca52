/* An array of structs with a double pair and an int field: total spring energy between
   consecutive points, springs only between points with the same group id. */
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
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

struct Point { double x, y; int group; };

double chain_energy(const struct Point *p, int n) {
  double e = 0;
  for (int i = 0; i + 1 < n; i++) {
    if (p[i].group != p[i + 1].group) continue;
    double dx = p[i + 1].x - p[i].x, dy = p[i + 1].y - p[i].y;
    double len = sqrt(dx * dx + dy * dy);
    e += (len - 1) * (len - 1);
  }
  return e;
}

int main(void) {
  enum { N = 5 };
  struct Point p[N] = {{0, 0, 1}, {1.2, 0.3, 1}, {2.0, 1.1, 1}, {3, 1, 2}, {3.5, 2.2, 2}};
  struct Point dp[N] = {{0}};
  __enzyme_autodiff((void *)chain_energy, enzyme_dup, p, dp, enzyme_const, N);
  const double h = 1e-6;
  for (int i = 0; i < N; i++) {
    for (int c = 0; c < 2; c++) {
      double *v = c ? &p[i].y : &p[i].x, old = *v;
      *v = old + h;
      double fp = chain_energy(p, N);
      *v = old - h;
      double fm = chain_energy(p, N);
      *v = old;
      char name[32];
      snprintf(name, sizeof name, "p%d.%c", i, c ? 'y' : 'x');
      check(name, c ? dp[i].y : dp[i].x, (fp - fm) / (2 * h));
    }
  }
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  struct Point v[N];
  double vdp = 0;
  for (int i = 0; i < N; i++) {
    v[i] = (struct Point){rnd(2 * i), rnd(2 * i + 1), 0};
    vdp += v[i].x * dp[i].x + v[i].y * dp[i].y;
  }
  check("dot_chain_energy", __enzyme_fwddiff((void *)chain_energy, enzyme_dup, p, v, enzyme_const, N), vdp);
  return report();
}
