/* Copies of structs whose layout only the declared type gives: mixed double/int/pointer/float
   fields, an array inside the struct (clang's !tbaa.struct calls it char), nested structs, an
   array of structs, a union whose IR type is its double member; copied by value, by
   assignment, by memcpy and by a swap helper that is not inlined (its parameters carry no
   type: the swap's temporary does). Reverse mode against central differences, forward mode
   against reverse (the dot-product test). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double a; int k; double *p; float w; double v[2]; } S;
typedef struct { float x, y; int id; float z; } P;
typedef union { double d; long long bits; } U;
typedef struct { S s; P q[2]; U u; } Nest;
enum { N = 3 };

__attribute__((noinline)) static void swap_s(S *a, S *b) { S t = *a; *a = *b; *b = t; }
__attribute__((noinline)) static S pick(const S *s, int i) { return s[i]; }

double f(S *s, P *q, Nest *nn, int n) {
  S *w = malloc(n * sizeof(S));
  P *wq = malloc(n * sizeof(P));
  for (int i = 0; i < n; i++) { w[i] = s[(i + 1) % n]; memcpy(&wq[i], &q[i], sizeof(P)); }
  swap_s(&w[0], &w[n - 1]);
  P tmp = wq[0]; wq[0] = wq[1]; wq[1] = tmp;
  Nest m = *nn;
  m.q[0] = wq[1];
  double r = 0;
  for (int i = 0; i < n; i++) {
    S t = pick(w, i);
    r += t.a * t.v[1] * (i + 1) + t.w * t.v[0] + *t.p * t.a + (double)wq[i].x * wq[i].z * (i + 2) +
         wq[i].y * t.a;
  }
  r += m.s.a * m.q[0].x + (double)m.q[1].z * m.s.v[1] + m.u.d * m.s.v[0];
  free(w);
  free(wq);
  return r;
}

/* a copy between two elements of a heap array of structs, typed by the copy into the first */
typedef struct { double x; float w; double y; } T;
double heap_copy(T *s) {
  T *b = malloc(2 * sizeof(T));
  b[0] = s[0];
  b[1] = b[0];
  double r = b[1].x * b[0].y + (double)b[1].w * b[0].x;
  free(b);
  return r;
}

static S s[N], ds[N], ts[N];
static P q[N], dq[N], tq[N];
static Nest nn, dn, tn;
static double pv[N], dpv[N], tpv[N];

int main(void) {
  for (int i = 0; i < N; i++) {
    pv[i] = 0.7 + 0.2 * i;
    s[i] = (S){0.1 + i, i + 1, &pv[i], 0.5f * i + 0.25f, {0.2 * i + 0.1, 0.3 + i}};
    ds[i].p = &dpv[i];
    q[i] = (P){0.5f + i, 1.5f - i, i, 0.25f * i + 1};
  }
  nn.s = s[1];
  nn.s.p = &pv[0];
  nn.q[0] = q[0];
  nn.q[1] = q[2];
  nn.u.d = 1.25;
  dn.s.p = &dpv[0];
  __enzyme_autodiff((void *)f, enzyme_dup, s, ds, enzyme_dup, q, dq, enzyme_dup, &nn, &dn,
                    enzyme_const, N);
  /* central differences, one input at a time (float fields: a step of 1/64, exact in float) */
#define FD(name, i, var, grad, h)                                                          \
  {                                                                                        \
    double o = var, a, b;                                                                  \
    var = o + h; a = f(s, q, &nn, N);                                                      \
    var = o - h; b = f(s, q, &nn, N);                                                      \
    var = o;                                                                               \
    check(name, i, grad, (a - b) / (2 * (h)), 1e-6);                                       \
  }
  for (int i = 0; i < N; i++) {
    FD("s.a", i, s[i].a, ds[i].a, 1e-6)
    FD("s.v0", i, s[i].v[0], ds[i].v[0], 1e-6)
    FD("s.v1", i, s[i].v[1], ds[i].v[1], 1e-6)
    FD("s.w", i, s[i].w, ds[i].w, 1.0 / 64)
    FD("pv", i, pv[i], dpv[i], 1e-6)
    FD("q.x", i, q[i].x, dq[i].x, 1.0 / 64)
    FD("q.y", i, q[i].y, dq[i].y, 1.0 / 64)
    FD("q.z", i, q[i].z, dq[i].z, 1.0 / 64)
  }
  FD("nn.s.a", 0, nn.s.a, dn.s.a, 1e-6)
  FD("nn.s.v1", 0, nn.s.v[1], dn.s.v[1], 1e-6)
  FD("nn.q0.x", 0, nn.q[0].x, dn.q[0].x, 1.0 / 64)
  FD("nn.q1.z", 0, nn.q[1].z, dn.q[1].z, 1.0 / 64)
  FD("nn.u.d", 0, nn.u.d, dn.u.d, 1e-6)
  /* forward mode along a direction t: J t == <grad, t> */
  double dot = 0;
  for (int i = 0; i < N; i++) {
    ts[i].a = sin(i + 1.0); ts[i].v[0] = cos(i + 2.0); ts[i].v[1] = sin(2.0 * i);
    ts[i].w = (float)cos(3.0 * i); ts[i].p = &tpv[i]; tpv[i] = sin(5.0 + i);
    tq[i].x = (float)sin(7.0 * i); tq[i].y = (float)cos(i + 0.5); tq[i].z = (float)sin(i + 0.7);
    dot += ts[i].a * ds[i].a + ts[i].v[0] * ds[i].v[0] + ts[i].v[1] * ds[i].v[1] +
           ts[i].w * ds[i].w + tpv[i] * dpv[i] + tq[i].x * dq[i].x + tq[i].y * dq[i].y +
           tq[i].z * dq[i].z;
  }
  tn.s.a = 0.3; tn.s.v[1] = -0.4; tn.q[0].x = 0.6f; tn.q[1].z = -0.2f; tn.u.d = 0.9;
  tn.s.p = &tpv[0];
  dot += tn.s.a * dn.s.a + tn.s.v[1] * dn.s.v[1] + tn.q[0].x * dn.q[0].x +
         tn.q[1].z * dn.q[1].z + tn.u.d * dn.u.d;
  /* (nn.s.p is &pv[0]: its tangent tpv[0] already counted through s[0].p) */
  double jt = __enzyme_fwddiff((void *)f, enzyme_dup, s, ts, enzyme_dup, q, tq, enzyme_dup, &nn,
                               &tn, enzyme_const, N);
  check("forward.dot", 0, jt, dot, 1e-6);   /* float fields: float rounding */
  T t = {1.5, 0.5f, 2.5}, dt = {0, 0, 0}, tt = {0.25, -0.5f, 0.75};
  __enzyme_autodiff((void *)heap_copy, enzyme_dup, &t, &dt);
  check("heap_copy.x", 0, dt.x, 2.5 + 0.5, 1e-12);
  check("heap_copy.w", 0, dt.w, 1.5, 1e-12);
  check("heap_copy.y", 0, dt.y, 1.5, 1e-12);
  check("heap_copy.forward", 0, __enzyme_fwddiff((void *)heap_copy, enzyme_dup, &t, &tt),
        tt.x * dt.x + tt.w * dt.w + tt.y * dt.y, 1e-12);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
