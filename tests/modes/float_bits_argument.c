/* A float's bits passed to a function as an integer and turned back into the float there
   (Enzyme's ReverseMode/subdoublestore.c: `memcpy(&res, &inp, 8); substore(res, 3)`), a double
   as `unsigned long long` and a float as `unsigned int`: the callee's derivative takes the
   integer parameter as the float it carries (reverse mode: its adjoint comes back as that
   float; forward mode: its tangent goes in as the integer, as the caller keeps it). It was
   refused ("an integer argument carries float data ... whose derivative would drop it").
   Each line: enzyme-cc | analytic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef unsigned long long u64;
typedef unsigned int u32;

__attribute__((noinline)) u64 *keep(u64 bits, u64 tag) {
  u64 *data = malloc(2 * sizeof(u64));
  double v;
  memcpy(&v, &bits, sizeof v);
  *(double *)data = sin(v) * v;
  data[1] = tag;
  return data;
}
__attribute__((noinline)) float twice(u32 bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return 2 * f * f;
}

double foo(double x) {
  u64 b;
  memcpy(&b, &x, sizeof b);
  u64 *d = keep(b, 3);
  double r = ((double *)d)[0];
  free(d);
  float y = (float)x;
  u32 fb;
  memcpy(&fb, &y, sizeof fb);
  return r + twice(fb);
}

int main(void) {
  for (int i = 1; i <= 3; i++) {
    double x = 0.35 * i;
    double want = sin(x) + x * cos(x) + 4.0 * (float)x;
    printf("x=%g: %.12g | %.12g\n", x, __enzyme_autodiff((void *)foo, x), want);
    printf("x=%g forward: %.12g | %.12g\n", x, __enzyme_fwddiff((void *)foo, x, 1.0), want);
  }
  return 0;
}
