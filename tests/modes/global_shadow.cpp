// Shadows of globals through Enzyme's C++ interface: enzyme::context, enzyme::shadow,
// enzyme::autodiff<Mode>(ctx, f, args...).
#include <cstdio>
#include <vector>
#include <enzyme/enzyme>

double scale = 2.0;
struct Params {
  static double offset;
};
double Params::offset = 1.0;
double table[4] = {1.0, 2.0, 3.0, 4.0};

double f(double x) { return scale * x * x + Params::offset * x; }
double weighted(const std::vector<double> &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) s += table[i] * v[i] * v[i];
  return s;
}

// the global reaches enzyme::shadow by reference through functions that are not inlined: its
// shadow is found from what their callers pass
__attribute__((noinline)) static double *shadow_of(enzyme::context &c, double &g) { return enzyme::shadow(c, g); }
template <class T> __attribute__((noinline)) static T *shadow_via(enzyme::context &c, T &g) {
  return shadow_of(c, g);
}

static void show(const char *what, double got, double want) { std::printf("%-30s %.12g | %.12g\n", what, got, want); }

int main() {
  auto ctx = enzyme::context();
  double *dscale = enzyme::shadow(ctx, scale);
  double *doffset = enzyme::shadow(ctx, Params::offset);
  *dscale = 0.0;
  *doffset = 0.0;
  auto r = enzyme::autodiff<enzyme::Reverse>(ctx, f, enzyme::Active(3.0));
  show("reverse: df/dx", enzyme::get<0>(enzyme::get<0>(r)), 2 * 2.0 * 3.0 + 1.0);
  show("reverse: df/dscale", *dscale, 9.0);
  show("reverse: df/doffset", *doffset, 3.0);

  *dscale = 1.0;
  *doffset = 0.0;
  auto t = enzyme::autodiff<enzyme::Forward>(ctx, f, enzyme::Duplicated<double>(3.0, 0.0));
  show("forward: dscale=1", enzyme::get<0>(t), 9.0);
  auto tp = enzyme::autodiff<enzyme::Forward, enzyme::Duplicated<double>>(ctx, f, enzyme::Duplicated<double>(3.0, 1.0));
  show("forward+primal: primal", enzyme::get<0>(tp), 2.0 * 9.0 + 3.0);
  show("forward+primal: tangent", enzyme::get<1>(tp), 9.0 + 2 * 2.0 * 3.0 + 1.0);

  enzyme::context other;
  auto r2 = enzyme::autodiff<enzyme::Reverse>(other, f, enzyme::Active(3.0));
  show("other: df/dx", enzyme::get<0>(enzyme::get<0>(r2)), 13.0);
  show("other: df/dscale", *enzyme::shadow(other, scale), 9.0);
  show("first context unchanged", *dscale, 1.0);

  // repeated gradients of a function of a vector and a global array, zeroed in between
  std::vector<double> v = {1.0, -2.0, 0.5}, dv(3);
  double *dtable = enzyme::shadow(other, table[0]);
  for (int rep = 1; rep <= 2; rep++) {
    enzyme::zero_shadows(other);
    for (double &d : dv) d = 0.0;
    enzyme::autodiff<enzyme::Reverse>(other, weighted, enzyme::Duplicated<const std::vector<double> &>(v, dv));
    show("vector: d/dv[1]", dv[1], 2 * 2.0 * -2.0);
    show("vector: d/dtable[1]", dtable[1], 4.0);
    show("vector: d/dtable[3] (unused)", dtable[3], 0.0);
  }

  // by reference, through non-inlined helpers called with two different globals
  enzyme::context third;
  double &scale_ref = scale;
  double *rs = shadow_via(third, scale_ref), *ro = shadow_of(third, Params::offset);
  *rs = 0.5;
  *ro = 0.0;
  auto t3 = enzyme::autodiff<enzyme::Forward>(third, f, enzyme::Duplicated<double>(3.0, 0.0));
  show("by reference: forward", enzyme::get<0>(t3), 0.5 * 9.0);
  *rs = 0.0;
  auto r3 = enzyme::autodiff<enzyme::Reverse>(third, f, enzyme::Active(2.0));
  show("by reference: df/dx", enzyme::get<0>(enzyme::get<0>(r3)), 2 * 2.0 * 2.0 + 1.0);
  show("by reference: df/dscale", *rs, 4.0);
  show("by reference: df/doffset", *ro, 2.0);
  show("by reference: same shadow", *shadow_of(third, scale), 4.0);
  return 0;
}
