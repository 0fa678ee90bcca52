// Split reverse mode whose derivatives come back in memory (a result of more than 16 bytes,
// returned through a hidden pointer): enzyme::autodiff<ReverseWithPrimal> with three and four
// Active doubles (beside a Duplicated vector), and __enzyme_reverse declared to return a struct
// of three doubles. The derivatives were never stored there (garbage, silently).
#include <enzyme/enzyme>
#include <cstdio>
#include <vector>

double f3(double a, double b, double c) { return a * b + c * c; }
double f4(double a, double b, double c, double d) { return a * b + c * c + d * a; }
double mixed(const std::vector<double> &v, double a, double b, double c) {
  return v[0] * v[1] * a + b * c * c + a * b;
}

struct D3 { double a, b, c; };
// (the markers' variables come from the header; the C entry points with C names)
extern "C" {
void *__enzyme_augmentfwd(void *, ...);
D3 __enzyme_reverse(void *, ...);
}

int main() {
  auto r3 = enzyme::autodiff<enzyme::ReverseWithPrimal>(f3, enzyme::Active<double>(1.5),
                                                         enzyme::Active<double>(0.8),
                                                         enzyme::Active<double>(0.6));
  auto g3 = enzyme::get<0>(r3);
  std::printf("three active %g %g %g %g | 0.8 1.5 1.2 1.56\n", enzyme::get<0>(g3),
              enzyme::get<1>(g3), enzyme::get<2>(g3), enzyme::get<1>(r3));
  auto r4 = enzyme::autodiff<enzyme::ReverseWithPrimal>(
      f4, enzyme::Active<double>(1.5), enzyme::Active<double>(0.8), enzyme::Active<double>(0.6),
      enzyme::Active<double>(2.0));
  auto g4 = enzyme::get<0>(r4);
  std::printf("four active %g %g %g %g %g | 2.8 1.5 1.2 1.5 4.56\n", enzyme::get<0>(g4),
              enzyme::get<1>(g4), enzyme::get<2>(g4), enzyme::get<3>(g4), enzyme::get<1>(r4));
  std::vector<double> v{2.0, 3.0}, dv{0.0, 0.0};
  auto rm = enzyme::autodiff<enzyme::ReverseWithPrimal>(
      mixed, enzyme::Duplicated<const std::vector<double> &>(v, dv), enzyme::Active<double>(0.5),
      enzyme::Active<double>(1.5), enzyme::Active<double>(2.0));
  auto gm = enzyme::get<0>(rm);
  std::printf("with a vector %g %g %g %g %g %g | 1.5 1 7.5 4.5 6 9.75\n", dv[0], dv[1],
              enzyme::get<0>(gm), enzyme::get<1>(gm), enzyme::get<2>(gm), enzyme::get<1>(rm));
  void *tape = __enzyme_augmentfwd((void *)f3, enzyme_out, 1.5, enzyme_out, 0.8, enzyme_out, 0.6);
  D3 d = __enzyme_reverse((void *)f3, enzyme_out, 1.5, enzyme_out, 0.8, enzyme_out, 0.6, 1.0,
                          enzyme_tape, tape);
  std::printf("C reverse %g %g %g | 0.8 1.5 1.2\n", d.a, d.b, d.c);
  return 0;
}
