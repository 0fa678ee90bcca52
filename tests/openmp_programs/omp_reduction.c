/* reductions: + on two doubles, * , max, and + on an array section (the derivative runs them
   on libomp's critical method; the atomic method's compare-and-swap loops drop out). */
#include "omp_check.h"
#define N 33
#define M 8
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double s = 0, q = 1.5, p = 1, mx = -1e300, arr[3] = {0, 0, 0};               \
    P("omp parallel for reduction(+ : s, q)")                                    \
    for (int i = 0; i < n; i++) {                                                \
      s += x[i] * x[i] * x[(i + 3) % n];                                         \
      q += exp(0.1 * x[i]);                                                      \
    }                                                                            \
    P("omp parallel for reduction(* : p) reduction(max : mx) reduction(+ : arr[:3])") \
    for (int i = 0; i < n; i++) {                                                \
      p *= 1 + 0.01 * x[i];                                                      \
      mx = mx > x[i] * x[i] ? mx : x[i] * x[i];                                  \
      arr[i % 3] += x[i] * x[(i + 1) % n];                                       \
    }                                                                            \
    y[0] = s * q;                                                                \
    y[1] = s;                                                                    \
    y[2] = p;                                                                    \
    y[3] = mx;                                                                   \
    y[4] = arr[0];                                                               \
    y[5] = arr[1];                                                               \
    y[6] = arr[2];                                                               \
    y[7] = p * mx;                                                               \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
