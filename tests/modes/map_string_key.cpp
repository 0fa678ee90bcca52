// A std::map<std::string, double> built from an initializer list and indexed with a std::string
// variable. At -Os the node's destruction frees the key's buffer with a sized delete whose size
// (the capacity + 1) is read from the node that also holds the double: refused as "integer
// arithmetic on data that holds a float" (found by a new-user check). grad = (x1, x0).
#include <cstdio>
#include <map>
#include <string>
void __enzyme_autodiff(void *, ...);

double f(const double *x) {
  std::map<std::string, double> c = {{"A", x[0]}, {"B", 2.0}};
  std::string a = "A";
  c[a] *= x[1];
  return c["A"] + c["B"];
}

int main() {
  double x[2] = {1.2, 0.9}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, x, dx);
  std::printf("%g %g\n", dx[0], dx[1]);
}
