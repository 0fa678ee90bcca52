/* Scratch arrays inside differentiated code: malloc/free for double (what Enzyme-style tools see
   in C code), new[]/delete[] for operator-overloading types such as ADOL-C's adouble. */
#ifndef BENCH_MEM_H
#define BENCH_MEM_H
#include <stdlib.h>

template <class T> struct Mem {
  static T *alloc(size_t n) { return new T[n]; }
  static void release(T *p) { delete[] p; }
};
template <> struct Mem<double> {
  static double *alloc(size_t n) { return (double *)malloc(n * sizeof(double)); }
  static void release(double *p) { free(p); }
};
#endif
