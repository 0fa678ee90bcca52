// C++: a template functor called from a parallel loop (reduction, atomic, critical and single
// in one region), on a std::vector that each thread fills privately.
#include <vector>
#include "omp_check.h"
#define N 30
#define M 3
template <class T> struct Spring {
  T k;
  T energy(T a, T b) const { return 0.5 * k * (b - a) * (b - a) + a * b * b; }
};
#define KERNEL(name, P)                                                          \
  extern "C" void name(const double *x, double *y, int n) {                      \
    Spring<double> s{1.5};                                                       \
    double e = 0;                                                                \
    y[1] = 0;                                                                    \
    y[2] = 1;                                                                    \
    P("omp parallel reduction(+ : e)")                                           \
    {                                                                            \
      std::vector<double> mine;                                                  \
      P("omp for schedule(static, 2) nowait")                                    \
      for (int i = 0; i < n - 1; i++) {                                          \
        double v = s.energy(x[i], x[i + 1]);                                     \
        mine.push_back(v);                                                       \
        e += v;                                                                  \
        P("omp atomic")                                                          \
        y[1] += v * x[0];                                                        \
      }                                                                          \
      double part = 0;                                                           \
      for (double v : mine) part += v * v;                                       \
      P("omp critical")                                                          \
      y[2] = y[2] * exp(0.01 * part);                                            \
    }                                                                            \
    y[0] = e;                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
