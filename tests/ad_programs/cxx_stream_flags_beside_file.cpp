// A report printed with std::scientific (ios_base's flags: `flags & ~floatfield`, an enum's
// bits) in a differentiated call tree that also opens a file stream on a branch not taken here:
// the flags are integers, not a float's bits (PENNANT's Hydro::writeEnergyCheck beside
// WriteXY::write).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
extern int enzyme_dup;
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
int dump_to_file = 0;
void open_dump() { std::ofstream out("/dev/null"); }
void report(const double *x) {
  std::cout << std::scientific;
  std::cout << "energy " << x[0] * x[1] << std::endl;
}
double energy(double *x) {
  if (dump_to_file) { std::cout << "writing..." << std::endl; open_dump(); }
  report(x);
  return x[0] * x[0] * x[1] + std::sin(x[1]);
}
int main() {
  double x[2] = {1.5, 0.5}, dx[2] = {0, 0}, t[2] = {0, 1};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx);
  double fwd = __enzyme_fwddiff((void *)energy, enzyme_dup, x, t);
  std::printf("CHECK d0 %.12g %.12g\n", dx[0], 2 * x[0] * x[1]);
  std::printf("CHECK d1 %.12g %.12g\n", dx[1], x[0] * x[0] + std::cos(x[1]));
  std::printf("CHECK fwd1 %.12g %.12g\n", fwd, x[0] * x[0] + std::cos(x[1]));
  return 0;
}
