/* Euler and RK4 integrators of Boost.Odeint on a small ODE system: the Lotka-Volterra
 * predator-prey equations dx/dt = a x - b x y, dy/dt = d x y - g y, integrated over [0, 1] in
 * `steps` fixed steps. The system is passed to odeint as a plain function pointer, as a user of
 * the library would write it (an indirect call before optimization). */
#ifndef BENCH_ODE_H
#define BENCH_ODE_H
#include <boost/array.hpp>
#include <boost/numeric/odeint.hpp>

#define ODE_TEND 1.0

template <class T> void ode_lotka_volterra(const boost::array<T, 2> &x, boost::array<T, 2> &dxdt,
                                           double /*t*/) {
  const double a = 1.5, b = 1.0, d = 1.0, g = 3.0;
  dxdt[0] = a * x[0] - b * x[0] * x[1];
  dxdt[1] = d * x[0] * x[1] - g * x[1];
}

template <class T>
using ode_euler = boost::numeric::odeint::euler<boost::array<T, 2>, double, boost::array<T, 2>,
                                                double>;
template <class T>
using ode_rk4 = boost::numeric::odeint::runge_kutta4<boost::array<T, 2>, double,
                                                     boost::array<T, 2>, double>;

/* final state x(1) from the initial state x0 */
template <class T, class Stepper> void ode_final(const T *x0, T *out, int steps) {
  boost::array<T, 2> x;
  x[0] = x0[0];
  x[1] = x0[1];
  boost::numeric::odeint::integrate_n_steps(Stepper(), ode_lotka_volterra<T>, x, 0.0,
                                            ODE_TEND / steps, steps);
  out[0] = x[0];
  out[1] = x[1];
}
#endif
