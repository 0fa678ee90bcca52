/* Readers of ADBench input files (formats as described in ADBench's README). */
#ifndef BENCH_ADBENCH_IO_H
#define BENCH_ADBENCH_IO_H
#include <stdio.h>
#include <stdlib.h>

static FILE *adb_open(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  return f;
}

static void adb_read(FILE *f, const char *path, int count, double *out) {
  for (int i = 0; i < count; i++)
    if (fscanf(f, "%lf", &out[i]) != 1) {
      fprintf(stderr, "%s: truncated input\n", path);
      exit(2);
    }
}

static double *adb_alloc(size_t n) { return (double *)calloc(n ? n : 1, sizeof(double)); }

/* GMM: "d k n", k alphas, k means (d each), k icf rows (d(d+1)/2 each), n points, "gamma m".
   The parameters are stored contiguously: params = alphas | means | icf. */
struct GMMInput {
  int d, k, n;
  double *params, *alphas, *means, *icf, *x;
  double gamma;
  int m;
  int nparams;
};

static GMMInput read_gmm(const char *path) {
  GMMInput in;
  FILE *f = adb_open(path);
  if (fscanf(f, "%d %d %d", &in.d, &in.k, &in.n) != 3) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  int icf_sz = in.d * (in.d + 1) / 2;
  in.nparams = in.k + in.k * in.d + in.k * icf_sz;
  in.params = adb_alloc(in.nparams);
  in.alphas = in.params;
  in.means = in.params + in.k;
  in.icf = in.means + in.k * in.d;
  in.x = adb_alloc((size_t)in.n * in.d);
  adb_read(f, path, in.k, in.alphas);
  adb_read(f, path, in.k * in.d, in.means);
  adb_read(f, path, in.k * icf_sz, in.icf);
  adb_read(f, path, in.n * in.d, in.x);
  if (fscanf(f, "%lf %d", &in.gamma, &in.m) != 2) {
    fprintf(stderr, "%s: missing wishart line\n", path);
    exit(2);
  }
  fclose(f);
  return in;
}

/* BA: "n m p", then ONE camera (11), ONE point (3), ONE weight, ONE feature (2), replicated:
   camera i = the camera, point j = the point, observation k joins camera k mod n, point k mod m. */
enum { BA_NCAMPARAMS = 11 };
struct BAInput {
  int n, m, p;
  double *cams, *X, *w, *feats;
  int *obs;
};

static BAInput read_ba(const char *path) {
  BAInput in;
  FILE *f = adb_open(path);
  if (fscanf(f, "%d %d %d", &in.n, &in.m, &in.p) != 3) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  double cam[BA_NCAMPARAMS], X[3], w, feat[2];
  adb_read(f, path, BA_NCAMPARAMS, cam);
  adb_read(f, path, 3, X);
  adb_read(f, path, 1, &w);
  adb_read(f, path, 2, feat);
  fclose(f);
  in.cams = adb_alloc((size_t)BA_NCAMPARAMS * in.n);
  in.X = adb_alloc((size_t)3 * in.m);
  in.w = adb_alloc(in.p);
  in.feats = adb_alloc((size_t)2 * in.p);
  in.obs = (int *)calloc((size_t)2 * in.p, sizeof(int));
  for (int i = 0; i < in.n; i++)
    for (int j = 0; j < BA_NCAMPARAMS; j++) in.cams[i * BA_NCAMPARAMS + j] = cam[j];
  for (int i = 0; i < in.m; i++)
    for (int j = 0; j < 3; j++) in.X[i * 3 + j] = X[j];
  for (int i = 0; i < in.p; i++) in.w[i] = w;
  int camIdx = 0, ptIdx = 0;
  for (int i = 0; i < in.p; i++) {
    in.obs[i * 2 + 0] = (camIdx++ % in.n);
    in.obs[i * 2 + 1] = (ptIdx++ % in.m);
    in.feats[i * 2 + 0] = feat[0];
    in.feats[i * 2 + 1] = feat[1];
  }
  return in;
}

/* LSTM: "l c b", main parameters (2*l*4*b), extra parameters (3*b), state (2*l*b),
   sequence (c*b). The parameters are stored contiguously: params = main | extra. */
struct LSTMInput {
  int l, c, b;
  double *params, *main_params, *extra_params, *state, *sequence;
  int nmain, nextra;
};

static LSTMInput read_lstm(const char *path) {
  LSTMInput in;
  FILE *f = adb_open(path);
  if (fscanf(f, "%d %d %d", &in.l, &in.c, &in.b) != 3) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  in.nmain = 2 * in.l * 4 * in.b;
  in.nextra = 3 * in.b;
  in.params = adb_alloc(in.nmain + in.nextra);
  in.main_params = in.params;
  in.extra_params = in.params + in.nmain;
  in.state = adb_alloc((size_t)2 * in.l * in.b);
  in.sequence = adb_alloc((size_t)in.c * in.b);
  adb_read(f, path, in.nmain, in.main_params);
  adb_read(f, path, in.nextra, in.extra_params);
  adb_read(f, path, 2 * in.l * in.b, in.state);
  adb_read(f, path, in.c * in.b, in.sequence);
  fclose(f);
  return in;
}
#endif
