/* Halo-exchange buffers kept in a struct (`char *send, *recv` fields, malloc'd once and reused):
   one exchange packs records {int id, int type, double r[3]}, the next plain doubles, each
   copied send -> recv by run-time length and unpacked. The `char *` fields are byte buffers,
   not characters: unoptimized code typed the copy as characters from the field's `char *`
   type (every adjoint silently 0); it is refused there now, and optimized code gets every
   adjoint through. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { int id, type; double r[3]; } Atom;
typedef struct { char *send, *recv; } Halo;
enum { N = 12 };
static volatile int count = N;

static int load(Halo *h, int atoms, const double *v, int n) {
  if (atoms) {
    Atom *a = (Atom *)h->send;
    for (int i = 0; i < n; i++) {
      a[i].id = i; a[i].type = 2; a[i].r[0] = v[i]; a[i].r[1] = 2 * v[i]; a[i].r[2] = 0;
    }
    return n * (int)sizeof(Atom);
  }
  double *d = (double *)h->send;
  for (int i = 0; i < n; i++) d[i] = v[i];
  return n * (int)sizeof(double);
}
static void unload(Halo *h, int atoms, double *out, int len) {
  if (atoms) {
    Atom *a = (Atom *)h->recv;
    for (int i = 0; i < len / (int)sizeof(Atom); i++) out[a[i].id] = a[i].r[0] + a[i].r[1];
  } else {
    double *d = (double *)h->recv;
    for (int i = 0; i < len / (int)sizeof(double); i++) out[i] = d[i];
  }
}
static void exchange(Halo *h, int atoms, const double *v, double *out) {
  int len = load(h, atoms, v, count);
  memcpy(h->recv, h->send, len);
  unload(h, atoms, out, len);
}

/* v = x^2; the first exchange's layout by `atoms`, the second's the other one */
double halo(const double *x, double *v, double *out, Halo *h, int atoms) {
  for (int i = 0; i < N; i++) v[i] = x[i] * x[i];
  exchange(h, atoms, v, out);
  exchange(h, !atoms, v, out + N);
  double s = 0;
  for (int i = 0; i < 2 * N; i++) s += (i + 1) * out[i];
  return s;
}

int main(void) {
  Halo h = {malloc(N * sizeof(Atom)), malloc(N * sizeof(Atom))};
  Halo dh = {calloc(N, sizeof(Atom)), calloc(N, sizeof(Atom))};
  char name[32];
  for (int atoms = 0; atoms < 2; atoms++) {
    double x[N], dx[N] = {0}, v[N], dv[N] = {0}, out[2 * N], dout[2 * N] = {0}, t[N];
    for (int i = 0; i < N; i++) { x[i] = 0.5 + 0.1 * i; t[i] = rnd(i); }
    /* (the buffers' shadows start at zero, as any shadow does) */
    memset(dh.send, 0, N * sizeof(Atom)); memset(dh.recv, 0, N * sizeof(Atom));
    __enzyme_autodiff((void *)halo, enzyme_dup, x, dx, enzyme_dup, v, dv, enzyme_dup, out, dout,
                      enzyme_dup, &h, &dh, enzyme_const, atoms);
    double jt = 0;
    for (int i = 0; i < N; i++) {
      /* the records' exchange gives 3 v_i, the doubles' v_i, at weights i + 1 or N + i + 1 */
      double w_rec = 3.0 * (i + 1 + (atoms ? 0 : N)), w_dbl = i + 1 + (atoms ? N : 0);
      snprintf(name, sizeof name, "%s_dx[%d]", atoms ? "records_first" : "doubles_first", i);
      check(name, dx[i], 2 * x[i] * (w_rec + w_dbl));
      jt += dx[i] * t[i];
    }
    memset(dv, 0, sizeof dv); memset(dout, 0, sizeof dout);
    memset(dh.send, 0, N * sizeof(Atom)); memset(dh.recv, 0, N * sizeof(Atom));
    double jv = __enzyme_fwddiff((void *)halo, enzyme_dup, x, t, enzyme_dup, v, dv, enzyme_dup,
                                 out, dout, enzyme_dup, &h, &dh, enzyme_const, atoms);
    check(atoms ? "records_first_forward_dot" : "doubles_first_forward_dot", jv, jt);
  }
  free(h.send); free(h.recv); free(dh.send); free(dh.recv);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
