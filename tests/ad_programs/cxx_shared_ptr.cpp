// std::shared_ptr holding active data: make_shared puts the value beside the reference counts
// in one block, and copying or dropping a shared_ptr updates the counts with atomic integer
// adds on that block (once refused: "atomic 'add' on differentiated memory is not
// supported"); a refcounted box of our own with __atomic_fetch_add / __atomic_fetch_sub.
// Reverse and forward mode against the analytic derivatives.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-10 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double shared_square(double x) {
  auto p = std::make_shared<double>(x);
  auto q = p;                                   // a second owner: the count goes up and down
  return *q * *p + std::sin(*p);
}

struct Field {
  std::vector<double> v;
};

double shared_vector(double x) {
  auto f = std::make_shared<Field>();
  for (int i = 0; i < 4; i++) f->v.push_back(x * (i + 1));
  std::shared_ptr<Field> g = f;
  double s = 0;
  for (double e : g->v) s += e * e;             // x^2 (1 + 4 + 9 + 16)
  return s;
}

struct Box {
  int refs;
  double val;
};
static Box *box_new(double v) { return new Box{1, v}; }
static void box_ref(Box *b) { __atomic_fetch_add(&b->refs, 1, __ATOMIC_ACQ_REL); }
static void box_unref(Box *b) {
  if (__atomic_fetch_sub(&b->refs, 1, __ATOMIC_ACQ_REL) == 1) delete b;
}

double boxed(double x) {
  Box *b = box_new(x * x);
  box_ref(b);
  double r = b->val * x;                        // x^3
  box_unref(b);
  box_unref(b);
  return r;
}

int main() {
  double x = 0.8;
  check("rev_shared_square", __enzyme_autodiff((void *)shared_square, x), 2 * x + std::cos(x));
  check("fwd_shared_square", __enzyme_fwddiff((void *)shared_square, x, 1.0), 2 * x + std::cos(x));
  check("rev_shared_vector", __enzyme_autodiff((void *)shared_vector, x), 60 * x);
  check("fwd_shared_vector", __enzyme_fwddiff((void *)shared_vector, x, 1.0), 60 * x);
  check("rev_boxed", __enzyme_autodiff((void *)boxed, x), 3 * x * x);
  check("fwd_boxed", __enzyme_fwddiff((void *)boxed, x, 1.0), 3 * x * x);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
