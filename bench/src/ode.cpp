/* Euler / RK4 benchmarks (Boost.Odeint): the Jacobian of the final state w.r.t. the initial
   state (2 x 2), J[2r + c] = d x_r(1) / d x0_c. Variants: "enzyme" (the headline: one scalar
   reverse sweep per output), "enzyme-fwd2" (one __enzyme_fwddiff call with enzyme_width 2: a
   column per lane, no tape), "enzyme-rev2" (one __enzyme_autodiff call with enzyme_width 2: a
   row per lane; left out with -DBENCH_NO_REVERSE_VECTOR, as the Ref binary is built).
   Built twice: -DODE_RK4=0 (euler) and -DODE_RK4=1 (rk4), so that one failing does not take
   the other down.
   usage: euler|rk4 STEPS [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "ode.h"
#include <boost/assert/source_location.hpp>

#ifndef BENCH_NO_ENZYME
extern "C" {
BENCH_DEFINE_MARKERS
int enzyme_width;
void __enzyme_fwddiff(void *, ...);
}
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
#ifndef BENCH_NO_ENZYME
#ifndef BENCH_NO_REVERSE_VECTOR
#define BENCH_V_ODE_VECTOR "enzyme-fwd2,enzyme-rev2,"
#else
#define BENCH_V_ODE_VECTOR "enzyme-fwd2,"
#endif
#else
#define BENCH_V_ODE_VECTOR ""
#endif
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
  if (!strcmp(v, "enzyme-fwd2")) {
    /* one forward vector pass, width 2: lane c seeds dx0 = e_c and yields column c of J */
    double dx[2][2] = {{1, 0}, {0, 1}}, dout[2][2], out[2];
    __enzyme_fwddiff((void *)ode_final<double, Stepper>, enzyme_width, 2, enzyme_dup, x0, dx[0],
                     dx[1], enzyme_dupnoneed, out, dout[0], dout[1], enzyme_const, steps);
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 2; c++) J[2 * r + c] = dout[c][r];
    return 0;
  }
#ifndef BENCH_NO_REVERSE_VECTOR
  if (!strcmp(v, "enzyme-rev2")) {
    /* one reverse vector pass, width 2: lane r seeds dout = e_r and yields row r of J */
    double dout[2][2] = {{1, 0}, {0, 1}}, out[2];
    for (int i = 0; i < 4; i++) J[i] = 0;
    __enzyme_autodiff((void *)ode_final<double, Stepper>, enzyme_width, 2, enzyme_dup, x0, &J[0],
                      &J[2], enzyme_dupnoneed, out, dout[0], dout[1], enzyme_const, steps);
    return 0;
  }
#endif
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
  b.variants = BENCH_VARIANTS(BENCH_V_ODE_VECTOR);
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = value;
  return bench_main(argc, argv, &b);
}
