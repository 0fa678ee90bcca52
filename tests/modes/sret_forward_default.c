/* __enzyme_fwddiff of a function returning a 24-byte struct through a hidden sret pointer,
 * the marker declared to return the struct and given no return annotation: the tangent, as
 * for any other result (it returned the primal, silently; found by a new-user check). Prints
 * `got | expected` lines. */
#include <math.h>
#include <stdio.h>
extern int enzyme_dup, enzyme_noret, enzyme_dup_return;
typedef struct { double x, y, z; } Vec3;
typedef struct { Vec3 primal, tangent; } Vec3Pair;
Vec3 __enzyme_fwddiff_v3(void *, ...) __asm__("__enzyme_fwddiff");
Vec3Pair __enzyme_fwddiff_pair(void *, ...) __asm__("__enzyme_fwddiff");

Vec3 polar(const double *p) {
  Vec3 v = {p[0] * cos(p[1]), p[0] * sin(p[1]), p[0] * p[0]};
  return v;
}

int main(void) {
  double p[2] = {2.0, 0.5}, dp[2] = {1.0, 0.0};
  Vec3 t = __enzyme_fwddiff_v3((void *)polar, enzyme_dup, p, dp);
  Vec3 n = __enzyme_fwddiff_v3((void *)polar, enzyme_noret, enzyme_dup, p, dp);
  Vec3Pair b = __enzyme_fwddiff_pair((void *)polar, enzyme_dup_return, enzyme_dup, p, dp);
  printf("default %g %g %g | %g %g %g\n", t.x, t.y, t.z, cos(p[1]), sin(p[1]), 2 * p[0]);
  printf("noret %g %g %g | %g %g %g\n", n.x, n.y, n.z, cos(p[1]), sin(p[1]), 2 * p[0]);
  printf("both %g %g %g %g | %g %g %g %g\n", b.primal.x, b.primal.z, b.tangent.x, b.tangent.z,
         p[0] * cos(p[1]), p[0] * p[0], cos(p[1]), 2 * p[0]);
  return 0;
}
