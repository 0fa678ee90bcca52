// A loop over shapes held by a global heap pointer, whose body branches many ways: one arm
// calls a function that may move the shapes, so the pointer is reloaded there and the loop
// joins it with itself across the other thirty arms: one wide pointer phi in a cycle, which
// the search for the globals a pointer may reach once walked in exponential time (miniAMR).
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup;
typedef struct { double cen[3], size; int type; } shape;
shape *shapes;
int nshapes = 4, notes;
__attribute__((noinline)) void note(int o) { notes += o; }
double measure(double *box) {
  double total = 0;
  for (int o = 0; o < nshapes; o++) {
    shape *s = &shapes[o];
    double x = (box[0] - s->cen[0]) / s->size, y = (box[1] - s->cen[1]) / s->size,
           z = (box[2] - s->cen[2]) / s->size;
    if (s->type == 0) { if (x > 0) total += x * x; else if (y > 0) total += y * y; else total += z; }
    else if (s->type == 1) { if (y > 0.5) total += x * y; else if (z > 0.1) total += y * z; else total -= x; }
    else if (s->type == 2) { if (z < 0) total += z * z * x; else if (x < 1) total += sin(x); else total += y; }
    else if (s->type == 3) { if (x + y > 0) total += sqrt(x * x + y * y); else if (z > y) total += z * y; else note(o); }
    else if (s->type == 4) { if (x * y > z) total += exp(-z * z); else if (y < x) total += x - y; else total += 2 * z; }
    else if (s->type == 5) { if (y * z > 0.2) total += cos(y); else if (x > z) total += x * z; else total += y; }
    else if (s->type == 6) { if (x > y * z) total += x * y * z; else if (z > 0.3) total += log(1 + z * z); else total += x; }
    else if (s->type == 7) { if (y > x * x) total += tanh(y); else if (x > 0.2) total += x / (1 + y * y); else total -= z; }
    else if (s->type == 8) { if (z > x) total += z * x * x; else if (y > 0.4) total += atan(y); else total += 3 * x; }
    else if (s->type == 9) { if (x * z > y) total += hypot(x, z); else if (z < 0.6) total += z * z * z; else total += y * x; }
    else { if (x < y) total += x * x * x; else if (y < z) total += y * y * z; else total += 1; }
  }
  return total;
}
int main(void) {
  shapes = malloc(nshapes * sizeof(shape));
  for (int o = 0; o < nshapes; o++)
    shapes[o] = (shape){{0.1 * o, 0.3 - 0.05 * o, 0.2 + 0.1 * o}, 0.5 + 0.1 * o, (3 * o + 1) % 11};
  double box[3] = {0.4, 0.7, 0.15};
  for (int d = 0; d < 3; d++) {
    double db[3] = {0}, t[3] = {0}, h = 1e-6, save = box[d];
    __enzyme_autodiff((void *)measure, enzyme_dup, box, db);
    box[d] = save + h; double fp = measure(box);
    box[d] = save - h; double fm = measure(box);
    box[d] = save;
    t[d] = 1;
    double fwd = __enzyme_fwddiff((void *)measure, enzyme_dup, box, t);
    printf("CHECK rev_%d %.9g %.9g\n", d, db[d], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", d, fwd, (fp - fm) / (2 * h));
  }
  return 0;
}
