/* Local arrays a helper only reads, overwritten by the caller before the reverse runs: a
   finite-element style gather of an element's corners into px/py/pz, a helper (not inlined)
   that reads them in a loop through a constant index table, and the next element's gather.
   The helper's split pair saves the arrays once and re-reads a copy in its reverse
   (ad/plan/restored_args.py). Also the cases where that would be wrong and must not happen: the
   same local array passed as the helper's read-only input and its output (the helper writes
   what it reads), and a local array whose address escapes into a record the helper writes
   through. Checked against central finite differences and forward mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define NE 5            /* elements */
#define NN (NE + 3)     /* nodes: element e uses nodes e .. e + 3 */

/* the tetrahedron-like helper: each "face" reads three corners through index tables */
__attribute__((noinline)) static double faces(const double *x, const double *y,
                                              const double *z, double *g) {
  static const int ta[4] = {1, 2, 3, 1}, tb[4] = {2, 3, 0, 3};
  double v = 0;
  for (int c = 0; c < 4; c++) g[c] = 0;
  for (int t = 0; t < 4; t++) {
    int a = ta[t], b = tb[t];
    double ax = x[a] - x[0], ay = y[a] - y[0], az = z[a] - z[0];
    double bx = x[b] - x[0], by = y[b] - y[0], bz = z[b] - z[0];
    double cr = ay * bz - az * by + az * bx - ax * bz + ax * by - ay * bx;
    v += sin(cr) * (1 + 0.1 * t);
    g[a] += cr * ax;
    g[b] -= cr * by;
  }
  return v;
}

double mesh(const double *xn, const double *yn, const double *zn) {
  double px[4], py[4], pz[4], g[4], s = 0;
  for (int e = 0; e < NE; e++) {
    for (int c = 0; c < 4; c++) {           /* the next element's gather overwrites them */
      px[c] = xn[e + c];
      py[c] = yn[e + c] * xn[e];
      pz[c] = zn[e + c] + 0.5 * c;
    }
    double v = faces(px, py, pz, g);
    for (int c = 0; c < 4; c++) s += v * g[c] * (1 + 0.01 * c);
  }
  return s;
}

/* the input array is also the output: the helper writes what it reads */
__attribute__((noinline)) static double smooth(const double *x, double *out) {
  double s = 0;
  for (int k = 0; k < 4; k++) {
    double v = x[k] * x[(k + 1) % 4];
    s += sin(v);
    out[(k + 2) % 4] = v + x[k];
  }
  return s;
}

double aliased(const double *xn, const double *yn, const double *zn) {
  double buf[4], s = 0;
  for (int e = 0; e < NE; e++) {
    for (int c = 0; c < 4; c++) buf[c] = xn[e + c] + yn[e] * zn[c];
    s += smooth(buf, buf);
    s += buf[0] * buf[3];
  }
  return s;
}

/* the local array's address escapes into a record the helper writes through */
struct sink { double *to; };
__attribute__((noinline)) static double through_record(const double *x, struct sink *k) {
  double s = 0;
  for (int j = 0; j < 4; j++) {
    s += x[j] * x[j] * (j + 1);
    k->to[(j + 1) % 4] = cos(x[j]);
  }
  return s;
}

double escaping(const double *xn, const double *yn, const double *zn) {
  double buf[4], s = 0;
  struct sink k = {buf};
  for (int e = 0; e < NE; e++) {
    for (int c = 0; c < 4; c++) buf[c] = xn[e + c] * zn[e] + yn[c];
    s += through_record(buf, &k);
  }
  return s;
}

typedef double (*fn3)(const double *, const double *, const double *);

static void test(const char *name, fn3 f) {
  double x[NN], y[NN], z[NN], dx[NN] = {0}, dy[NN] = {0}, dz[NN] = {0};
  for (int i = 0; i < NN; i++) {
    x[i] = 0.3 + 0.1 * i;
    y[i] = 0.7 - 0.05 * i * i;
    z[i] = 0.2 * sin(i + 1.0);
  }
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_dup, z, dz);
  double *in[3] = {x, y, z}, *d[3] = {dx, dy, dz};
  char label[64];
  double h = 1e-6, dot = 0;
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < NN; i++) {
      double keep = in[a][i];
      in[a][i] = keep + h;
      double up = f(x, y, z);
      in[a][i] = keep - h;
      double down = f(x, y, z);
      in[a][i] = keep;
      snprintf(label, sizeof label, "%s.d%c[%d]", name, "xyz"[a], i);
      check(label, d[a][i], (up - down) / (2 * h));
      dot += d[a][i] * (0.1 * (i + 1) + a);   /* <grad, v> with v below */
    }
  double v[3][NN];
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < NN; i++) v[a][i] = 0.1 * (i + 1) + a;
  double jv = __enzyme_fwddiff((void *)f, enzyme_dup, x, v[0], enzyme_dup, y, v[1],
                               enzyme_dup, z, v[2]);
  snprintf(label, sizeof label, "%s.forward=reverse", name);
  check(label, jv, dot);
}

int main(void) {
  test("mesh", mesh);
  test("aliased", aliased);
  test("escaping", escaping);
  return failed != 0;
}
