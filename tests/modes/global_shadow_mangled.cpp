// Enzyme's global-shadow entry points declared in C++ without extern "C", as a user declares
// __enzyme_autodiff: clang names them by their mangled symbols (_Z15__enzyme_shadowPvii), which
// the link step refused as "an Enzyme entry point that enzyme-cc does not support" while
// listing __enzyme_shadow among the supported ones.
#include <cstdio>
double g_k = 2.0;                       // a mutable global the function reads
double f(double x) { return g_k * x * x; }
double __enzyme_autodiff(void *, ...);
void *__enzyme_shadow(void *, int, int);
int main() {
  double *dk = (double *)__enzyme_shadow(&g_k, 1, 0);
  *dk = 0;
  double dx = __enzyme_autodiff((void *)f, 3.0);
  std::printf("df/dx %.12g | %.12g\n", dx, 2 * g_k * 3.0);
  std::printf("df/dk %.12g | %.12g\n", *dk, 9.0);
  return 0;
}
