// Gradient of the value of an inner optimisation (a saddle point): the inner adaptive gradient
// descent calls __enzyme_autodiff (enzyme_out, a struct of two adjoints) from C++ code where the
// marker call is an invoke, and the outer __enzyme_autodiff differentiates the whole descent.
// The rewritten invoke left a phi entry in its landing pad ("PHINode should have one entry for
// each predecessor"). Checked against central differences, several calls.
#include <cmath>
#include <cstdio>
#include <vector>

struct Adj2 { double first, second; };
extern "C" {
Adj2 __enzyme_autodiff_adj2(void *, ...) __asm__("__enzyme_autodiff");
void __enzyme_autodiff(void *, ...);
}
int enzyme_const, enzyme_out, enzyme_dup, enzyme_dupnoneed;

static double payoff(double u0, double u1, double w0, double w1) {
  return u0 * u0 + u1 * u1 - w0 * w0 - w1 * w1 + 0.3 * u0 * w1 + 0.1 * std::sin(u1 * w0);
}

// minimise g from `from`: the step grows after ten successes and halves after a failure
template <class G> static std::vector<double> minimise(const G &g, const double *from) {
  std::vector<double> at(from, from + 2), slope(2), trial(2);
  double here = g.value(at.data()), step = 1e-2;
  g.slope(at.data(), slope.data());
  for (int wins = 0;;) {
    if (std::hypot(slope[0], slope[1]) <= 1e-7) return at;
    if (wins == 10) { step *= 2; wins = 0; continue; }
    for (int j = 0; j < 2; j++) trial[j] = at[j] - step * slope[j];
    if (std::hypot(at[0] - trial[0], at[1] - trial[1]) <= 1e-9) return at;
    double there = g.value(trial.data());
    if (there < here) {
      at = trial;
      here = there;
      g.slope(at.data(), slope.data());
      wins++;
    } else {
      step /= 2;
      wins = 0;
    }
  }
}

struct Responder {          // the second player maximises the payoff for a fixed u
  const double *u;
  double value(const double *w) const { return -payoff(u[0], u[1], w[0], w[1]); }
  void slope(const double *w, double *out) const {
    Adj2 d = __enzyme_autodiff_adj2((void *)payoff, enzyme_const, u[0], enzyme_const, u[1],
                                    enzyme_out, w[0], enzyme_out, w[1]);
    out[0] = -d.first;
    out[1] = -d.second;
  }
};

static void best_payoff(const double *u, const double *w0, double *out) {
  std::vector<double> w = minimise(Responder{u}, w0);
  *out = payoff(u[0], u[1], w[0], w[1]);
}

int main() {
  double w0[2] = {0.5, -0.5};
  for (int call = 0; call < 3; call++) {
    double u[2] = {0.4 + 0.1 * call, -0.3}, du[2] = {0, 0}, out, seed = 1;
    __enzyme_autodiff((void *)best_payoff, enzyme_dup, u, du, enzyme_const, w0,
                      enzyme_dupnoneed, &out, &seed);
    for (int i = 0; i < 2; i++) {
      double h = 1e-6, up[2] = {u[0], u[1]}, down[2] = {u[0], u[1]}, fu, fd;
      up[i] += h;
      down[i] -= h;
      best_payoff(up, w0, &fu);
      best_payoff(down, w0, &fd);
      printf("call %d du[%d] %.9g | %.9g\n", call, i, du[i], (fu - fd) / (2 * h));
    }
  }
  return 0;
}
