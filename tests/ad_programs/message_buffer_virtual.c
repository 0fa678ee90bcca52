/* Message buffers packed and unpacked through function pointers (a molecular dynamics code's
   halo exchange: one exchange object per kind of data, each with its own load and unload
   functions, called from one generic exchange routine that allocates the `char *` buffers and
   copies them). The generic routine cannot tell from its own code what the buffers hold: the
   copy's type comes from what the functions it may call store and read. Two exchanges run, one
   of records {int gid, int type, double r[3]}, one of plain doubles; every double's adjoint
   must cross the copies. */
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

enum { N = 12 };
typedef struct { int gid; int type; double r[3]; } AtomMsg;
typedef struct { double *v, *h, *w; int n; } Data;

typedef struct Exchange {
  int capacity;
  void *parms;
  int (*load)(void *parms, void *data, int face, char *buf);
  void (*unload)(void *parms, void *data, int face, int len, char *buf);
} Exchange;

static void *my_malloc(size_t n) { return malloc(n); }
static void my_free(void *p) { free(p); }

/* atoms: face 0 sends the first half reversed, face 1 the second half */
static int load_atoms(void *parms, void *vdata, int face, char *cbuf) {
  const double *shift = parms;
  Data *d = vdata;
  AtomMsg *buf = (AtomMsg *)cbuf;
  int half = d->n / 2, k = 0;
  for (int i = face * half; i < (face + 1) * half; i++, k++) {
    int src = face ? i : half - 1 - i;
    buf[k].gid = src;
    buf[k].type = face;
    for (int c = 0; c < 3; c++) buf[k].r[c] = d->v[src] + shift[face] * c;
  }
  return k * (int)sizeof(AtomMsg);
}
static void unload_atoms(void *parms, void *vdata, int face, int len, char *cbuf) {
  (void)parms; (void)face;
  Data *d = vdata;
  AtomMsg *buf = (AtomMsg *)cbuf;
  for (int k = 0; k < len / (int)sizeof(AtomMsg); k++)
    d->h[buf[k].gid] = buf[k].r[0] * buf[k].r[2];
}
/* forces: plain doubles, face 0 the even entries, face 1 the odd ones */
static int load_forces(void *parms, void *vdata, int face, char *cbuf) {
  (void)parms;
  Data *d = vdata;
  double *buf = (double *)cbuf;
  int k = 0;
  for (int i = face; i < d->n; i += 2) buf[k++] = d->h[i];
  return k * (int)sizeof(double);
}
static void unload_forces(void *parms, void *vdata, int face, int len, char *cbuf) {
  (void)parms;
  Data *d = vdata;
  double *buf = (double *)cbuf;
  for (int k = 0; k < len / (int)sizeof(double); k++) d->w[face + 2 * k] = 3 * buf[k];
}

static int send_receive(const char *send, int len, char *recv) {
  memcpy(recv, send, len);
  return len;
}
__attribute__((noinline)) static void exchange_data(Exchange *e, void *data) {
  char *send0 = my_malloc(e->capacity), *send1 = my_malloc(e->capacity);
  char *recv0 = my_malloc(e->capacity), *recv1 = my_malloc(e->capacity);
  int n0 = e->load(e->parms, data, 0, send0);
  int n1 = e->load(e->parms, data, 1, send1);
  int r1 = send_receive(send0, n0, recv1);
  int r0 = send_receive(send1, n1, recv0);
  e->unload(e->parms, data, 0, r0, recv0);
  e->unload(e->parms, data, 1, r1, recv1);
  my_free(recv1); my_free(recv0); my_free(send1); my_free(send0);
}

static Exchange *atoms_exchange, *forces_exchange;

/* v = x^2; h_i = v_i (v_i + 2 shift) via the atoms' exchange; w = 3 h with neighbours swapped
   (w_j = 3 h_(j xor 1): what one face sends the other face receives) via the forces' one;
   f = sum (j + 1) w_j */
double energy(const double *x, double *v, double *h, double *w) {
  Data d = {v, h, w, N};
  for (int i = 0; i < N; i++) v[i] = x[i] * x[i];
  exchange_data(atoms_exchange, &d);
  exchange_data(forces_exchange, &d);
  double s = 0;
  for (int i = 0; i < N; i++) s += (i + 1) * w[i];
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  static double shift[2];
  shift[0] = 0.5 + argc * 0.0;
  shift[1] = 0.25;
  Exchange a = {N * (int)sizeof(AtomMsg), shift, load_atoms, unload_atoms};
  Exchange f = {N * (int)sizeof(double), NULL, load_forces, unload_forces};
  atoms_exchange = &a;
  forces_exchange = &f;
  double x[N], dx[N], v[N], dv[N], h[N], dh[N], w[N], dw[N], t[N];
  for (int i = 0; i < N; i++) { x[i] = 1.0 + 0.25 * i; t[i] = rnd(i); }
  memset(dx, 0, sizeof dx); memset(dv, 0, sizeof dv);
  memset(dh, 0, sizeof dh); memset(dw, 0, sizeof dw);
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_dup, v, dv,
                    enzyme_dup, h, dh, enzyme_dup, w, dw);
  char name[32];
  double jt = 0;
  for (int i = 0; i < N; i++) {
    /* h_i = v_i (v_i + 2 shift_face), face = i >= N/2; d/dx = (2 v_i + 2 shift) 2 x_i */
    double s = shift[i >= N / 2];
    double want = 3 * ((i ^ 1) + 1) * (2 * x[i] * x[i] + 2 * s) * 2 * x[i];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], want);
    jt += dx[i] * t[i];
  }
  memset(dv, 0, sizeof dv); memset(dh, 0, sizeof dh); memset(dw, 0, sizeof dw);
  double jv = __enzyme_fwddiff((void *)energy, enzyme_dup, x, t, enzyme_dup, v, dv,
                               enzyme_dup, h, dh, enzyme_dup, w, dw);
  check("forward_dot", jv, jt);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
