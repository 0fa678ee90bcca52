/* ADBench LSTM loss, after ADBench's C++ reference (src/cpp/shared/lstm.h): l layers of an LSTM
 * with hidden size b run over a sequence of c one-hot-like vectors of size b; the loss is the
 * negative mean log-likelihood of the next element. As in ADBench, logsumexp adds 2 to the sum
 * of exponentials and the state is copied (the objective does not change its input state). */
#ifndef BENCH_LSTM_H
#define BENCH_LSTM_H
#include <math.h>
#include "mem.h"

template <class T> static T lstm_sigmoid(T x) { return 1.0 / (1.0 + exp(-x)); }

template <class T> static T lstm_logsumexp(const T *vect, int sz) {
  T sum = 0.0;
  for (int i = 0; i < sz; i++) sum = sum + exp(vect[i]);
  sum = sum + 2;
  return log(sum);
}

/* one LSTM cell: weight and bias hold 4 blocks of hsize (forget, input, output gates, change) */
template <class T>
static void lstm_model(int hsize, const T *weight, const T *bias, T *hidden, T *cell,
                       const T *input, T *gates) {
  T *forget = &gates[0];
  T *ingate = &gates[hsize];
  T *outgate = &gates[2 * hsize];
  T *change = &gates[3 * hsize];
  for (int i = 0; i < hsize; i++) {
    forget[i] = lstm_sigmoid(input[i] * weight[i] + bias[i]);
    ingate[i] = lstm_sigmoid(hidden[i] * weight[hsize + i] + bias[hsize + i]);
    outgate[i] = lstm_sigmoid(input[i] * weight[2 * hsize + i] + bias[2 * hsize + i]);
    change[i] = tanh(hidden[i] * weight[3 * hsize + i] + bias[3 * hsize + i]);
  }
  for (int i = 0; i < hsize; i++) cell[i] = cell[i] * forget[i] + ingate[i] * change[i];
  for (int i = 0; i < hsize; i++) hidden[i] = outgate[i] * tanh(cell[i]);
}

/* predict the next element: input scaling, l layers, output scaling */
template <class T>
static void lstm_predict(int l, int b, const T *w, const T *w2, T *s, const T *x, T *x2,
                         T *gates) {
  for (int i = 0; i < b; i++) x2[i] = x[i] * w2[i];
  const T *xp = x2;
  for (int i = 0; i <= 2 * l * b - 1; i += 2 * b) {
    lstm_model(b, &w[i * 4], &w[(i + b) * 4], &s[i], &s[i + b], xp, gates);
    xp = &s[i];
  }
  for (int i = 0; i < b; i++) x2[i] = xp[i] * w2[b + i] + w2[2 * b + i];
}

template <class T>
void lstm_objective(int l, int c, int b, const T *main_params, const T *extra_params,
                    const double *state_in, const double *sequence, T *loss) {
  T *state = Mem<T>::alloc(2 * l * b);
  T *ypred = Mem<T>::alloc(b);
  T *ynorm = Mem<T>::alloc(b);
  T *gates = Mem<T>::alloc(4 * b);
  T *input = Mem<T>::alloc(b);
  for (int i = 0; i < 2 * l * b; i++) state[i] = state_in[i];
  for (int i = 0; i < b; i++) input[i] = sequence[i];
  T total = 0.0;
  int count = 0;
  for (int t = 0; t <= (c - 1) * b - 1; t += b) {
    lstm_predict(l, b, main_params, extra_params, state, input, ypred, gates);
    T lse = lstm_logsumexp(ypred, b);
    for (int i = 0; i < b; i++) ynorm[i] = ypred[i] - lse;
    const double *goal = &sequence[t + b];
    for (int i = 0; i < b; i++) total = total + goal[i] * ynorm[i];
    count += b;
    for (int i = 0; i < b; i++) input[i] = goal[i];
  }
  *loss = -total / count;
  Mem<T>::release(state);
  Mem<T>::release(ypred);
  Mem<T>::release(ynorm);
  Mem<T>::release(gates);
  Mem<T>::release(input);
}
#endif
