/* parallel regions in a time loop, as in a stencil solver: every fork of one gradient pushes onto
   the same per-thread tapes (reversed in the reverse order of the forks). Forks made by the
   kernel itself and by a non-inlined step called in the loop (whose derivative shares the
   caller's tape), num_threads changing from fork to fork (teams of 1 to 4 threads: the set of
   per-thread tapes grows between forks and some threads skip forks), a reduction whose result
   scales the next step, double buffers swapped every step. The dynamic schedule is monotonic:
   libomp 22's nonmonotonic one (work stealing) with team sizes changing from fork to fork
   aborts now and then on a loaded machine ("Assertion failure at kmp_dispatch.cpp(1618)"), in
   plain clang -fopenmp code as well. */
#include "omp_check.h"
#define N 37
#define M 37
#define STEPS 7
#define STEP(name, P)                                                                   \
  __attribute__((noinline)) static void name(const double *a, double *b, int n, int k) { \
    P("omp parallel for schedule(monotonic: dynamic, 3) num_threads(k)")                \
    for (int i = 0; i < n; i++) {                                                       \
      double l = i > 0 ? a[i - 1] : 0, r = i < n - 1 ? a[i + 1] : 0;                    \
      b[i] = a[i] + 0.2 * (l + r - 2 * a[i]) - 0.1 * a[i] * a[i] * a[i];                \
    }                                                                                   \
  }
STEP(step_par, PAR)
STEP(step_ser, SER)
#define KERNEL(name, step, P)                                                          \
  void name(const double *x, double *y, int n) {                                       \
    double buf[2][N], *a = buf[0], *b = buf[1];                                        \
    P("omp parallel for num_threads(3)")                                               \
    for (int i = 0; i < n; i++) a[i] = x[i];                                           \
    for (int t = 0; t < STEPS; t++) {                                                  \
      step(a, b, n, 1 + (t * 3) % 4);                                                  \
      double s = 0;                                                                    \
      P("omp parallel for schedule(static) num_threads(4 - t % 4) reduction(+ : s)")   \
      for (int i = 0; i < n; i++) s += b[i] * b[i];                                    \
      double g = 1 / (1 + 0.01 * s);                                                   \
      P("omp parallel for schedule(static, 2) num_threads(1 + t % 2)")                 \
      for (int i = 0; i < n; i++) a[i] = b[i] * g + 0.05 * sin(b[i]);                  \
    }                                                                                  \
    P("omp parallel for")                                                              \
    for (int i = 0; i < n; i++) y[i] = a[i];                                           \
  }
KERNEL(fpar, step_par, PAR)
KERNEL(fser, step_ser, SER)
CHECKS(fpar, fser)
