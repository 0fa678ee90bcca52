// A solver object made by a factory kept out of line, holding the address of a problem record
// that holds an enzyme_const model beside the active data: returned by value in registers
// ({ ptr, double }), through an sret record (a larger solver), and as a std::unique_ptr to a
// block the factory allocates. The solver's method reads the model through the record (its
// derivative reads no shadow there: the model has none). Refused before ("a pointer to double
// data without a shadow ... is stored into memory that has one"). Against central differences.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-6 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

struct Model { std::vector<double> coef; double scale; };
struct Problem { const Model &m; const double *x; int n; };
template <int Pad> struct Solver {
  const Problem *p;
  double w;
  double pad[Pad];
  __attribute__((noinline)) double eval() const {
    double s = 0;
    for (int i = 0; i < p->n; i++) s += p->m.coef[i] * std::sin(p->x[i]) * p->x[i] * p->m.scale;
    return s * w;
  }
};
template <> struct Solver<0> {
  const Problem *p;
  double w;
  __attribute__((noinline)) double eval() const {
    double s = 0;
    for (int i = 0; i < p->n; i++) s += p->m.coef[i] * std::sin(p->x[i]) * p->x[i] * p->m.scale;
    return s * w;
  }
};

__attribute__((noinline)) Solver<0> in_registers(const Problem &p, double w) { return {&p, w}; }
__attribute__((noinline)) Solver<6> through_sret(const Problem &p, double w) {
  return {&p, w, {0, 0, 0, 0, 0, 0}};
}
__attribute__((noinline)) std::unique_ptr<Solver<0>> on_heap(const Problem &p, double w) {
  return std::unique_ptr<Solver<0>>(new Solver<0>{&p, w});
}

double loss_registers(const Model *m, const double *x, int n) {
  Problem pb{*m, x, n};
  Solver<0> s = in_registers(pb, 2.0);
  return s.eval() + x[0] * s.w;
}
double loss_sret(const Model *m, const double *x, int n) {
  Problem pb{*m, x, n};
  Solver<6> s = through_sret(pb, 2.0);
  return s.eval();
}
double loss_heap(const Model *m, const double *x, int n) {
  Problem pb{*m, x, n};
  auto s = on_heap(pb, 3.0);
  return s->eval() * x[1];
}

typedef double (*Loss)(const Model *, const double *, int);

static void grad_check(const char *name, Loss f) {
  Model m{{1, 2, 3, 0.5}, 0.5};
  double x[4] = {0.3, 1.2, -0.7, 2.0}, dx[4] = {0}, v[4] = {0.4, -1, 0.25, 0.8}, vdx = 0;
  __enzyme_autodiff((void *)f, enzyme_const, &m, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    double xp[4], xm[4];
    for (int j = 0; j < 4; j++) xp[j] = xm[j] = x[j];
    xp[i] += 1e-6;
    xm[i] -= 1e-6;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s[%d]", name, i);
    check(buf, dx[i], (f(&m, xp, 4) - f(&m, xm, 4)) / 2e-6);
    vdx += v[i] * dx[i];
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "dot_%s", name);
  check(buf, __enzyme_fwddiff((void *)f, enzyme_const, &m, enzyme_dup, x, v, enzyme_const, 4),
        vdx);
}

int main() {
  grad_check("loss_registers", loss_registers);
  grad_check("loss_sret", loss_sret);
  grad_check("loss_heap", loss_heap);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
