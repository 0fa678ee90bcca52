// A C++ class with a double member and a char array member right after it; the differentiated
// code copies the characters into a std::string member of another record (PENNANT's
// Driver::calcGlobalDt reading Hydro::msgdtrec): bytes of characters, not of the double.
#include <cstdio>
#include <cstring>
#include <string>
extern int enzyme_dup;
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
struct Limit { double dt; char why[40]; };
struct Step { Limit *limit; double dt; std::string reason; };
double choose(Step *s) {
  Limit *l = s->limit;
  if (l->dt < s->dt) { s->dt = l->dt; s->reason = std::string(l->why); }
  return s->dt * s->dt;
}
int main() {
  Limit l{}, dl{};
  l.dt = 0.5;
  std::strcpy(l.why, "Courant limit");
  Step s{&l, 1.0, ""}, ds{&dl, 0.0, ""};
  __enzyme_autodiff((void *)choose, enzyme_dup, &s, &ds);
  std::printf("CHECK ddt %g %g\n", dl.dt, 2 * 0.5);
  Limit tl{};
  tl.dt = 1.0;
  Step s2{&l, 1.0, ""}, t2{&tl, 0.0, ""};
  double fwd = __enzyme_fwddiff((void *)choose, enzyme_dup, &s2, &t2);
  std::printf("CHECK fwd %g %g\n", fwd, 2 * 0.5);
  std::printf("CHECK reason %d 0\n", std::strcmp(s.reason.c_str(), "Courant limit"));
  return 0;
}
