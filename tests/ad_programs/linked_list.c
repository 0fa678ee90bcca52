/* A linked list built inside the differentiated function (one malloc per node holding an
   active value and a next pointer), traversed, then freed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

struct Node { double value; struct Node *next; };

double list_sum(const double *x, int n) {
  struct Node *head = NULL;
  for (int i = 0; i < n; i++) {
    struct Node *nd = malloc(sizeof *nd);
    nd->value = sin(x[i]);
    nd->next = head;
    head = nd;
  }
  double s = 0, w = 1;
  for (struct Node *p = head; p; p = p->next) {
    s += w * p->value * p->value;
    w += 1;
  }
  while (head) {
    struct Node *nx = head->next;
    free(head);
    head = nx;
  }
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)list_sum, enzyme_dup, x, dx, enzyme_const, N);
  /* the list is reversed: x[i] gets weight N - i */
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], (N - i) * 2 * sin(x[i]) * cos(x[i]));
  /* forward J.v versus v . (reverse gradient) */
  double v[N];
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_list_sum", __enzyme_fwddiff((void *)list_sum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  /* vector forward mode: 4 directions (dup, 4 shadow arrays) versus 4 width-1 calls */
  double v4[4][N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) v4[k][i] = rnd(N + k * N + i);
  V4 t = __enzyme_fwddiff4((void *)list_sum, enzyme_width, 4, enzyme_dup, x, v4[0], v4[1], v4[2], v4[3],
                           enzyme_const, N);
  for (int k = 0; k < 4; k++)
    checkv("list_sum", k, -1, t.d[k], __enzyme_fwddiff((void *)list_sum, enzyme_dup, x, v4[k], enzyme_const, N));
  return report();
}
