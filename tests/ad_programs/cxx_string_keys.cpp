/* std::unordered_map<std::string, double> and std::map<std::string, double> holding active
   values: inserting a key copies its characters into a new node (a memcpy of char data, which
   carries no derivative), the hash of the key and string comparisons are integers. Keys built
   from a char pointer or copied from a named string, and keys longer than 15 characters, get
   heap buffers from std::string::_M_create (no bitcode: an allocation rule), which join the
   short-string buffers inside the map's shadowed nodes. Reverse mode against the analytic
   derivative, forward against reverse. */
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}


/* (x^2 + x) * 3x + sin(x) + sum_i (x i)(x (5-i)) */
template <class Map> double through_map(double x) {
  Map m;
  m["a"] = x * x;
  m["bb"] = 3 * x;
  m["a"] += x;
  m["sine"] = std::sin(x);
  m["k0"] = 0 * x, m["k1"] = x, m["key2"] = 2 * x, m["k3"] = 3 * x, m["fourteen chars"] = 4 * x;
  m["k5"] = 5 * x;
  double s = m["a"] * m["bb"] + m["sine"];
  s += 2 * (m["k0"] * m["k5"] + m["k1"] * m["fourteen chars"] + m["key2"] * m["k3"]);
  return s;
}
double hashed(double x) { return through_map<std::unordered_map<std::string, double>>(x); }
double ordered(double x) { return through_map<std::map<std::string, double>>(x); }

/* keys from a char pointer (short and long), from a named string (copied into the node), and
   a literal longer than 15 characters */
template <class Map> double heap_keys(double x, const char *shortname, const char *longname) {
  Map m;
  std::string named("a named key of 26 chars..");
  std::string copy = named;
  m[shortname] = x * x;
  m[longname] = 3 * x;
  m[named] = 2 * x;
  m["a literal key longer than fifteen"] = x * x;
  m[copy] += x;                                  /* the same key as named: 3x */
  m[shortname] += m[longname] * m[named];
  return m[shortname] * m["a literal key longer than fifteen"] + m[longname];
}
double hashed_heap(double x, const char *s, const char *l) {
  return heap_keys<std::unordered_map<std::string, double>>(x, s, l);
}
double ordered_heap(double x, const char *s, const char *l) {
  return heap_keys<std::map<std::string, double>>(x, s, l);
}
/* m[short] = x^2 + 3x * 3x = 10x^2; result 10x^2 * x^2 + 3x = 10x^4 + 3x */
static double hderiv(double x) { return 40 * x * x * x + 3; }

static double deriv(double x) {       /* sum_i i (5-i) x^2 = 20 x^2 -> 40 x */
  return 9 * x * x + 6 * x + std::cos(x) + 40 * x;
}

int main() {
  const double x = 0.9;
  check("unordered_reverse", __enzyme_autodiff((void *)hashed, x), deriv(x));
  check("map_reverse", __enzyme_autodiff((void *)ordered, x), deriv(x));
  /* forward against reverse: the tangent along t is t * derivative */
  const double t = std::sin(1.3);
  check("unordered_forward", __enzyme_fwddiff((void *)hashed, x, t),
        t * __enzyme_autodiff((void *)hashed, x));
  check("map_forward", __enzyme_fwddiff((void *)ordered, x, t),
        t * __enzyme_autodiff((void *)ordered, x));
  const char *sk = "k", *lk = "a key from a char pointer, 34 chars";
  check("unordered_heap_reverse",
        __enzyme_autodiff((void *)hashed_heap, x, enzyme_const, sk, enzyme_const, lk), hderiv(x));
  check("map_heap_reverse",
        __enzyme_autodiff((void *)ordered_heap, x, enzyme_const, sk, enzyme_const, lk), hderiv(x));
  check("unordered_heap_forward",
        __enzyme_fwddiff((void *)hashed_heap, x, t, enzyme_const, sk, enzyme_const, lk),
        t * __enzyme_autodiff((void *)hashed_heap, x, enzyme_const, sk, enzyme_const, lk));
  check("map_heap_forward",
        __enzyme_fwddiff((void *)ordered_heap, x, t, enzyme_const, sk, enzyme_const, lk),
        t * __enzyme_autodiff((void *)ordered_heap, x, enzyme_const, sk, enzyme_const, lk));
  return failed != 0;
}
