// A charged particle thrown through a field (explicit Euler), its acceleration taken as the
// gradient of a potential by an inner __enzyme_autodiff / __enzyme_fwddiff inside the time loop,
// and the outer derivative of the landing point's square with respect to a charge position in
// all four nestings (rr, fr, rf, ff), each called several times and checked against central
// differences of the objective. The inner derivatives' tapes (and their helpers) used to be
// differentiated: "cannot deduce the type of the data realloc moves".
#include <cmath>
#include <cstdio>
#include <vector>

extern "C" {
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
}
int enzyme_const, enzyme_dup, enzyme_dupnoneed;

struct Vec2 {
  double x, y;
};
static Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
static Vec2 operator*(double s, Vec2 a) { return {s * a.x, s * a.y}; }

static double potential(const std::vector<Vec2> &sources, Vec2 at) {
  double sum = 0;
  for (const Vec2 &s : sources) sum += 1 / std::sqrt((s.x - at.x) * (s.x - at.x) + (s.y - at.y) * (s.y - at.y));
  return sum;
}
static void potential_at(const std::vector<Vec2> *sources, const Vec2 *at, double *out) {
  *out = potential(*sources, *at);
}

template <bool Forward> static double landing(double w) {
  std::vector<Vec2> sources = {{10.0, 10.0 - w}, {10.0, 0.0}};
  Vec2 pos = {0.0, 8.0}, vel = {0.75, 0.0};
  const double dt = 0.1;
  for (;;) {
    Vec2 acc = {0, 0};
    double value, seed = 1;
    if (Forward) {
      Vec2 ex = {1, 0}, ey = {0, 1};
      __enzyme_fwddiff((void *)potential_at, enzyme_const, &sources, enzyme_dup, &pos, &ex,
                       enzyme_dupnoneed, &value, &acc.x);
      __enzyme_fwddiff((void *)potential_at, enzyme_const, &sources, enzyme_dup, &pos, &ey,
                       enzyme_dupnoneed, &value, &acc.y);
    } else {
      __enzyme_autodiff((void *)potential_at, enzyme_const, &sources, enzyme_dup, &pos, &acc,
                        enzyme_dupnoneed, &value, &seed);
    }
    acc = -1.0 * acc;
    pos = pos + dt * vel;
    if (pos.y <= 0) {
      double t = -pos.y / vel.y;
      Vec2 hit = pos + t * vel;
      return hit.x * hit.x;
    }
    vel = vel + dt * acc;
  }
}

template <bool Forward> static void objective(const double *w, double *out) { *out = landing<Forward>(*w); }

template <bool Forward> static double outer_reverse(double w) {
  double dw = 0, out, seed = 1;
  __enzyme_autodiff((void *)objective<Forward>, enzyme_dup, &w, &dw, enzyme_dupnoneed, &out, &seed);
  return dw;
}
template <bool Forward> static double outer_forward(double w) {
  double one = 1, out, dout = 0;
  __enzyme_fwddiff((void *)objective<Forward>, enzyme_dup, &w, &one, enzyme_dupnoneed, &out, &dout);
  return dout;
}

int main() {
  for (int call = 0; call < 3; call++) {
    double w = 0.3 + 0.05 * call, h = 1e-6;
    double fd = (landing<false>(w + h) - landing<false>(w - h)) / (2 * h);
    printf("call %d rr %.9g | %.9g\n", call, outer_reverse<false>(w), fd);
    printf("call %d fr %.9g | %.9g\n", call, outer_forward<false>(w), fd);
    printf("call %d rf %.9g | %.9g\n", call, outer_reverse<true>(w), fd);
    printf("call %d ff %.9g | %.9g\n", call, outer_forward<true>(w), fd);
  }
  return 0;
}
