/* libkernels.a: two objective functions of a small optimization toolkit. */
#ifndef KERNELS_H
#define KERNELS_H

/* sum_{i<n-1} 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2 */
double rosenbrock(const double *x, int n);

/* x^2, shared by both files of the library */
double sq(double x);

/* Energy of a chain of n points in the plane (xy[2i], xy[2i+1]) joined by springs of
   stiffness k and rest length 1: sum_i k/2 (|p[i+1] - p[i]| - 1)^2 */
double chain_energy(const double *xy, int n, double k);

#endif
