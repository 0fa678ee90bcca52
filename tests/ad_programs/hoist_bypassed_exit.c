/* Values defined before a loop and read by every reverse iteration are pushed once per run of
   the loop, by its exit block (ad/plan/plan.py). When LLVM has hoisted them into a rotated loop's
   preheader, the exit block is also where the loop's guard skips to: the value reaches it
   through a phi that is poison on the skipping edge (LULESH's element loops read the mesh's
   array pointers this way). Checked against central differences, with loops that run and loops
   that are skipped in the same gradient, and a read of the hoisted pointer after the loop inside
   an outer loop whose later iterations skip the inner one. The loops are kept rolled, as a
   large body keeps them. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 7, R = 5 };
struct mesh { double *x; double *w; int n; };

/* a split pair: the pointers are loaded once, before the loop; the stores to w keep the loads of
   x and w from being re-read */
__attribute__((noinline)) double sweep(struct mesh *m, int n) {
  double s = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < n; i++) {
    double t = m->x[i] * m->w[i];
    s += sin(t) * m->x[i];
    m->w[i] = 0.5 * t + m->w[i];
  }
  return s;
}

/* an outer loop whose inner loop runs for some rows and is skipped for others, and a read of
   the hoisted pointer after the inner loop */
__attribute__((noinline)) double rows(struct mesh *m, const int *count) {
  double s = 0;
  for (int r = 0; r < R; r++) {
    int n = count[r];
    if (n > 0) {
      double *x = m->x, *w = m->w;
#pragma clang loop unroll(disable)
      for (int i = 0; i < n; i++) {
        double t = x[i] * w[(i + r) % N];
        s += cos(t) * x[i];
        w[(i + r) % N] = t + 0.25 * w[(i + r) % N];
      }
      s += x[0] * x[1] * w[r];
      w[r] = 0.3 * s;
    }
  }
  return s;
}

/* the pointers are read, and used, before the loop's guard, inside a branch: the loop's exit
   block also follows the guard's skip and the branch's other side, so what the loop pushes
   there is poison when the loop is skipped, and the use before the guard must keep its own
   tape entry */
__attribute__((noinline)) double flagged(struct mesh *m, int n, int flag) {
  double s = 1.0;
  if (flag) {
    double *x = m->x, *w = m->w;
    s += x[0] * x[0] * w[1];
#pragma clang loop unroll(disable)
    for (int i = 0; i < n; i++) {
      double t = x[i] * w[i] + s;
      s += sin(t) * 0.5;
      w[i] = t * w[i];
    }
  }
  return s * s;
}

/* two loops reading the same pointer, computed after the outer loop's skip, leave by the same
   block (the outer loop's latch, which the skip also reaches): the phi there carries the
   pointer from the edges of both loops */
__attribute__((noinline)) double two_loops(struct mesh *m, const int *kind, int n) {
  double s = 0;
  for (int r = 0; r < R; r++) {
    if (kind[r] < 0)
      continue;
    double *x = m->x + r % 2, *w = m->w + (r + 1) % 3;
    switch (kind[r]) {
    case 0:
#pragma clang loop unroll(disable)
      for (int i = 0; i < n; i++) {
        s += sin(x[i] * w[i]) * 0.5;
        w[i] = x[i] * w[i] + 0.1 * s;
      }
      break;
    case 1:
#pragma clang loop unroll(disable)
      for (int i = 0; i < n; i++) {
        s += cos(x[i]) * w[i];
        w[i] = 0.9 * w[i] + x[i] * s * 0.2;
      }
      break;
    default:
      s += x[0] * w[0];
    }
  }
  return s;
}

double objective(double *x, double *w) {
  struct mesh m = {x, w, N};
  static const int count[R] = {3, 0, 7, 0, 2};
  double s = 0;
  for (int k = 0; k < 4; k++) s += sweep(&m, (k * 3) % 5);   /* n = 0, 3, 1, 4 */
  s += rows(&m, count);
  s += flagged(&m, 0, 1) + flagged(&m, 3, 1) + flagged(&m, 2, 0) + flagged(&m, 0, 1);
  static const int kinds[R] = {1, -1, 0, 2, 1};
  s += two_loops(&m, kinds, 4);
  for (int i = 0; i < N; i++) s += w[i] * w[i] * 0.1;
  return s;
}

int main(void) {
  double x0[N] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.25, 0.6}, w0[N] = {1.1, 0.9, -0.7, 0.4, 0.8, -0.3, 0.5};
  double x[N], w[N], dx[N] = {0}, dw[N] = {0};
  memcpy(x, x0, sizeof x);
  memcpy(w, w0, sizeof w);
  __enzyme_autodiff((void *)objective, enzyme_dup, x, dx, enzyme_dup, w, dw);
  for (int k = 0; k < 2 * N; k++) {
    double h = 1e-6, xp[N], wp[N], xm[N], wm[N];
    memcpy(xp, x0, sizeof xp); memcpy(wp, w0, sizeof wp);
    memcpy(xm, x0, sizeof xm); memcpy(wm, w0, sizeof wm);
    if (k < N) { xp[k] += h; xm[k] -= h; } else { wp[k - N] += h; wm[k - N] -= h; }
    double fd = (objective(xp, wp) - objective(xm, wm)) / (2 * h);
    char name[32];
    snprintf(name, sizeof name, "d_%s[%d]", k < N ? "x" : "w", k % N);
    check(name, k < N ? dx[k] : dw[k - N], fd);
  }
  /* forward mode in one direction against the gradient */
  double vx[N], vw[N], want = 0;
  for (int k = 0; k < N; k++) {
    vx[k] = 0.3 * k - 0.8;
    vw[k] = 1.0 - 0.2 * k;
    want += dx[k] * vx[k] + dw[k] * vw[k];
  }
  memcpy(x, x0, sizeof x);
  memcpy(w, w0, sizeof w);
  check("forward", __enzyme_fwddiff((void *)objective, enzyme_dup, x, vx, enzyme_dup, w, vw), want);
  return failed != 0;
}
