/* Calls through constant tables of function pointers (a C "ops" record, the shape of a C++ or
   Rust vtable): `s->ops->name(s)` may only reach the functions in the `name` slot of the
   tables the program points its objects at. By signature alone it may also reach `label`, a
   function of the same type in another table's other slot, which returns a pointer into its
   (differentiated) argument where the names return string constants: the targets differed in
   whether they return a shadow pointer, and the call was refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct shape;
struct shape_ops {
  const char *(*name)(const struct shape *);
  double (*area)(const struct shape *, double);
};
struct shape { const struct shape_ops *ops; double k; char tag[8]; };

static const char *square_name(const struct shape *s) { (void)s; return "square"; }
static double square_area(const struct shape *s, double x) { return s->k * x * x; }
static const char *disc_name(const struct shape *s) { (void)s; return "disc"; }
static double disc_area(const struct shape *s, double x) { return 3.0 * s->k * x * x * x; }
static const struct shape_ops SQUARE = {square_name, square_area};
static const struct shape_ops DISC = {disc_name, disc_area};

/* another table whose second slot holds a function of the name slot's type */
struct tag_ops {
  double (*weight)(const struct shape *, double);
  const char *(*label)(const struct shape *);
};
static double tag_weight(const struct shape *s, double x) { return s->k + x; }
static const char *tag_label(const struct shape *s) { return s->tag; }
static const struct tag_ops TAGS = {tag_weight, tag_label};
const struct tag_ops *volatile tag_table = &TAGS;

/* the area, doubled for short names */
double measure(const struct shape *s, double x) {
  double a = s->ops->area(s, x);
  return strlen(s->ops->name(s)) > 4 ? a : 2 * a;
}

int main(int argc, char **argv) {
  (void)argv;
  struct shape sq = {&SQUARE, 2.0, "sq"}, dc = {&DISC, 0.5, "dc"};
  struct shape *a = argc > 5 ? &dc : &sq, *b = argc > 5 ? &sq : &dc;
  struct shape da = *a, db = *b;
  da.k = 0, db.k = 0;
  double x = 1.5;
  printf("%s %g\n", tag_table->label(a), tag_table->weight(a, x));
  double dxa = __enzyme_autodiff((void *)measure, enzyme_dup, a, &da, enzyme_out, x);
  double dxb = __enzyme_autodiff((void *)measure, enzyme_dup, b, &db, enzyme_out, x);
  check("square_dx", dxa, 2 * 2.0 * x);
  check("square_dk", da.k, x * x);
  check("disc_dx", dxb, 2 * 9.0 * 0.5 * x * x);
  check("disc_dk", db.k, 2 * 3.0 * x * x * x);
  /* forward/reverse dot test: the tangent along x */
  struct shape ta = *a;
  ta.k = 0;
  check("dot_square", __enzyme_fwddiff((void *)measure, enzyme_dup, a, &ta, x, 1.0), dxa);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
