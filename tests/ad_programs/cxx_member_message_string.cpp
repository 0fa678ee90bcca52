// A time-step control in the style of a hydrodynamics code (PENNANT's Hydro::getDtHydro): the
// class keeps the limiting time step beside a `char` message buffer, and a member function
// kept out of line copies the message into the caller's std::string. The byte copy of the
// characters next to the double member was taken for a double copied byte by byte (an
// internal error, then a refusal): the class of `this`, from the member function's name, says
// those bytes are characters. The gradient of the energy after a few steps w.r.t. the initial
// energies, checked against central differences and forward mode.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-6 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

struct Hydro {
  double *ze;
  int n;
  double dtrec;
  char msgdtrec[80];
  void calcDt() {
    dtrec = 1e99;
    std::strcpy(msgdtrec, "Hydro default");
    for (int z = 0; z < n; z++) {
      double d = 0.1 / (1.0 + ze[z] * ze[z]);
      if (d < dtrec) {
        dtrec = d;
        std::snprintf(msgdtrec, 80, "Courant z = %d", z);
      }
    }
  }
  __attribute__((noinline)) void getDt(double &dtnew, std::string &msg) {
    if (dtrec < dtnew) {
      dtnew = dtrec;
      msg = std::string(msgdtrec);
    }
  }
};

struct Driver {
  Hydro *hydro;
  double dt, dtmax, time;
  std::string msgdt, msgdtlast;
  void calcGlobalDt() {
    msgdtlast = msgdt;
    dt = dtmax;
    msgdt = "Global maximum (dtmax)";
    hydro->calcDt();
    hydro->getDt(dt, msgdt);
  }
};

extern "C" double run(Driver *d, int steps) {
  for (int s = 0; s < steps; s++) {
    d->calcGlobalDt();
    for (int z = 0; z < d->hydro->n; z++) d->hydro->ze[z] += d->dt * std::sin(d->hydro->ze[z]);
    d->time += d->dt;
  }
  double e = 0;
  for (int z = 0; z < d->hydro->n; z++) e += d->hydro->ze[z] * d->hydro->ze[z];
  return e;
}

static Driver *make(double *ze, int n) {
  Hydro *h = new Hydro();
  h->ze = ze;
  h->n = n;
  Driver *d = new Driver();
  d->hydro = h;
  d->dtmax = 0.05;
  d->time = 0;
  return d;
}

int main() {
  const int n = 5;
  double ze[n], dze[n] = {0}, z0[n], t[n], tz[n];
  for (int i = 0; i < n; i++) {
    z0[i] = ze[i] = 0.3 + 0.4 * i;
    t[i] = std::sin(2.0 + 3.0 * i);
  }
  Driver *d = make(ze, n), *dd = make(dze, n);
  dd->dtmax = 0;
  __enzyme_autodiff((void *)run, enzyme_dup, d, dd, enzyme_const, 3);
  char name[32];
  double jt = 0;
  for (int k = 0; k < n; k++) {
    double h = 1e-6, p[n], m[n];
    for (int i = 0; i < n; i++) p[i] = m[i] = z0[i];
    p[k] += h;
    m[k] -= h;
    std::snprintf(name, sizeof name, "dze[%d]", k);
    check(name, dze[k], (run(make(p, n), 3) - run(make(m, n), 3)) / (2 * h));
    jt += dze[k] * t[k];
  }
  for (int i = 0; i < n; i++) { ze[i] = z0[i]; tz[i] = t[i]; }
  Driver *f = make(ze, n), *tf = make(tz, n);
  tf->dtmax = 0;
  check("forward_dot", __enzyme_fwddiff((void *)run, enzyme_dup, f, tf, enzyme_const, 3), jt);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
