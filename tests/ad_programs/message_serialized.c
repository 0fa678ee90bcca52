/* A message serialized at run-time byte offsets (an MPI code's pack: an int count, an int tag,
   n doubles, a long id, n more doubles, each memcpy'd into a char buffer), copied whole to a
   receive buffer and unpacked from it: nothing types the whole-buffer copy (its layout depends
   on n), but the send buffer is never read after it, so the adjoint moves the shadow bytes
   back as they are (it was refused; unoptimized code left the char * buffers typed as
   characters, and every adjoint was silently 0). */
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

enum { N = 10 };
static volatile int count = N;

static size_t pack(char *buf, const double *v, const double *w, int n) {
  size_t off = 0;
  int tag = 7;
  long id = 42;
  memcpy(buf + off, &n, sizeof n); off += sizeof n;
  memcpy(buf + off, &tag, sizeof tag); off += sizeof tag;
  memcpy(buf + off, v, n * sizeof *v); off += n * sizeof *v;
  memcpy(buf + off, &id, sizeof id); off += sizeof id;
  for (int i = 0; i < n; i++) { memcpy(buf + off, &w[i], sizeof w[i]); off += sizeof w[i]; }
  return off;
}
static void unpack(const char *buf, double *v, double *w) {
  int n;
  memcpy(&n, buf, sizeof n);
  size_t off = 2 * sizeof(int);
  memcpy(v, buf + off, n * sizeof *v);
  off += n * sizeof *v + sizeof(long);
  for (int i = 0; i < n; i++) { memcpy(&w[i], buf + off, sizeof w[i]); off += sizeof w[i]; }
}

/* sum_i (i + 1) v_i + w_i v_i, v_i = sin x_i, w_i = x_i^2, both through the message */
double exchanged(const double *x, double *v, double *w, double *v2, double *w2) {
  int n = count;
  for (int i = 0; i < n; i++) { v[i] = sin(x[i]); w[i] = x[i] * x[i]; }
  char *send = malloc(4096), *recv = malloc(4096);
  size_t len = pack(send, v, w, n);
  memcpy(recv, send, len);
  unpack(recv, v2, w2);
  free(send);
  free(recv);
  double s = 0;
  for (int i = 0; i < n; i++) s += (i + 1) * v2[i] + w2[i] * v2[i];
  return s;
}

int main(void) {
  double x[N], dx[N] = {0}, v[N], dv[N] = {0}, w[N], dw[N] = {0}, v2[N], dv2[N] = {0};
  double w2[N], dw2[N] = {0}, t[N];
  for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.1 * i; t[i] = rnd(i); }
  __enzyme_autodiff((void *)exchanged, enzyme_dup, x, dx, enzyme_dup, v, dv, enzyme_dup, w, dw,
                    enzyme_dup, v2, dv2, enzyme_dup, w2, dw2);
  double jt = 0;
  char name[16];
  for (int i = 0; i < N; i++) {
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], (i + 1) * cos(x[i]) + 2 * x[i] * sin(x[i]) + x[i] * x[i] * cos(x[i]));
    jt += dx[i] * t[i];
  }
  memset(dv, 0, sizeof dv); memset(dw, 0, sizeof dw); memset(dv2, 0, sizeof dv2);
  memset(dw2, 0, sizeof dw2);
  double jv = __enzyme_fwddiff((void *)exchanged, enzyme_dup, x, t, enzyme_dup, v, dv, enzyme_dup,
                               w, dw, enzyme_dup, v2, dv2, enzyme_dup, w2, dw2);
  check("forward_dot", jv, jt);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
