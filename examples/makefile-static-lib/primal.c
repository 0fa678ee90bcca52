/* The same library without derivatives: builds with any C compiler (make primal). */
#include <stdio.h>
#include "kernels.h"

int main(void) {
  double x[4] = {-1.2, 1.0, 0.5, 2.0};
  double xy[8] = {0, 0, 1.5, 0.2, 2.1, 1.4, 3.0, 1.0};
  printf("rosenbrock   %.12f\n", rosenbrock(x, 4));
  printf("chain_energy %.12f\n", chain_energy(xy, 4, 3.0));
  return 0;
}
