/* One message buffer laid out two ways (a molecular dynamics code's halo exchange): one branch
   packs records {int id, int type, double r[3], p[3]}, the other plain doubles; the buffer is
   copied to a receive buffer and unpacked by the same branch. Every double's adjoint must
   cross the copy whichever layout the run takes (the doubles' copy was typed by the records:
   the adjoints at each record's integer bytes were lost). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-8 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { int id; int type; double r[3], p[3]; } AtomMsg;
enum { N = 16 };

static int pack_atoms(const double *v, char *cbuf) {
  AtomMsg *buf = (AtomMsg *)cbuf;
  for (int i = 0; i < N; i++) {
    buf[i].id = N - 1 - i;
    buf[i].type = 1;
    for (int c = 0; c < 3; c++) { buf[i].r[c] = v[N - 1 - i]; buf[i].p[c] = 0; }
  }
  return N * (int)sizeof(AtomMsg);
}
static void unpack_atoms(double *h, int len, const char *cbuf) {
  const AtomMsg *buf = (const AtomMsg *)cbuf;
  for (int i = 0; i < len / (int)sizeof(AtomMsg); i++) h[buf[i].id] = buf[i].r[1];
}
static int pack_scalars(const double *v, char *cbuf) {
  double *buf = (double *)cbuf;
  for (int i = 0; i < N; i++) buf[i] = v[i];
  return N * (int)sizeof(double);
}
static void unpack_scalars(double *h, int len, const char *cbuf) {
  const double *buf = (const double *)cbuf;
  for (int i = 0; i < len / (int)sizeof(double); i++) h[i] = buf[i];
}
static int send_receive(const char *send, int len, char *recv) {
  memcpy(recv, send, len);
  return len;
}
static void exchange(int atoms, const double *v, double *h) {
  char *send = malloc(N * sizeof(AtomMsg)), *recv = malloc(N * sizeof(AtomMsg));
  int len = atoms ? pack_atoms(v, send) : pack_scalars(v, send);
  len = send_receive(send, len, recv);
  if (atoms) unpack_atoms(h, len, recv); else unpack_scalars(h, len, recv);
  free(send);
  free(recv);
}

/* sum_i (i + 1) h_i with h = exchanged copy of v, v_i = x_i^2: df/dx_i = 2 (i + 1) x_i */
double halo_sum(const double *x, double *v, double *h, int atoms) {
  for (int i = 0; i < N; i++) v[i] = x[i] * x[i];
  exchange(atoms, v, h);
  double s = 0;
  for (int i = 0; i < N; i++) s += (i + 1) * h[i];
  return s;
}

int main(void) {
  double x[N], dx[N], v[N], dv[N], h[N], dh[N], t[N];
  for (int i = 0; i < N; i++) { x[i] = 1.0 + 0.25 * i; t[i] = rnd(i); }
  for (int atoms = 0; atoms < 2; atoms++) {
    memset(dx, 0, sizeof dx); memset(dv, 0, sizeof dv); memset(dh, 0, sizeof dh);
    __enzyme_autodiff((void *)halo_sum, enzyme_dup, x, dx, enzyme_dup, v, dv,
                      enzyme_dup, h, dh, enzyme_const, atoms);
    char name[32];
    double jt = 0;
    for (int i = 0; i < N; i++) {
      snprintf(name, sizeof name, "%s_dx[%d]", atoms ? "atoms" : "scalars", i);
      check(name, dx[i], 2 * (i + 1) * x[i]);
      jt += dx[i] * t[i];
    }
    memset(dv, 0, sizeof dv); memset(dh, 0, sizeof dh);
    double jv = __enzyme_fwddiff((void *)halo_sum, enzyme_dup, x, t, enzyme_dup, v, dv,
                                 enzyme_dup, h, dh, enzyme_const, atoms);
    check(atoms ? "atoms_forward_dot" : "scalars_forward_dot", jv, jt);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
