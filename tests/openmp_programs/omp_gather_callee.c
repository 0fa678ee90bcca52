/* an element loop in the style of a finite-element or hydrodynamics code: each element gathers
   its nodes' x and y coordinates by an index table into local arrays and passes them to a function
   that is not inlined (`edges`): the call passes memory private to the thread, so that
   function's derivative in the team neither tracks its loads nor tests its adds
   (openmp.private_args). Another function reads the shared node array itself (`pick`): its loads
   are range-tracked, in address classes apart from the region's own (openmp_ranges.load_class),
   whose gathers from the node array would otherwise share a range with whatever it reads. A loop over the three
   components, x[d * nn + node] with nn known at run time only, is tracked one class per
   iteration (openmp_affine.iteration_classes), not as one range across both components. */
#define NN 200                     /* nodes; x holds their x, y, z coordinates, one after another */
#define N (3 * NN)
#define M 197                      /* elements: nodes e .. e + 3, in a shuffled order */
static int conn[4 * M];
#define SETUP                                                                           \
  for (int e = 0; e < M; e++)                                                           \
    for (int c = 0; c < 4; c++) conn[4 * e + c] = e + (c * 3 + e) % 4;
#include "omp_check.h"
__attribute__((noinline)) static double edges(const double *px, const double *py) {
  double s = 0;
  for (int c = 0; c < 4; c++) {
    int d = (c + 1) & 3;
    double ex = px[d] - px[c], ey = py[d] - py[c];
    s += sqrt(ex * ex + ey * ey + 0.1);
  }
  return s * px[0];
}
__attribute__((noinline)) static double pick(const double *x, const int *c) {
  return x[c[0]] * x[c[2]];
}
#define KERNEL(name, P)                                                                 \
  void name(const double *x, double *y, int n) {                                        \
    int nn = n / 3;                                                                     \
    P("omp parallel for schedule(static)")                                              \
    for (int e = 0; e < M; e++) {                                                       \
      double px[4], py[4];                                                              \
      for (int c = 0; c < 4; c++) {                                                     \
        int nd = conn[4 * e + c];                                                       \
        px[c] = x[nd];                                                                  \
        py[c] = x[NN + nd];                                                             \
      }                                                                                 \
      double h = 0;                                                                     \
      _Pragma("clang loop unroll(disable)")                                             \
      for (int d = 0; d < 3; d++) {                                                     \
        double m = 0;                                                                   \
        for (int c = 0; c < 4; c++) m += (c & 1 ? -1 : 1) * x[d * nn + conn[4 * e + c]];\
        h += m * m * (1 + d);                                                           \
      }                                                                                 \
      y[e] = edges(px, py) + 0.5 * px[1] * py[2] + 0.1 * h + 0.3 * pick(x, conn + 4 * e); \
    }                                                                                   \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
