/* `omp simd` and `parallel for simd` reductions: the loop vectorizer vectorizes a loop the
   program marks even in the pre-AD pipeline (which vectorizes nothing else), leaving
   llvm.vector.reduce.fadd / fmax, which were refused as calls without a rule. */
#include "omp_check.h"
#define N 37
#define M 4
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double s = 0, t = 0, mx = -1e300;                                            \
    P("omp simd reduction(+ : s)")                                               \
    for (int i = 0; i < n; i++) s += x[i] * x[i];                                \
    P("omp parallel for simd reduction(+ : t) reduction(max : mx)")              \
    for (int i = 0; i < n; i++) {                                                \
      t += sin(x[i]) * x[(i + 1) % n];                                           \
      mx = mx > x[i] * x[i] ? mx : x[i] * x[i];                                  \
    }                                                                            \
    y[0] = s;                                                                    \
    y[1] = t;                                                                    \
    y[2] = mx;                                                                   \
    y[3] = s * t;                                                                \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
