// enzyme-cc's C++ interface: reference activities, explicit return activities, function objects and
// the tuple helpers, each checked against the analytic derivative ("name got | expected").
#include <enzyme/enzyme>
#include <cmath>
#include <cstdio>
#include <vector>

static int failures = 0;
static void check(const char *name, double got, double want) {
  printf("%s %.9g | %.9g\n", name, got, want);
  if (!(std::fabs(got - want) <= 1e-9 * (1 + std::fabs(want)))) failures++;
}

double vsum(const std::vector<double> &v) { double s = 0; for (double x : v) s += x * x; return s; }
double cube(const double &x) { return x * x * x; }
void square_into(double &out, double x) { out = x * x; }
struct P { double a, b, c; };
double pprod(const P &p) { return p.a * p.b + std::sin(p.c); }
double pval(P p) { return p.a * p.b * p.c; }          // a struct by value, in memory (byval)
double ysq(double *y, const double *x) { y[0] = x[0] * x[0]; return 3 * x[0]; }
double sq(double x) { return x * x; }
float sqf(float x) { return x * x; }
double mul(double x, double y) { return x * y; }
void scale(double *y, double x) { y[0] = x * x * x; }
struct D2 { double x, y; };           // passed by value in two registers
double d2val(D2 p, double s);
double d2scaled(P p, double s);
struct F2 { float u, v; };            // in one (a <2 x float>)
struct DI { double w; int n; };       // a double and an integer
double d2f(D2 p) { return p.x * p.x * p.y; }
double d2two(double s, D2 p, const D2 q) { return s * p.x * q.y + p.y; }
float f2f(F2 p) { return p.u * p.u * p.v; }
double dif(DI p) { return p.w * p.w * p.n; }
D2 d2scale(D2 p, double s) { return D2{s * p.x, s * s * p.y}; }
struct overload {
  double operator()(double x) { return 10 * x; }
  float operator()(float x) { return 2 * x; }
};

int main() {
  // 1. references pass the addresses of the object and its shadow
  std::vector<double> v{1, 2, 3}, dv(3, 0.0), dv2(3, 0.0), tv{1, 0.5, 0.25};
  enzyme::autodiff<enzyme::Reverse>(vsum, enzyme::DuplicatedNoNeed<const std::vector<double> &>(v, dv));
  enzyme::autodiff<enzyme::Reverse>(vsum, enzyme::Duplicated<const std::vector<double> &>(v, dv2));
  for (int i = 0; i < 3; i++) { check("vec_dupnoneed", dv[i], 2 * v[i]); check("vec_dup", dv2[i], 2 * v[i]); }
  check("vec_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(vsum, enzyme::Duplicated<const std::vector<double> &>(v, tv))),
        2 * (1 * 1 + 2 * 0.5 + 3 * 0.25));
  // 2. scalars and structs by reference, both modes
  double x = 1.5, dx = 0;
  enzyme::autodiff<enzyme::Reverse>(cube, enzyme::Duplicated<const double &>(x, dx));
  check("ref_scalar_rev", dx, 3 * x * x);
  double tx = 2;
  check("ref_scalar_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(cube, enzyme::DuplicatedNoNeed<const double &>(x, tx))),
        2 * 3 * x * x);
  double out = 0, dout = 1;
  auto r_out = enzyme::autodiff<enzyme::Reverse>(square_into, enzyme::Duplicated<double &>(out, dout), enzyme::Active<double>(x));
  check("ref_out_rev", enzyme::get<0>(enzyme::get<0>(r_out)), 2 * x);
  double tout = 0;
  enzyme::autodiff<enzyme::Forward>(square_into, enzyme::DuplicatedNoNeed<double &>(out, tout), enzyme::Duplicated<double>(x, 1.0));
  check("ref_out_fwd", tout, 2 * x);
  P p{2, 3, 0.5}, dp{0, 0, 0}, tp{1, 2, 3};
  enzyme::autodiff<enzyme::Reverse>(pprod, enzyme::DuplicatedNoNeed<const P &>(p, dp));
  check("struct_rev_a", dp.a, p.b); check("struct_rev_b", dp.b, p.a); check("struct_rev_c", dp.c, std::cos(p.c));
  check("struct_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(pprod, enzyme::Duplicated<const P &>(p, tp))),
        tp.a * p.b + p.a * tp.b + tp.c * std::cos(p.c));
  // 3. explicit return activities
  auto ra = enzyme::autodiff<enzyme::Reverse, enzyme::Active<double>>(sq, enzyme::Active<double>(3.0));
  check("ret_active", enzyme::get<0>(enzyme::get<0>(ra)), 6);
  double y = 0, dy = 1, xx = 2, dxx = 0;
  enzyme::autodiff<enzyme::Reverse, enzyme::Const<double>>(ysq, enzyme::Duplicated<double *>(&y, &dy),
                                                           enzyme::Duplicated<const double *>(&xx, &dxx));
  check("ret_const_rev", dxx, 2 * xx);          // the result (3x) is not seeded
  dy = 1; dxx = 0;
  enzyme::autodiff<enzyme::Reverse>(ysq, enzyme::Duplicated<double *>(&y, &dy), enzyme::Duplicated<const double *>(&xx, &dxx));
  check("ret_active_rev", dxx, 2 * xx + 3);
  auto rp = enzyme::autodiff<enzyme::ReverseWithPrimal, enzyme::Active<double>>(sq, enzyme::Active<double>(3.0));
  check("rwp_deriv", enzyme::get<0>(enzyme::get<0>(rp)), 6); check("rwp_primal", enzyme::get<1>(rp), 9);
  auto rp2 = enzyme::autodiff<enzyme::ReverseWithPrimal>(mul, enzyme::Active<double>(3.0), enzyme::Const<double>(4.0));
  check("rwp2_deriv", enzyme::get<0>(enzyme::get<0>(rp2)), 4); check("rwp2_primal", enzyme::get<1>(rp2), 12);
  dy = 1; dxx = 0;
  auto rp3 = enzyme::autodiff<enzyme::ReverseWithPrimal, enzyme::Const<double>>(ysq, enzyme::Duplicated<double *>(&y, &dy),
                                                                                enzyme::Duplicated<const double *>(&xx, &dxx));
  check("rwp_const_deriv", dxx, 2 * xx); check("rwp_const_primal", enzyme::get<1>(rp3), 3 * xx);
  double sy = 0, dsy = 1;
  auto rv = enzyme::autodiff<enzyme::ReverseWithPrimal>(scale, enzyme::Duplicated<double *>(&sy, &dsy), enzyme::Active<double>(2.0));
  check("rwp_void", enzyme::get<0>(enzyme::get<0>(rv)), 12);
  enzyme::tuple<double, double> fd = enzyme::autodiff<enzyme::Forward, enzyme::Duplicated<double>>(sq, enzyme::Duplicated<double>(3.1, 1.0));
  check("fwd_dup_primal", enzyme::get<0>(fd), 3.1 * 3.1); check("fwd_dup_tangent", enzyme::get<1>(fd), 6.2);
  enzyme::tuple<double> fn = enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<double>>(sq, enzyme::Duplicated<double>(3.1, 1.0));
  check("fwd_dupnoneed", enzyme::get<0>(fn), 6.2);
  enzyme::tuple<double> fc = enzyme::autodiff<enzyme::Forward, enzyme::Const<double>>(sq, enzyme::Duplicated<double>(3.1, 1.0));
  check("fwd_const", enzyme::get<0>(fc), 3.1 * 3.1);
  auto fwp = enzyme::autodiff<enzyme::ForwardWithPrimal>(mul, enzyme::Duplicated<double>(3.0, 1.0), enzyme::Const<double>(5.0));
  check("fwp_tangent", enzyme::get<0>(fwp), 5); check("fwp_primal", enzyme::get<1>(fwp), 15);
  auto ff = enzyme::autodiff<enzyme::Forward>(sqf, enzyme::Duplicated<float>(2.0f, 1.0f));
  check("fwd_float", enzyme::get<0>(ff), 4);
  double fy = 0, tfy = 0;
  enzyme::autodiff<enzyme::Forward>(scale, enzyme::Duplicated<double *>(&fy, &tfy), enzyme::Duplicated<double>(2.0, 1.0));
  check("fwd_void", tfy, 12);
  // 4. function objects, CTAD, tuple helpers
  check("functor_d", enzyme::get<0>(enzyme::get<0>(enzyme::autodiff<enzyme::Reverse>(overload{}, enzyme::Active<double>(3.1)))), 10);
  check("functor_f", enzyme::get<0>(enzyme::get<0>(enzyme::autodiff<enzyme::Reverse>(overload{}, enzyme::Active<float>(3.1f)))), 2);
  double k = 2.5;
  auto lam = [&k](double t) { return k * t * t; };
  check("lambda_rev", enzyme::get<0>(enzyme::get<0>(enzyme::autodiff<enzyme::Reverse>(lam, enzyme::Active(2.0)))), 2 * k * 2);
  check("lambda_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(lam, enzyme::Duplicated(2.0, 1.0))), 2 * k * 2);
  auto [d1, d2] = enzyme::get<0>(enzyme::autodiff<enzyme::Reverse>(mul, enzyme::Active<double>(3.0), enzyme::Active<double>(7.0)));
  check("bind_d1", d1, 7); check("bind_d2", d2, 3);
  auto md = enzyme::autodiff(enzyme::Reverse{}, mul, enzyme::Active<double>(3.0), enzyme::Active<double>(7.0));
  check("mode_value", enzyme::get<1>(enzyme::get<0>(md)), 3);
  auto cat = enzyme::tuple_cat(enzyme::tuple<int, double>{1, 2.5}, enzyme::tuple{4.0f});
  check("tuple_cat", enzyme::get<1>(cat) + enzyme::get<2>(cat) + enzyme::get<0>(cat) + enzyme::tuple_size_v<decltype(cat)>, 10.5);
  check("primal_call", enzyme::primal_call(mul, enzyme::Active<double>(3.0), enzyme::Const<double>(2.0)), 6);
  check("primal_call_ref", enzyme::primal_call(cube, enzyme::Duplicated<const double &>(x, dx)), x * x * x);
  // 5. small structs passed by value (split into registers by the ABI): the derivative is taken of
  // a wrapper that receives them by address
  D2 a{2, 3}, ta{70, 110};
  check("byval_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(d2f, enzyme::Duplicated<D2>(a, ta))),
        2 * a.x * a.y * ta.x + a.x * a.x * ta.y);
  check("byval_fwd_ctad", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(d2f, enzyme::Duplicated{D2{2, 3}, D2{0, 1}})),
        a.x * a.x);
  auto bt = enzyme::autodiff<enzyme::Forward>(d2two, enzyme::Duplicated<double>(1.5, 1.0), enzyme::DuplicatedNoNeed<D2>(a, ta),
                                              enzyme::Const<D2>(D2{4, 5}));
  check("byval_fwd_mixed", enzyme::get<0>(bt), 1.0 * a.x * 5 + 1.5 * ta.x * 5 + ta.y);
  auto br = enzyme::autodiff<enzyme::Reverse>(d2two, enzyme::Active<double>(1.5), enzyme::Const<D2>(a), enzyme::Const<D2>(D2{4, 5}));
  check("byval_const_rev", enzyme::get<0>(enzyme::get<0>(br)), a.x * 5);
  check("byval_float_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(f2f, enzyme::Duplicated<F2>(F2{2, 3}, F2{1, 0.5f}))),
        2 * 2 * 3 * 1 + 2 * 2 * 0.5);
  check("byval_int_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(dif, enzyme::Duplicated<DI>(DI{1.5, 3}, DI{1, 0}))),
        2 * 1.5 * 3);
  auto lam2 = [&k](D2 p) { return k * p.x * p.y; };
  check("byval_lambda_fwd", enzyme::get<0>(enzyme::autodiff<enzyme::Forward>(lam2, enzyme::Duplicated<D2>(a, ta))),
        k * (ta.x * a.y + a.x * ta.y));
  D2 st = enzyme::get<0>(enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<D2>>(d2scale, enzyme::Duplicated<D2>(a, ta), enzyme::Duplicated<double>(2.0, 1.0)));
  check("byval_struct_result_x", st.x, 2.0 * ta.x + 1.0 * a.x);
  check("byval_struct_result_y", st.y, 4.0 * ta.y + 4.0 * a.y);
  // 9. Duplicated<T&> for a struct the function takes by value or as `const T&` (the hint of
  // Active<T> for structs; the function was cast to the wrappers' signature and did not compile)
  {
    P q{1, 2, 3}, dq{0, 0, 0}, dq2{0, 0, 0};
    enzyme::autodiff<enzyme::Reverse>(pval, enzyme::Duplicated<P &>(q, dq));
    check("byval_struct_da", dq.a, 6);
    check("byval_struct_dc", dq.c, 2);
    enzyme::autodiff<enzyme::Reverse>(pprod, enzyme::Duplicated<P &>(q, dq2));
    check("const_ref_struct_dc", dq2.c, std::cos(3.0));
    D2 r{1, 2}, dr{0, 0};
    auto ds = enzyme::autodiff<enzyme::Reverse>(d2val, enzyme::Duplicated<D2 &>(r, dr),
                                               enzyme::Active<double>(2.0));
    check("byval_regs_dx", dr.x, 2 * 2.0 * 1 + 0);
    check("byval_regs_dy", dr.y, 3 * 2.0);
    check("byval_regs_ds", enzyme::get<0>(enzyme::get<0>(ds)), 1 + 3 * 2);
  }
  // 10. forward mode with a struct of more than 16 bytes by value (in memory), Duplicated and
  // Const: through the wrapper taking it by address, as for the small ones (a link error before)
  {
    P q{1, 2, 3}, v{1, 0, 1};
    auto t = enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<double>>(
        pval, enzyme::Duplicated<P>(q, v));
    check("byval_memory_forward", enzyme::get<0>(t), 2 * 3 + 1 * 2 * 1);
    auto g = enzyme::autodiff<enzyme::Reverse>(d2scaled, enzyme::Const<P>(q),
                                              enzyme::Active<double>(2.0));
    check("byval_memory_const", enzyme::get<0>(enzyme::get<0>(g)), 2 * 2.0 * 1 * 2 * 3);
  }
  return failures != 0;
}
double d2val(D2 p, double s) { return s * (p.x * p.x + 3 * p.y); }
double d2scaled(P p, double s) { return s * s * p.a * p.b * p.c; }
