#include <stdio.h>
double square(double x) { return x * x; }
double __enzyme_autodiff(void *, double);
int main(void) { printf("%f\n", __enzyme_autodiff((void *)square, 3.14)); }   /* 6.28 */
