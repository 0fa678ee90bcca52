// C++: a member function with dynamic and guided loops, single, master, barrier, firstprivate
// and lastprivate, calling a non-inlined virtual method inside the region.
#include "omp_check.h"
#define N 28
#define M 28
struct Law {
  virtual ~Law() {}
  virtual double flux(double a, double b) const = 0;
};
struct Quadratic : Law {
  double k;
  explicit Quadratic(double k_) : k(k_) {}
  __attribute__((noinline)) double flux(double a, double b) const override {
    return k * (b - a) * (a + b) + a * a * b;
  }
};
#define KERNEL(name, P)                                                          \
  struct name##_Solver {                                                         \
    const Law &law;                                                              \
    void run(const double *x, double *y, int n) const {                          \
      double scale = 0, last = 0, c = 0.5 * x[3];                                \
      P("omp parallel")                                                          \
      {                                                                          \
        P("omp single")                                                          \
        scale = 1 + x[0] * x[0];                                                 \
        P("omp for schedule(dynamic, 3) firstprivate(c)")                        \
        for (int i = 0; i < n; i++)                                              \
          y[i] = scale * law.flux(x[i], x[(i + 1) % n]) + c * x[i];              \
        P("omp master")                                                          \
        y[0] += scale * x[1];                                                    \
        P("omp barrier")                                                         \
        P("omp for schedule(guided, 2) lastprivate(last)")                       \
        for (int i = 0; i < n; i++) {                                            \
          last = y[i] * x[(i + 3) % n];                                          \
          y[i] += 0.1 * x[(i + 2) % n] * x[i];                                   \
        }                                                                        \
      }                                                                          \
      y[1] += last;                                                              \
    }                                                                            \
  };                                                                             \
  extern "C" void name(const double *x, double *y, int n) {                      \
    Quadratic q(0.75);                                                           \
    name##_Solver{q}.run(x, y, n);                                               \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
