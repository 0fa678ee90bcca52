// Plans calling their children's apply functions through function pointers (FFTW's plan
// tree: every apply function may call any other of its type). Each derivative of an apply
// function holds the dispatcher of that call: the dispatchers were built again for every
// target being built (one more per level of the recursion: a module growing with the square
// of the apply functions, and an internal RecursionError past about 110 of them). 120 apply
// functions here; reverse and forward mode against central differences.
#include <cmath>
#include <cstdio>
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
extern "C" int enzyme_dup, enzyme_const;
constexpr int N = 120;
struct plan;
typedef void (*apply_fn)(const plan *, double *);
struct plan { apply_fn apply; const plan *child; };
apply_fn table[N];
template <int I> __attribute__((noinline)) void apply(const plan *p, double *x) {
  x[0] = std::sin(x[0]) * (1.0 + I * 1e-3) + x[1] * 0.5;
  x[1] = x[1] * x[0];
  if (p->child) p->child->apply(p->child, x);
}
template <int I> struct Fill { static void go() { table[I] = apply<I>; Fill<I - 1>::go(); } };
template <> struct Fill<-1> { static void go() {} };
double run(const plan *p, double *x) {
  p->apply(p, x);
  return x[0] + x[1];
}
int main() {
  Fill<N - 1>::go();
  plan leaf = {table[3], nullptr}, mid = {table[77], &leaf}, root = {table[5], &mid};
  double x0[2] = {0.9, 0.4}, h = 1e-6;
  double x[2] = {x0[0], x0[1]}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)run, enzyme_const, &root, enzyme_dup, x, dx);
  for (int i = 0; i < 2; i++) {
    double p[2] = {x0[0], x0[1]}, m[2] = {x0[0], x0[1]}, v[2] = {x0[0], x0[1]}, t[2] = {0, 0};
    p[i] += h, m[i] -= h, t[i] = 1;
    double fd = (run(&root, p) - run(&root, m)) / (2 * h);
    double fwd = __enzyme_fwddiff((void *)run, enzyme_const, &root, enzyme_dup, v, t);
    std::printf("CHECK rev_%d %.9g %.9g\n", i, dx[i], fd);
    std::printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, fd);
  }
  return 0;
}
