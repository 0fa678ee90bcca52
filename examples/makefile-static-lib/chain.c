#include <math.h>
#include "kernels.h"

double chain_energy(const double *xy, int n, double k) {
  double e = 0;
  for (int i = 0; i + 1 < n; i++) {
    double len = sqrt(sq(xy[2 * i + 2] - xy[2 * i]) + sq(xy[2 * i + 3] - xy[2 * i + 1]));
    e += 0.5 * k * sq(len - 1);
  }
  return e;
}
