/* Element loops gathering node values through a connectivity array, as a finite-element or
   hydrodynamics code does: the team's forward sweep records each gathered index once (the same
   index serves the x and the y array) and makes it addresses at the loop's exits
   (openmp_index.py). Four cases: bases fixed in the loop (x and y, one block: y = x + NN);
   a base chosen per pass of an outer loop (`fld`, a new base each time the inner loop is
   entered, its ranges emptied at each exit); a base read from memory inside the loop (the
   table `fields`, whose entry an element's first node picks: the base alternates from one
   element to the next, and each change records the index ranges from the previous base); and a loop the static schedule may skip (its exit block is also
   entered from outside it). Element rows split between the threads share one node row: most
   adds stay plain, that row's atomic. */
#define NX 12
#define NY 10
#include "quad_mesh.h"
#define N (2 * NN)
#define M NE
static const double *fields[2];
#include "omp_check.h"
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    const double *px = x, *py = x + NN;                                                  \
    (void)n;                                                                             \
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE; e++) {                                                       \
      double cx[4], cy[4];                                                               \
      for (int k = 0; k < 4; k++) {                                                      \
        int c = conn[4 * e + k];                                                         \
        cx[k] = px[c], cy[k] = py[c];                                                    \
      }                                                                                  \
      double a = 0.5 * ((cx[0] - cx[2]) * (cy[1] - cy[3]) - (cx[1] - cx[3]) * (cy[0] - cy[2]));\
      y[e] = a * a + 0.1 * sin(cx[0] * cy[2]);                                           \
    }                                                                                    \
    P("omp parallel")                                                                    \
    for (int f = 0; f < 2; f++) {                                                        \
      const double *fld = f ? py : px;                                                   \
      P("omp for schedule(static)")                                                      \
      for (int e = 0; e < NE; e++)                                                       \
        y[e] += (f + 1) * fld[conn[4 * e]] * fld[conn[4 * e + 2]];                       \
    }                                                                                    \
    fields[0] = px, fields[1] = py;                                                      \
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE; e++)                                                         \
      y[e] += 0.25 * cos(fields[conn[4 * e] & 1][conn[4 * e + 1]]) * fields[0][conn[4 * e + 3]];\
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE / 16; e++)                                                    \
      y[e] += px[conn[4 * e + 3]] * py[conn[4 * e + 1]];                                 \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
