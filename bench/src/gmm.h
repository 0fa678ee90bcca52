/* ADBench GMM objective: negative log-likelihood of a Gaussian mixture with a Wishart prior on the
 * inverse covariances, written after ADBench's C++ reference (src/cpp/shared/gmm.h).
 *
 *   alphas[k]            mixture weights (log-space, normalised by log-sum-exp)
 *   means[k*d]           component means
 *   icf[k*(d(d+1)/2)]    inverse covariance factor Q of each component: d log-diagonal entries,
 *                        then the strict lower triangle, column by column
 *   x[n*d]               data points (constant)
 *   wishart (gamma, m)   prior parameters (constant)
 */
#ifndef BENCH_GMM_H
#define BENCH_GMM_H
#include <math.h>
#include "mem.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

template <class T> static T gmm_arr_max(int n, const T *x) {
  T m = x[0];
  for (int i = 1; i < n; i++)
    if (m < x[i]) m = x[i];
  return m;
}

template <class T> static T gmm_sqnorm(int n, const T *x) {
  if (n < 1) return 0;   /* d = 1: an empty lower triangle (ADBench reads x[0] regardless) */
  T res = x[0] * x[0];
  for (int i = 1; i < n; i++) res = res + x[i] * x[i];
  return res;
}

template <class T> static void gmm_subtract(int d, const double *x, const T *y, T *out) {
  for (int id = 0; id < d; id++) out[id] = x[id] - y[id];
}

template <class T> static T gmm_logsumexp(int n, const T *x) {
  T mx = gmm_arr_max(n, x);
  T semx = 0.0;
  for (int i = 0; i < n; i++) semx = semx + exp(x[i] - mx);
  return log(semx) + mx;
}

static double gmm_log_gamma_distrib(double a, double p) {
  double out = 0.25 * p * (p - 1) * log(M_PI);
  for (int j = 1; j <= p; j++) out = out + lgamma(a + 0.5 * (1 - j));
  return out;
}

/* sum_qs[k] = sum of the log-diagonal of Q_k; Qdiags = exp(log-diagonal) */
template <class T>
static void gmm_preprocess_qs(int d, int k, const T *icf, T *sum_qs, T *Qdiags) {
  int icf_sz = d * (d + 1) / 2;
  for (int ik = 0; ik < k; ik++) {
    sum_qs[ik] = 0.;
    for (int id = 0; id < d; id++) {
      T q = icf[ik * icf_sz + id];
      sum_qs[ik] = sum_qs[ik] + q;
      Qdiags[ik * d + id] = exp(q);
    }
  }
}

/* out = Q x with Q lower triangular: diagonal Qdiag, strict lower triangle ltri */
template <class T>
static void gmm_Qtimesx(int d, const T *Qdiag, const T *ltri, const T *x, T *out) {
  for (int id = 0; id < d; id++) out[id] = Qdiag[id] * x[id];
  int Lparamsidx = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) {
      out[j] = out[j] + ltri[Lparamsidx] * x[i];
      Lparamsidx++;
    }
}

template <class T>
static T gmm_log_wishart_prior(int p, int k, double gamma, int m, const T *sum_qs,
                               const T *Qdiags, const T *icf) {
  int n = p + m + 1;
  int icf_sz = p * (p + 1) / 2;
  double C = n * p * (log(gamma) - 0.5 * log(2)) - gmm_log_gamma_distrib(0.5 * n, p);
  T out = 0;
  for (int ik = 0; ik < k; ik++) {
    T frobenius = gmm_sqnorm(p, &Qdiags[ik * p]) + gmm_sqnorm(icf_sz - p, &icf[ik * icf_sz + p]);
    out = out + 0.5 * gamma * gamma * frobenius - m * sum_qs[ik];
  }
  return out - k * C;
}

template <class T>
void gmm_objective(int d, int k, int n, const T *alphas, const T *means, const T *icf,
                   const double *x, double wishart_gamma, int wishart_m, T *err) {
  const double CONSTANT = -n * d * 0.5 * log(2 * M_PI);
  int icf_sz = d * (d + 1) / 2;
  T *Qdiags = Mem<T>::alloc(d * k);
  T *sum_qs = Mem<T>::alloc(k);
  T *xcentered = Mem<T>::alloc(d);
  T *Qxcentered = Mem<T>::alloc(d);
  T *main_term = Mem<T>::alloc(k);

  gmm_preprocess_qs(d, k, icf, sum_qs, Qdiags);

  T slse = 0.;
  for (int ix = 0; ix < n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      gmm_subtract(d, &x[ix * d], &means[ik * d], xcentered);
      gmm_Qtimesx(d, &Qdiags[ik * d], &icf[ik * icf_sz + d], xcentered, Qxcentered);
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * gmm_sqnorm(d, Qxcentered);
    }
    slse = slse + gmm_logsumexp(k, main_term);
  }
  T lse_alphas = gmm_logsumexp(k, alphas);
  *err = CONSTANT + slse - n * lse_alphas;
  *err = *err + gmm_log_wishart_prior(d, k, wishart_gamma, wishart_m, sum_qs, Qdiags, icf);

  Mem<T>::release(Qdiags);
  Mem<T>::release(sum_qs);
  Mem<T>::release(xcentered);
  Mem<T>::release(Qxcentered);
  Mem<T>::release(main_term);
}
#endif
