// Forward mode of functions that return a struct or class by value through a hidden pointer
// (sret): std::vector<double> (its tangent is a vector whose buffer the derivative allocates) and
// a plain 32-byte struct, through enzyme::autodiff and through the marker declared to return a
// struct. The tangents are checked against the analytic ones and against reverse mode (a
// dot-product test of a scalar wrapper).
#include <enzyme/enzyme>
#include <cmath>
#include <cstdio>
#include <vector>

static int failures = 0;
static void check(const char *name, double got, double want) {
  printf("%s %.12g | %.12g\n", name, got, want);
  if (!(std::fabs(got - want) <= 1e-9 * (1 + std::fabs(want)))) failures++;
}

// r = (u0 u1, sin(u1), u0^2 + 3) grown by push_back
std::vector<double> kern(const std::vector<double> &u) {
  std::vector<double> r;
  r.push_back(u[0] * u[1]);
  r.push_back(std::sin(u[1]));
  r.push_back(u[0] * u[0] + 3);
  return r;
}
std::vector<double> copy_of(const std::vector<double> &u) { return u; }
double weighted(const std::vector<double> &u, const std::vector<double> &w) {
  std::vector<double> r = kern(u);
  double s = 0;
  for (size_t i = 0; i < r.size(); i++) s += w[i] * r[i];
  return s;
}

struct Big { double a, b, c; int n; };                 // 32 bytes: returned through sret
Big make_big(const double *x) { return Big{x[0] * x[1], std::exp(x[0]), 2 * x[1], 7}; }
struct BigPair { Big primal, tangent; };
struct VecPair { std::vector<double> primal, tangent; };

int main() {
  std::vector<double> u{1.5, 0.7}, du{0.3, -0.4};
  double t[3] = {du[0] * u[1] + u[0] * du[1], std::cos(u[1]) * du[1], 2 * u[0] * du[0]};
  {  // DuplicatedNoNeed: the tangent vector alone
    auto d = enzyme::get<0>(enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<std::vector<double>>>(
        kern, enzyme::Duplicated<const std::vector<double> &>(u, du)));
    check("noneed_size", d.size(), 3);
    for (int i = 0; i < 3; i++) check("noneed_tangent", d[i], t[i]);
  }
  {  // Duplicated: {primal, tangent}
    auto r = enzyme::autodiff<enzyme::Forward, enzyme::Duplicated<std::vector<double>>>(
        kern, enzyme::Duplicated<const std::vector<double> &>(u, du));
    check("dup_primal0", enzyme::get<0>(r)[0], u[0] * u[1]);
    check("dup_primal2", enzyme::get<0>(r)[2], u[0] * u[0] + 3);
    for (int i = 0; i < 3; i++) check("dup_tangent", enzyme::get<1>(r)[i], t[i]);
  }
  {  // a copy: the tangent is the input's tangent
    auto r = enzyme::autodiff<enzyme::Forward, enzyme::Duplicated<std::vector<double>>>(
        copy_of, enzyme::Duplicated<const std::vector<double> &>(u, du));
    check("copy_primal", enzyme::get<0>(r)[1], u[1]);
    check("copy_tangent0", enzyme::get<1>(r)[0], du[0]);
    check("copy_tangent1", enzyme::get<1>(r)[1], du[1]);
    auto d = enzyme::get<0>(enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<std::vector<double>>>(
        copy_of, enzyme::Duplicated<const std::vector<double> &>(u, du)));
    check("copy_noneed", d[1], du[1]);
  }
  {  // ForwardWithPrimal: {tangent, primal}; Const: the primal alone
    auto r = enzyme::autodiff<enzyme::ForwardWithPrimal, enzyme::Duplicated<std::vector<double>>>(
        kern, enzyme::Duplicated<const std::vector<double> &>(u, du));
    check("fwp_tangent1", enzyme::get<0>(r)[1], t[1]);
    check("fwp_primal1", enzyme::get<1>(r)[1], std::sin(u[1]));
    auto p = enzyme::get<0>(enzyme::autodiff<enzyme::Forward, enzyme::Const<std::vector<double>>>(
        kern, enzyme::Duplicated<const std::vector<double> &>(u, du)));
    check("const_primal1", p[1], std::sin(u[1]));
  }
  {  // the marker declared to return a struct: {primal, tangent} of the vector
    VecPair r = __enzyme_fwddiff<VecPair>((void *)kern, &enzyme_dup_return, &enzyme_dup, &u, &du);
    check("marker_vec_primal0", r.primal[0], u[0] * u[1]);
    check("marker_vec_tangent1", r.tangent[1], t[1]);
  }
  {  // a plain struct: {primal, tangent}, the tangent alone, the primal alone
    double x[2] = {0.5, 1.25}, dx[2] = {1.0, 2.0};
    BigPair r = __enzyme_fwddiff<BigPair>((void *)make_big, &enzyme_dup_return, x, dx);
    check("big_primal_a", r.primal.a, x[0] * x[1]);
    check("big_primal_n", r.primal.n, 7);
    check("big_tangent_a", r.tangent.a, dx[0] * x[1] + x[0] * dx[1]);
    check("big_tangent_b", r.tangent.b, std::exp(x[0]) * dx[0]);
    check("big_tangent_c", r.tangent.c, 2 * dx[1]);
    Big d = __enzyme_fwddiff<Big>((void *)make_big, &enzyme_dup_return, &enzyme_noret, x, dx);
    check("big_noret_b", d.b, std::exp(x[0]) * dx[0]);
    // enzyme_noret alone: the tangent too (it returned the primal)
    Big e = __enzyme_fwddiff<Big>((void *)make_big, &enzyme_noret, x, dx);
    check("big_noret_alone_a", e.a, dx[0] * x[1] + x[0] * dx[1]);
    check("big_noret_alone_c", e.c, 2 * dx[1]);
    Big p = __enzyme_fwddiff<Big>((void *)make_big, &enzyme_const_return, x, dx);
    check("big_const_c", p.c, 2 * x[1]);
  }
  {  // forward against reverse: <w, J du> = <grad_u (w . kern(u)), du>
    std::vector<double> w{0.9, -1.1, 0.6}, dw{0, 0, 0}, gu{0, 0};
    __enzyme_autodiff<void>((void *)weighted, &enzyme_dup, &u, &gu, &enzyme_const, &w);
    auto d = enzyme::get<0>(enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<std::vector<double>>>(
        kern, enzyme::Duplicated<const std::vector<double> &>(u, du)));
    printf("Jv %.12g  <g,v> %.12g\n", w[0] * d[0] + w[1] * d[1] + w[2] * d[2], gu[0] * du[0] + gu[1] * du[1]);
  }
  return failures != 0;
}
