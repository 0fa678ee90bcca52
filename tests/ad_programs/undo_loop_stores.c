/* Stores in loops into the function's own arrays, undone by the reverse sweep so that the loads
   before them are re-executed instead of taped (ad/synthesis/undo_stores.py): a time-step loop whose node
   update overwrites arrays that the element loop gathers from several times per node. Each
   case is checked against central differences. The other cases are ones where a reload would
   read the wrong bytes if a rule were missing: a store between a load and its use in the same
   iteration, a store through a second pointer into the same block, an array whose address
   escapes, a stack array, and a float array. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 8, E = 7, S = 5 };
static const int corner[2 * E] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7};

/* the time loop: elements gather their two nodes' positions and velocities, nodes move */
double steps(const double *x0, int n) {
  double *x = malloc(n * sizeof(double)), *u = malloc(n * sizeof(double));
  double *f = malloc(n * sizeof(double)), obj = 0;
  for (int i = 0; i < n; i++) { x[i] = x0[i]; u[i] = 0.1 * x0[(i + 1) % n]; }
  for (int s = 0; s < S; s++) {
    for (int i = 0; i < n; i++) f[i] = 0;
    for (int e = 0; e < n - 1; e++) {
      int a = corner[2 * e], b = corner[2 * e + 1];
      double len = x[b] - x[a] + 1.5, rel = u[b] - u[a];
      double t = sin(len) * len + 0.3 * rel * rel + exp(-0.1 * x[a] * x[b]);
      f[a] += t; f[b] -= 0.5 * t;
      obj += 0.01 * t * t;
    }
    for (int i = 0; i < n; i++) {
      u[i] = 0.9 * u[i] + 0.05 * f[i];
      x[i] += 0.1 * u[i];
    }
  }
  for (int i = 0; i < n; i++) obj += x[i] * x[i] + 0.5 * u[i];
  free(x); free(u); free(f);
  return obj;
}

/* in each iteration a store between the load and the load's use: the use must see the value
   loaded, not the one stored */
double between(const double *x0, int n) {
  double *buf = malloc(n * sizeof(double)), acc = 0;
  for (int i = 0; i < n; i++) buf[i] = x0[i];
  for (int s = 0; s < S; s++)
    for (int i = 0; i < n; i++) {
      double a = buf[i];
      if (a > 0.3 * (s + 1)) buf[i] = a * 0.8 + x0[(i + s) % n] * 0.3;
      else buf[i] = a * a * 0.5 + 0.2;
      acc += sin(a) * x0[i] + cos(buf[i]) * a;
    }
  free(buf);
  return acc;
}

/* a store on one branch between the load and its use: the use comes after the store in the same
   iteration, so that load cannot be re-executed (it would read the stored value); the loads
   of the earlier loop may be */
double after_store(const double *x0, int n) {
  double *buf = malloc(n * sizeof(double)), acc = 0;
  for (int i = 0; i < n; i++) buf[i] = x0[i];
  for (int s = 0; s < S; s++) {
    for (int i = 0; i + 1 < n; i++) acc += buf[i] * buf[i + 1] * 0.2;
    for (int i = 0; i < n; i++) {
      double a = buf[i];
      if (a > 0.25 * (s + 1)) buf[i] = a * 0.8 + x0[(i + s) % n] * 0.3;
      acc += sin(a) * x0[i];
    }
  }
  free(buf);
  return acc;
}

/* stores through a second pointer into the same block, loads through the first */
double second_pointer(const double *x0, int n) {
  double *buf = malloc(2 * n * sizeof(double)), *hi = buf + n / 2, acc = 0;
  for (int i = 0; i < 2 * n; i++) buf[i] = x0[i % n] * (1 + 0.1 * i);
  for (int s = 0; s < S; s++) {
    for (int i = 0; i < n; i++) acc += buf[i] * buf[(i + 3) % (2 * n)] * 0.1;
    for (int i = 0; i < n; i++) hi[i] = tanh(hi[i] + 0.2 * buf[i]);
  }
  for (int i = 0; i < 2 * n; i++) acc += buf[i];
  free(buf);
  return acc;
}

/* the array's address leaves through a global: its stores are not undone */
double *volatile g_seen;
__attribute__((noinline)) void remember(double *p) { g_seen = p; }
double escaping(const double *x0, int n) {
  double *buf = malloc(n * sizeof(double)), acc = 0;
  remember(buf);
  for (int i = 0; i < n; i++) buf[i] = x0[i];
  for (int s = 0; s < S; s++) {
    for (int i = 0; i < n; i++) acc += buf[i] * buf[(i + 1) % n] * buf[(i + 2) % n];
    for (int i = 0; i < n; i++) buf[i] = sqrt(1.0 + buf[i] * buf[i]);
  }
  free(buf);
  return acc;
}

/* a stack array updated each step, read at several offsets per element */
double stack_array(const double *x0, int n) {
  double st[N], acc = 0;
  for (int i = 0; i < N; i++) st[i] = x0[i % n];
  for (int s = 0; s < S; s++) {
    for (int i = 0; i + 2 < N; i++) acc += st[i] * st[i + 1] - 0.5 * st[i + 2] * st[i];
    for (int i = 0; i < N; i++) st[i] = st[i] * 0.7 + 0.1 * sin(st[(i + 1) % N]);
  }
  return acc;
}

/* a float array (checked against differences of the same code on doubles: float rounding
   makes differences of the float code itself too coarse) */
#define FLOATS(NAME, T)                                                                \
  double NAME(const double *x0, int n) {                                               \
    T *v = malloc(n * sizeof(T));                                                      \
    double acc = 0;                                                                    \
    for (int i = 0; i < n; i++) v[i] = (T)x0[i];                                       \
    for (int s = 0; s < S; s++) {                                                      \
      for (int i = 0; i + 1 < n; i++) acc += (double)(v[i] * v[i + 1]) + v[(i + 2) % n]; \
      for (int i = 0; i < n; i++) v[i] = v[i] * (T)0.9 + (T)0.05 * v[(i + 3) % n];       \
    }                                                                                  \
    free(v);                                                                           \
    return acc;                                                                        \
  }
FLOATS(floats, float)
FLOATS(floats_as_doubles, double)

typedef double (*fn_t)(const double *, int);
/* the gradient of f against central differences of ref (f itself, or its twin on doubles) */
static void run(const char *name, fn_t f, fn_t ref) {
  double x[N], dx[N] = {0};
  for (int i = 0; i < N; i++) x[i] = 0.4 + 0.13 * i - 0.02 * i * i;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double h = 1e-6, xp[N], xm[N];
    for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
    xp[i] += h; xm[i] -= h;
    char label[64];
    snprintf(label, sizeof label, "%s_d%d", name, i);
    check(label, dx[i], (ref(xp, N) - ref(xm, N)) / (2 * h));
  }
  /* forward mode in one direction against the gradient */
  double v[N], dot = 0;
  for (int i = 0; i < N; i++) { v[i] = 0.3 - 0.1 * i; dot += v[i] * dx[i]; }
  char label[64];
  snprintf(label, sizeof label, "%s_fwd", name);
  check(label, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, N), dot);
}

int main(void) {
  run("steps", steps, steps);
  run("between", between, between);
  run("after_store", after_store, after_store);
  run("second_pointer", second_pointer, second_pointer);
  run("escaping", escaping, escaping);
  run("stack_array", stack_array, stack_array);
  run("floats", floats, floats_as_doubles);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
