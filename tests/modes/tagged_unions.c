/* A tagged union's payload read as an integer on the arm of one tag value and as a double on
   another (an interpreter's value: `switch (v->tag) { case NUM: ... v->u.d ...; case INT:
   v->u.i = v->u.i * 3 + 1; }`). Seen without the tag, the INT arm's load reads memory that holds
   a double, and its arithmetic looks like bit manipulation of a float: refused ("integer
   arithmetic on data that holds a float") until the arms were told apart by the tag
   (ad/structure/enum_arms.py). In memory (bump) and passed and returned by value in integer registers
   (twice: the payload is an i64 that the NUM arm views as a double). Each line: enzyme-cc |
   analytic. */
#include <math.h>
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;
enum { NUM, INT, TEXT };
typedef struct { int tag; union { double d; long i; const char *s; } u; } Value;

__attribute__((noinline)) static void bump(Value *v) {
  switch (v->tag) {
  case NUM: v->u.d = v->u.d * 2.0 + sin(v->u.d); break;
  case INT: v->u.i = v->u.i * 3 + 1; break;
  default: break;
  }
}
__attribute__((noinline)) static Value twice(Value v) {      /* by value: in registers */
  Value r = v;
  if (v.tag == NUM) r.u.d = v.u.d * v.u.d;
  else if (v.tag == INT) r.u.i = v.u.i << 1;
  return r;
}

double total(Value *vs, int n) {
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < n; k++) bump(&vs[k]);
  double s = 0;
  for (int k = 0; k < n; k++) {
    Value w = twice(vs[k]);
    s += w.tag == NUM ? w.u.d : w.tag == INT ? (double)w.u.i * 1e-3 : 0.5;
  }
  return s;
}

static double g(double x) { return 2 * x + sin(x); }
static double dg(double x) { return 2 + cos(x); }
/* d/dx of g(g(x))^2 */
static double want(double x) { return 2 * g(g(x)) * dg(g(x)) * dg(x); }

int main(void) {
  Value v[4] = {{NUM, {.d = 0.3}}, {INT, {.i = 4}}, {TEXT, {.s = "x"}}, {NUM, {.d = 1.1}}};
  Value dv[4] = {{0}};
  __enzyme_autodiff((void *)total, enzyme_dup, v, dv, enzyme_const, 4);
  printf("reverse d v[0]: %.9g | %.9g\n", dv[0].u.d, want(0.3));
  printf("reverse d v[3]: %.9g | %.9g\n", dv[3].u.d, want(1.1));
  for (int k = 0; k < 4; k += 3) {
    Value w[4] = {{NUM, {.d = 0.3}}, {INT, {.i = 4}}, {TEXT, {.s = "x"}}, {NUM, {.d = 1.1}}};
    Value tw[4] = {{0}};
    tw[k].u.d = 1.0;
    printf("forward d v[%d]: %.9g | %.9g\n", k,
           __enzyme_fwddiff((void *)total, enzyme_dup, w, tw, enzyme_const, 4),
           want(k ? 1.1 : 0.3));
  }
  return 0;
}
