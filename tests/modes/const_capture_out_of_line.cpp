// An enzyme_const object captured by reference (as `this`) in a lambda beside an active pointer,
// every call kept out of line (-fno-inline): the closure's field for the constant `this` has a
// null shadow. std::vector<int>::operator[] and unique_ptr::operator-> read through it only to
// find an int or the object a virtual call takes as `this`, whose shadow the method never reads:
// no shadow is built there (a segfault before, reading through the null one).
#include <cstdio>
#include <memory>
#include <vector>
extern "C" {
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
}

struct Material {
  virtual ~Material() = default;
  virtual double energy(double s) const = 0;
};
struct Cubic : Material {
  double energy(double s) const override { return s * s * s; }
};
struct Square : Material {
  double energy(double s) const override { return 2 * s * s; }
};

struct Model {
  std::vector<int> idx;
  std::vector<std::unique_ptr<Material>> mats;
  double total(const double *x) const {
    auto term = [&](int k) { return mats[k]->energy(x[idx[k]]); };
    double acc = 0;
    for (int k = 0; k < (int)idx.size(); ++k) acc += term(k);
    return acc;
  }
};

static double total(const Model *m, const double *x) { return m->total(x); }

int main() {
  Model m;
  m.idx = {1, 0, 1};
  m.mats.push_back(std::make_unique<Cubic>());
  m.mats.push_back(std::make_unique<Square>());
  m.mats.push_back(std::make_unique<Cubic>());
  double x[2] = {1.5, -0.5}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)total, enzyme_const, &m, enzyme_dup, x, dx);
  // x1^3 + 2 x0^2 + x1^3
  std::printf("dx %g %g | %g %g\n", dx[0], dx[1], 4 * x[0], 6 * x[1] * x[1]);
  return 0;
}
