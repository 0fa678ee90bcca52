// A differentiated function that writes a log message into a std::string the caller passes
// enzyme_const (ostringstream::str(), std::to_string of an active value), and keeps its
// parameters in a std::map<std::string, double> and a record holding a name beside a value:
// the string's memory carries no derivative (assigning it was refused: "joins shadowed and
// unshadowed memory"), the map's and the record's values do. e = sum_i cosh(x_i) (i + 1) * k.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct Named { std::string name; double value; };

double energy(const std::vector<double> &x, std::map<std::string, double> &params,
              const Named &scale, std::string *log) {
  double e = 0;
  for (size_t i = 0; i < x.size(); ++i) e += std::cosh(x[i]) * (i + 1);
  e *= params["k"] * scale.value;
  std::ostringstream os;
  os << "E=" << e << " (" << scale.name << ")";
  *log = os.str();
  *log += ", again " + std::to_string(e);
  return e;
}

int main() {
  std::vector<double> x = {0.2, -0.4, 0.9}, dx(3, 0.0);
  std::map<std::string, double> p = {{"k", 1.5}, {"unused", 2.0}}, dp = {{"k", 0.0}, {"unused", 0.0}};
  Named scale{"a scale whose name is longer than the short-string buffer", 0.8}, dscale{"", 0.0};
  std::string log;
  __enzyme_autodiff((void *)energy, enzyme_dup, &x, &dx, enzyme_dup, &p, &dp, enzyme_dup, &scale,
                    &dscale, enzyme_const, &log);
  double s = 0;
  for (int i = 0; i < 3; ++i) s += std::cosh(x[i]) * (i + 1);
  for (int i = 0; i < 3; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], std::sinh(x[i]) * (i + 1) * 1.5 * 0.8);
  }
  check("dk", dp["k"], s * 0.8);
  check("dunused", dp["unused"], 0.0);
  check("dscale", dscale.value, s * 1.5);
  check("log", log.rfind("E=", 0) == 0 && log.find("(a scale whose") != std::string::npos, 1);
  // forward along x -> v against the reverse gradient
  std::vector<double> v = {0.3, -0.7, 0.5};
  std::map<std::string, double> tp = {{"k", 0.0}, {"unused", 0.0}};
  Named tscale{"", 0.0};
  double t = __enzyme_fwddiff((void *)energy, enzyme_dup, &x, &v, enzyme_dup, &p, &tp, enzyme_dup,
                              &scale, &tscale, enzyme_const, &log);
  check("dot", t, 0.3 * dx[0] - 0.7 * dx[1] + 0.5 * dx[2]);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
