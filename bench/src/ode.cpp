/* Euler / RK4 benchmarks (Boost.Odeint): the Jacobian of the final state w.r.t. the initial
   state (2 x 2, one reverse sweep per output), J[2r + c] = d x_r(1) / d x0_c.
   Built twice: -DODE_RK4=0 (euler) and -DODE_RK4=1 (rk4), so that one failing does not take
   the other down.
   usage: euler|rk4 STEPS [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "ode.h"
#include <boost/assert/source_location.hpp>

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS }
#endif
#ifdef BENCH_HAVE_ADOLC
int ode_adolc_jacobian(int rk4, const double *x0, int steps, double *J);
#endif

#ifdef BOOST_NO_EXCEPTIONS
/* -fno-exceptions: Boost asks the program what to do instead of throwing */
namespace boost {
void throw_exception(std::exception const &) { abort(); }
void throw_exception(std::exception const &, boost::source_location const &) { abort(); }
}
#endif

#ifndef ODE_RK4
#define ODE_RK4 0
#endif
#if ODE_RK4
typedef ode_rk4<double> Stepper;
#else
typedef ode_euler<double> Stepper;
#endif
static const int rk4 = ODE_RK4;
static int steps;
static double x0[2] = {1.0, 1.0};
static double J[4];
volatile double ode_sink;

static void final_state(double *out) {
  ode_final<double, Stepper>(x0, out, steps);
}

static void primal(void) {
  double out[2];
  final_state(out);
  ode_sink = out[0];
}


static int gradient(const char *v) {
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    for (int r = 0; r < 2; r++) {
      double dout[2] = {0, 0};
      dout[r] = 1.0;
      J[2 * r] = J[2 * r + 1] = 0;
      double out[2];
      __enzyme_autodiff((void *)ode_final<double, Stepper>, enzyme_dup, x0, &J[2 * r],
                        enzyme_dupnoneed, out, dout, enzyme_const, steps);
    }
    return 0;
  }
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return ode_adolc_jacobian(rk4, x0, steps, J);
#endif
  return 1;
}

static double value(void) {
  double out[2];
  final_state(out);
  return out[0] + out[1];
}

static double fd_entry(int i) {
  int r = i / 2, c = i % 2;
  double x = x0[c], h = bench_fd_step(x), op[2], om[2];
  x0[c] = x + h;
  final_state(op);
  x0[c] = x - h;
  final_state(om);
  x0[c] = x;
  return (op[r] - om[r]) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s STEPS [--variant V ...]\n", argv[0]);
    return 2;
  }
  steps = atoi(argv[1]);
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = rk4 ? "rk4" : "euler";
  snprintf(b.input, sizeof b.input, "steps=%d", steps);
  b.ngrad = 4;
  b.grad = J;
  b.variants = BENCH_VARIANTS("");
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = value;
  return bench_main(argc, argv, &b);
}
