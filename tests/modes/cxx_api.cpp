#include <enzyme/enzyme>
#include <cstdio>
#include <cmath>
double f(double x, double y) { return x * x * std::sin(y); }
double g(const double *p, double s, int n) { double t = 0; for (int i = 0; i < n; i++) t += p[i] * p[i] * s; return t; }
int main() {
  auto r = enzyme::autodiff<enzyme::Reverse>(f, enzyme::Active<double>(1.5), enzyme::Active<double>(0.5));
  printf("%f %f | %f %f\n", enzyme::get<0>(enzyme::get<0>(r)), enzyme::get<1>(enzyme::get<0>(r)), 2*1.5*sin(0.5), 1.5*1.5*cos(0.5));
  double p[3] = {1, 2, 3}, dp[3] = {0};
  auto r2 = enzyme::autodiff<enzyme::ReverseWithPrimal>(g, enzyme::Duplicated<const double*>(p, dp), enzyme::Active<double>(2.0), enzyme::Const<int>(3));
  printf("ds %f primal %f dp %f %f %f | 14 28 4 8 12\n", enzyme::get<0>(enzyme::get<0>(r2)), enzyme::get<1>(r2), dp[0], dp[1], dp[2]);
  auto t = enzyme::autodiff<enzyme::Forward>(f, enzyme::Duplicated<double>(1.5, 1.0), enzyme::Const<double>(0.5));
  printf("%f | %f\n", enzyme::get<0>(t), 2*1.5*sin(0.5));
}
