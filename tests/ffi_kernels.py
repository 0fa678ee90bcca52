"""C, C++ and Fortran functions the Python API tests build (tests/test_python_*.py)."""
from enzyme_cc.ffi import In, Int, Out, Ret, Signature

C_SRC = r"""
#include <math.h>
#include <stdlib.h>
/* scalar output */
double norm2(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}
/* vector output, an internal loop over a malloc'd temporary, a constant input */
void smooth(const double *x, const double *w, int n, double *y) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = sin(x[i]) * w[i];
  for (int i = 0; i < n; i++) y[i] = t[i] * t[(i + 1) % n] + exp(0.1 * x[i]);
  free(t);
}
/* two inputs, two outputs of different shapes, single precision */
void affine(const float *a, const float *b, int m, float *y, float *s) {
  float acc = 0;
  for (int i = 0; i < m; i++) { y[i] = a[i] * b[i] + b[0]; acc += a[i] * a[i]; }
  s[0] = acc;
}
"""
NORM2 = Signature("norm2", [In("x", ("n",)), Int("n")], ret=Ret("r"))
SMOOTH = Signature("smooth", [In("x", ("n",)), In("w", ("n",), diff=False), Int("n"),
                              Out("y", ("n",))])
AFFINE = Signature("affine", [In("a", ("m",), "float32"), In("b", ("m",), "float32"), Int("m"),
                              Out("y", ("m",), "float32"), Out("s", (), "float32")])

CXX_SRC = r"""
#include <cmath>
#include <vector>
extern "C" void softmax(const double *x, int n, double *y) {
  std::vector<double> e(x, x + n);
  double z = 0;
  for (double &v : e) { v = std::exp(v); z += v; }
  for (int i = 0; i < n; i++) y[i] = e[i] / z;
}
"""
SOFTMAX = Signature("softmax", [In("x", ("n",)), Int("n"), Out("y", ("n",))])

F_SRC = r"""
subroutine cubic(p, x, n, y) bind(C, name="cubic")
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double), intent(in) :: p(3), x(n)
  real(c_double), intent(out) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = p(1) * x(i)**3 + p(2) * sin(x(i)) + p(3)
  end do
end subroutine
"""
CUBIC = Signature("cubic", [In("p", (3,)), In("x", ("n",)), Int("n"), Out("y", ("n",))])
