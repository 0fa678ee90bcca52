/* frexp's fraction computed on a float's bits: the exponent field set to a constant, the sign
   and mantissa kept (Eigen's vectorized log, log1p and expm1; hand-written fast logs). Its
   derivative is 2^(E0 - E) for a normal x whose exponent field is E, and 2^(E0 - 1) for a
   subnormal x or zero. Scalars of both precisions, the mantissa alone (|x|), lanes of a
   vector mixing normal, subnormal and zero, and a log built on it. The values the derivative
   computes are the program's, bit for bit, for infinities and NaN too.
   Each line: enzyme-cc | expected. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
float __enzyme_autodiff_f(void *, ...) __asm__("__enzyme_autodiff");

typedef double v4d __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));

/* x's sign and mantissa with the exponent of [0.5, 1) */
static double fraction(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  b = (b & 0x800fffffffffffffull) | 0x3fe0000000000000ull;
  double m;
  memcpy(&m, &b, 8);
  return m;
}

/* x's mantissa alone with the exponent of [1, 2): |x| scaled */
static float magnitude(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  b = (b & 0x007fffffu) | 0x3f800000u;
  float m;
  memcpy(&m, &b, 4);
  return m;
}

void fraction_out(const double *x, double *out) { *out = fraction(*x); }

double fast_log(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  int e = (int)((b >> 52) & 0x7ff) - 1022;
  return log(fraction(x)) + e * 0.69314718055994530942;
}

float scaled_square(float y) { return magnitude(y) * y; }

void lanes(const v4d *x, v4d *out) {
  v4d v = *x;
  v4u b;
  memcpy(&b, &v, 32);
  b = (b & 0x800fffffffffffffull) | 0x3fe0000000000000ull;
  memcpy(&v, &b, 32);
  *out = v * v;
}

/* the derivative of fraction(x): 2^-e for x = m 2^e, m in [0.5, 1); 2^1021 below normal */
static double dfraction(double x) {
  int e;
  if (fabs(x) < 0x1p-1022)
    return 0x1p1021;
  frexp(x, &e);
  return ldexp(1.0, -e);
}

int main(void) {
  double xs[5] = {3.0, -0.15, 7.5e-300, -2.5e-310, 0.0};
  for (int i = 0; i < 5; i++) {
    double x = xs[i], dx = 0, out = 0, dout = 1;
    __enzyme_autodiff((void *)fraction_out, enzyme_dup, &x, &dx, enzyme_dup, &out, &dout);
    printf("fraction'(%g): %.12g | %.12g\n", x, dx, dfraction(x));
    double tx = 1, t = 0;
    __enzyme_fwddiff((void *)fraction_out, enzyme_dup, &x, &tx, enzyme_dup, &out, &t);
    printf("fraction'(%g) forward: %.12g | %.12g\n", x, t, dfraction(x));
  }
  double specials[4] = {INFINITY, -INFINITY, NAN, -2.5e-310};
  for (int i = 0; i < 4; i++) {
    double x = specials[i], dx = 0, out = 0, dout = 1, want = fraction(x);
    __enzyme_autodiff((void *)fraction_out, enzyme_dup, &x, &dx, enzyme_dup, &out, &dout);
    printf("fraction(%g) bit for bit: %d | 1\n", x, memcmp(&out, &want, 8) == 0);
  }
  double ys[3] = {0.37, 12.0, 1e-5};
  for (int i = 0; i < 3; i++) {
    printf("log'(%g): %.12g | %.12g\n", ys[i], __enzyme_autodiff((void *)fast_log, ys[i]),
           1 / ys[i]);
    printf("log'(%g) forward: %.12g | %.12g\n", ys[i],
           __enzyme_fwddiff((void *)fast_log, ys[i], 1.0), 1 / ys[i]);
  }
  float zs[3] = {0.6f, -5.0f, 1e-39f};
  for (int i = 0; i < 3; i++) {
    float z = zs[i];
    int e;
    frexpf(z, &e);
    double scale = ldexp(1.0, 1 - e);           /* magnitude(z) = |z| 2^(1-e), normal z */
    double want = fabsf(z) < 0x1p-126f ? 0x1p126 * 2 * fabsf(z) + 1.0 : 2 * fabs(z) * scale;
    printf("scaled_square'(%g): %.6g | %.6g\n", z, __enzyme_autodiff_f((void *)scaled_square, z),
           want);
  }
  v4d x = {3.0, -2.5e-310, 0.0, 5e300}, dx = {0}, out, dout = {1, 1, 1, 1};
  __enzyme_autodiff((void *)lanes, enzyme_dup, &x, &dx, enzyme_dup, &out, &dout);
  v4d tx = {1, 1, 1, 1}, t;
  __enzyme_fwddiff((void *)lanes, enzyme_dup, &x, &tx, enzyme_dup, &out, &t);
  for (int k = 0; k < 4; k++) {
    double want = 2 * fraction(x[k]) * dfraction(x[k]);
    printf("lane %d: %.12g | %.12g\n", k, dx[k], want);
    printf("lane %d forward: %.12g | %.12g\n", k, t[k], want);
  }
  return 0;
}
