#ifndef LOGSUMEXP_H
#define LOGSUMEXP_H
#ifdef __cplusplus
extern "C" {
#endif

/* log(sum_i exp(x[i])), computed stably; its gradient is softmax(x) */
double logsumexp(const double *x, int n);

#ifdef __cplusplus
}
#endif
#endif
