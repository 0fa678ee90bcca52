/* Recursive radix-2 FFT (Danielson-Lanczos, as in Enzyme's fft benchmark) on n complex numbers
 * stored interleaved (re, im), n a power of two, and a scalar function of its output:
 *   f(x) = sum_k c_k |X_k|^2 / n,   c_k = 1 / (1 + k),   X = FFT(x). */
#ifndef BENCH_FFT_H
#define BENCH_FFT_H
#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

template <class T> static void fft_swap(T &a, T &b) {
  T t = a;
  a = b;
  b = t;
}

/* bit-reversal permutation */
template <class T> static void fft_scramble(T *data, unsigned N) {
  unsigned j = 1;
  for (unsigned i = 1; i < 2 * N; i += 2) {
    if (j > i) {
      fft_swap(data[j - 1], data[i - 1]);
      fft_swap(data[j], data[i]);
    }
    unsigned m = N;
    while (m >= 2 && j > m) {
      j -= m;
      m >>= 1;
    }
    j += m;
  }
}

/* butterflies of the two halves, computed recursively */
template <class T> static void fft_recursive_apply(T *data, int iSign, unsigned N) {
  if (N == 1) return;
  fft_recursive_apply(data, iSign, N / 2);
  fft_recursive_apply(data + N, iSign, N / 2);
  double wtemp = iSign * sin(M_PI / N);
  double wpi = -iSign * sin(2 * M_PI / N);
  double wpr = -2.0 * wtemp * wtemp;
  double wr = 1.0;
  double wi = 0.0;
  for (unsigned i = 0; i < N; i += 2) {
    unsigned iN = i + N;
    T tempr = data[iN] * wr - data[iN + 1] * wi;
    T tempi = data[iN] * wi + data[iN + 1] * wr;
    data[iN] = data[i] - tempr;
    data[iN + 1] = data[i + 1] - tempi;
    data[i] = data[i] + tempr;
    data[i + 1] = data[i + 1] + tempi;
    wtemp = wr;
    wr += wr * wpr - wi * wpi;
    wi += wi * wpr + wtemp * wpi;
  }
}

template <class T> static void fft_forward(T *data, unsigned N) {
  fft_scramble(data, N);
  fft_recursive_apply(data, 1, N);
}

/* work: scratch of 2n numbers (the transform is in place) */
template <class T> T fft_objective(const T *x, T *work, unsigned n) {
  for (unsigned i = 0; i < 2 * n; i++) work[i] = x[i];
  fft_forward(work, n);
  T s = 0.0;
  for (unsigned k = 0; k < n; k++)
    s = s + (work[2 * k] * work[2 * k] + work[2 * k + 1] * work[2 * k + 1]) / (1.0 + k);
  return s / n;
}
#endif
