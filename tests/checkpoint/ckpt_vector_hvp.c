/* Checkpointed loops under reverse vector mode (enzyme_width in __enzyme_autodiff, widths 2 and
 * 3), vector forward mode, and forward over reverse (Hessian-vector products, width 1 and 2 with
 * enzyme_dupv). The model runs two checkpointed for loops, one of them in a function that is not
 * inlined (differentiated in split mode), over a state u and an active float parameter c; the
 * step also writes an integer global the snapshots must hold. Every lane must equal a scalar call
 * on the plain loops (same function, no scheme) and central differences; the HVP the plain
 * loops' and central differences of the gradient; the state after, and its tangent, the plain
 * loops'. Each scheme (Revolve, binomial, periodic, store-all) and a while loop. A tape
 * reversed twice (enzyme_nofree) must give both seeds' gradients; forward over such reverse
 * passes (the program's split pair, reverse vector mode) too. Loops annotated for
 * checkpointing (heap state, a carried scalar, memory behind a pointer argument) under forward
 * over reverse against the same loop without the annotation. Prints CHECK
 * name got expected; exits 1 on a mismatch. */
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4
typedef struct { double c[2]; } D2;
typedef struct { double c[3]; } D3;
double __enzyme_autodiff(void *, ...);
D2 __enzyme_autodiff_w2(void *, ...);
D3 __enzyme_autodiff_w3(void *, ...);
double __enzyme_fwddiff(void *, ...);
void __enzyme_ptr_size_hint(void *, long);
void __enzyme_fwddiff_v(void *, ...);
D2 __enzyme_fwddiff_w2(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_dupv, enzyme_const, enzyme_width, enzyme_nofree, enzyme_tape;

static int64_t phase; /* written and read by every step, no derivative */
static int failures;

static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failures += !ok;
}

__attribute__((noinline)) static void step(int64_t i, double *u, double c) {
  double t[N];
  phase = (5 * phase + 3) % 7;
  for (int k = 0; k < N; k++)
    t[k] = u[k] + 0.1 * c * sin(u[(k + 1) % N] * u[k]) + 0.01 * (double)(i + phase);
  for (int k = 0; k < N; k++)
    u[k] = t[k];
}

__attribute__((noinline)) static void step2(int64_t i, double *u, double c) {
  for (int k = 0; k < N; k++)
    u[k] = u[k] - 0.05 * u[k] * u[k] + 0.02 * c * cos(u[(k + 2) % N] + 0.1 * (double)i);
}

/* the first loop, in a callee that is not inlined */
__attribute__((noinline)) static void stage(double *u, double c, int64_t n,
                                            const EnzymeCheckpointScheme *s,
                                            EnzymeCkptConfig *cfg) {
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, s, cfg, enzyme_checkpoint_region, u,
                          (int64_t)(N * sizeof(double)), u, c);
}

static void outputs(const double *u, double c, double *out) {
  double a = 0, p = 1, q = 0;
  for (int k = 0; k < N; k++) {
    a += u[k] * u[k];
    p *= 1 + 0.1 * u[k];
    q += c * cos(u[k]) * (k + 1);
  }
  out[0] = a;
  out[1] = p;
  out[2] = q;
}

/* three outputs of the state after both loops */
static void model(double *u, double c, double *out, int64_t n, const EnzymeCheckpointScheme *s,
                  EnzymeCkptConfig *cfg) {
  phase = 0;
  stage(u, c, n, s, cfg);
  __enzyme_checkpoint_for((void *)step2, 3, n / 2 + 1, enzyme_scheme, s, cfg,
                          enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u, c);
  outputs(u, c, out);
}

/* the same with plain loops */
static void plain(double *u, double c, double *out, int64_t n) {
  phase = 0;
  for (int64_t i = 0; i < n; i++) step(i, u, c);
  for (int64_t i = 3; i < 3 + n / 2 + 1; i++) step2(i, u, c);
  outputs(u, c, out);
}

static const double SEED[3][3] = {{1, 0.2, -0.3}, {0.1, 1, 0.4}, {-0.5, 0.3, 1}};

static double combine(const double *u, const double *out) {
  return out[0] + 2 * out[1] + 0.5 * out[2] + u[0] * u[1] * u[1];
}

static double loss(double *u, double c, int64_t n, const EnzymeCheckpointScheme *s,
                   EnzymeCkptConfig *cfg) {
  double out[3];
  model(u, c, out, n, s, cfg);
  return combine(u, out);
}

static double plain_loss(double *u, double c, int64_t n) {
  double out[3];
  plain(u, c, out, n);
  return combine(u, out);
}

/* the gradient with respect to u (into g) and c (returned); s == NULL: the plain loops */
__attribute__((noinline)) static double grad(double *u, double *g, double c, int64_t n,
                                             const EnzymeCheckpointScheme *s,
                                             EnzymeCkptConfig *cfg) {
  if (!s)
    return __enzyme_autodiff((void *)plain_loss, enzyme_dup, u, g, c, enzyme_const, n);
  return __enzyme_autodiff((void *)loss, enzyme_dup, u, g, c, enzyme_const, n, enzyme_const, s,
                           enzyme_const, cfg);
}

/* the same gradient through __enzyme_augmentfwd / __enzyme_reverse */
__attribute__((noinline)) static double gsplit(double *u, double *g, double c, int64_t n,
                                               const EnzymeCheckpointScheme *s,
                                               EnzymeCkptConfig *cfg) {
  void *t = __enzyme_augmentfwd((void *)loss, enzyme_dup, u, g, c, enzyme_const, n, enzyme_const,
                                s, enzyme_const, cfg);
  return __enzyme_reverse((void *)loss, enzyme_dup, u, g, c, enzyme_const, n, enzyme_const, s,
                          enzyme_const, cfg, 1.0, enzyme_tape, t);
}

/* two seeds of the outputs at once (reverse vector mode), and one, with the plain loops */
__attribute__((noinline)) static D2 gradw(double *u, double *du0, double *du1, double *dout0,
                                          double *dout1, double c, int64_t n,
                                          const EnzymeCheckpointScheme *s,
                                          EnzymeCkptConfig *cfg) {
  double out[3];
  return __enzyme_autodiff_w2((void *)model, enzyme_width, 2, enzyme_dup, u, du0, du1, c,
                              enzyme_dup, out, dout0, dout1, enzyme_const, n, enzyme_const, s,
                              enzyme_const, cfg);
}

__attribute__((noinline)) static double gradp(double *u, double *du, double *dout, double c,
                                              int64_t n) {
  double out[3];
  return __enzyme_autodiff((void *)plain, enzyme_dup, u, du, c, enzyme_dup, out, dout,
                           enzyme_const, n);
}

/* a while loop: steps until the first entry passes *limit */
__attribute__((noinline)) static int wstep(int64_t i, double *u, double c, const double *limit) {
  step(i, u, c);
  return u[0] < *limit;
}

static double wloss(double *u, double c, const double *limit, EnzymeCkptConfig *cfg) {
  phase = 0;
  __enzyme_checkpoint_while((void *)wstep, enzyme_scheme, &EnzymeCkptStoreAll, cfg,
                            enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u, c,
                            limit);
  return u[0] * u[0] + c * u[1] + u[2] * u[3];
}

static double wplain(double *u, double c, const double *limit) {
  phase = 0;
  int64_t i = 0;
  while (wstep(i++, u, c, limit))
    ;
  return u[0] * u[0] + c * u[1] + u[2] * u[3];
}

__attribute__((noinline)) static double wgrad(double *u, double *g, double c, double *limit,
                                              EnzymeCkptConfig *cfg) {
  if (!cfg)
    return __enzyme_autodiff((void *)wplain, enzyme_dup, u, g, c, enzyme_const, limit);
  return __enzyme_autodiff((void *)wloss, enzyme_dup, u, g, c, enzyme_const, limit, enzyme_const,
                           cfg);
}

static void init(double *u) {
  for (int k = 0; k < N; k++) u[k] = 0.3 + 0.15 * k;
}

static const double VU[N] = {1, -0.5, 0.25, 0.7}, VC = 0.3;

/* vector reverse mode (width 2 and 3) and vector forward mode against scalar plain calls */
static void vector_modes(const char *sn, const EnzymeCheckpointScheme *s, int64_t n,
                         int64_t snaps) {
  char name[96];
  const double h = 1e-6;
  double ref_du[3][N], ref_dc[3];
  for (int j = 0; j < 3; j++) {
    double u[N], du[N] = {0}, out[3], dout[3];
    init(u);
    memcpy(dout, SEED[j], sizeof dout);
    ref_dc[j] = __enzyme_autodiff((void *)plain, enzyme_dup, u, du, 0.8, enzyme_dup, out, dout,
                                  enzyme_const, n);
    memcpy(ref_du[j], du, sizeof du);
    /* central differences of <seed, out> along c */
    double up[N], um[N], op[3], om[3], fd = 0;
    init(up);
    init(um);
    plain(up, 0.8 + h, op, n);
    plain(um, 0.8 - h, om, n);
    for (int k = 0; k < 3; k++) fd += SEED[j][k] * (op[k] - om[k]) / (2 * h);
    snprintf(name, sizeof name, "fd_dc_%s_n%lld_s%lld_l%d", sn, (long long)n, (long long)snaps, j);
    check(name, ref_dc[j], fd, 1e-6);
  }
  EnzymeCkptStats stats = {0};
  EnzymeCkptConfig cfg = {snaps, 0, NULL, 0, &stats, 0};
  {
    double u[N], du[2][N] = {{0}}, out[3], dout[2][3];
    init(u);
    memcpy(dout, SEED, sizeof dout);
    D2 dc = __enzyme_autodiff_w2((void *)model, enzyme_width, 2, enzyme_dup, u, du[0], du[1], 0.8,
                                 enzyme_dup, out, dout[0], dout[1], enzyme_const, n, enzyme_const,
                                 s, enzyme_const, &cfg);
    for (int j = 0; j < 2; j++) {
      snprintf(name, sizeof name, "w2_dc_%s_n%lld_s%lld_l%d", sn, (long long)n, (long long)snaps, j);
      check(name, dc.c[j], ref_dc[j], 1e-10);
      for (int k = 0; k < N; k++) {
        snprintf(name, sizeof name, "w2_du_%s_n%lld_s%lld_l%d_%d", sn, (long long)n,
                 (long long)snaps, j, k);
        check(name, du[j][k], ref_du[j][k], 1e-10);
      }
    }
    double pu[N], pout[3];
    init(pu);
    plain(pu, 0.8, pout, n);
    snprintf(name, sizeof name, "w2_state_%s_n%lld_s%lld", sn, (long long)n, (long long)snaps);
    check(name, u[0] + 2 * u[1] + 3 * u[2] + 4 * u[3], pu[0] + 2 * pu[1] + 3 * pu[2] + 4 * pu[3], 0);
    if (snaps > 0 && s == &EnzymeCkptRevolve && stats.max_slots > snaps) {
      printf("CHECK revolve_slots %lld %lld  MISMATCH\n", (long long)stats.max_slots,
             (long long)snaps);
      failures++;
    }
  }
  {
    double u[N], du[3][N] = {{0}}, out[3], dout[3][3];
    init(u);
    memcpy(dout, SEED, sizeof dout);
    D3 dc = __enzyme_autodiff_w3((void *)model, enzyme_width, 3, enzyme_dup, u, du[0], du[1],
                                 du[2], 0.8, enzyme_dup, out, dout[0], dout[1], dout[2],
                                 enzyme_const, n, enzyme_const, s, enzyme_const, &cfg);
    for (int j = 0; j < 3; j++) {
      snprintf(name, sizeof name, "w3_dc_%s_n%lld_s%lld_l%d", sn, (long long)n, (long long)snaps, j);
      check(name, dc.c[j], ref_dc[j], 1e-10);
      for (int k = 0; k < N; k++) {
        snprintf(name, sizeof name, "w3_du_%s_n%lld_s%lld_l%d_%d", sn, (long long)n,
                 (long long)snaps, j, k);
        check(name, du[j][k], ref_du[j][k], 1e-10);
      }
    }
  }
  /* vector forward mode, two directions; dot-product test against the reverse lanes */
  {
    double u[N], du[2][N], out[3], dout[2][3] = {{0}};
    double dcs[2] = {VC, -0.2};
    init(u);
    for (int k = 0; k < N; k++) {
      du[0][k] = VU[k];
      du[1][k] = 0.1 * (k + 1);
    }
    __enzyme_fwddiff_v((void *)model, enzyme_width, 2, enzyme_dup, u, du[0], du[1], 0.8, dcs[0],
                       dcs[1], enzyme_dup, out, dout[0], dout[1], enzyme_const, n, enzyme_const, s,
                       enzyme_const, &cfg);
    for (int d = 0; d < 2; d++) {
      double v[N];
      for (int k = 0; k < N; k++) v[k] = d ? 0.1 * (k + 1) : VU[k];
      for (int j = 0; j < 3; j++) {
        double yJv = 0, Jty = ref_dc[j] * dcs[d];
        for (int k = 0; k < 3; k++) yJv += SEED[j][k] * dout[d][k];
        for (int k = 0; k < N; k++) Jty += ref_du[j][k] * v[k];
        snprintf(name, sizeof name, "fwd_dot_%s_n%lld_s%lld_d%d_l%d", sn, (long long)n,
                 (long long)snaps, d, j);
        check(name, yJv, Jty, 1e-10);
      }
    }
  }
}

/* forward over reverse: width 1 and 2 against the plain loops and central differences */
static void hvp(const char *sn, const EnzymeCheckpointScheme *s, int64_t n, int64_t snaps) {
  char name[96];
  const double h = 1e-6;
  double fd[N + 1];
  {
    double gp[N] = {0}, gm[N] = {0}, up[N], um[N];
    for (int k = 0; k < N; k++) {
      up[k] = 0.3 + 0.15 * k + h * VU[k];
      um[k] = 0.3 + 0.15 * k - h * VU[k];
    }
    double cp = grad(up, gp, 0.8 + h * VC, n, 0, 0), cm = grad(um, gm, 0.8 - h * VC, n, 0, 0);
    for (int k = 0; k < N; k++) fd[k] = (gp[k] - gm[k]) / (2 * h);
    fd[N] = (cp - cm) / (2 * h);
  }
  double ref[N + 1], ref_u[N], ref_ud[N];
  for (int pass = 0; pass < 2; pass++) {
    EnzymeCkptStats stats = {0};
    EnzymeCkptConfig cfg = {snaps, 0, NULL, 0, &stats, 0};
    double u[N], ud[N], g[N] = {0}, hv[N] = {0};
    init(u);
    memcpy(ud, VU, sizeof ud);
    double hc = __enzyme_fwddiff((void *)grad, enzyme_dup, u, ud, enzyme_dup, g, hv, 0.8, VC,
                                 enzyme_const, n, enzyme_const, pass ? s : 0, enzyme_const,
                                 pass ? &cfg : 0);
    if (!pass) {
      memcpy(ref, hv, sizeof hv);
      ref[N] = hc;
      memcpy(ref_u, u, sizeof u);
      memcpy(ref_ud, ud, sizeof ud);
      for (int k = 0; k <= N; k++) {
        snprintf(name, sizeof name, "hvp_fd_n%lld_%d", (long long)n, k);
        check(name, ref[k], fd[k], 1e-5);
      }
      continue;
    }
    for (int k = 0; k <= N; k++) {
      snprintf(name, sizeof name, "hvp_%s_n%lld_s%lld_%d", sn, (long long)n, (long long)snaps, k);
      check(name, k < N ? hv[k] : hc, ref[k], 1e-10);
    }
    for (int k = 0; k < N; k++) {
      snprintf(name, sizeof name, "hvp_state_%s_n%lld_s%lld_%d", sn, (long long)n,
               (long long)snaps, k);
      check(name, u[k], ref_u[k], 1e-13);
      snprintf(name, sizeof name, "hvp_tangent_%s_n%lld_s%lld_%d", sn, (long long)n,
               (long long)snaps, k);
      check(name, ud[k], ref_ud[k], 1e-12);
    }
  }
  /* two products at once: along (VU, VC) and (0.1 (k+1), -0.2), lanes at a byte stride */
  {
    EnzymeCkptConfig cfg = {snaps, 0, NULL, 0, NULL, 0};
    double u[N], ud[2][N], g[N] = {0}, hv[2][N] = {{0}};
    init(u);
    for (int k = 0; k < N; k++) {
      ud[0][k] = VU[k];
      ud[1][k] = 0.1 * (k + 1);
    }
    D2 hc = __enzyme_fwddiff_w2((void *)grad, enzyme_width, 2, enzyme_dupv, sizeof ud[0], u, ud,
                                enzyme_dupv, sizeof hv[0], g, hv, 0.8, VC, -0.2, enzyme_const, n,
                                enzyme_const, s, enzyme_const, &cfg);
    double u1[N], ud1[N], g1[N] = {0}, hv1[N] = {0};
    init(u1);
    for (int k = 0; k < N; k++) ud1[k] = 0.1 * (k + 1);
    double hc1 = __enzyme_fwddiff((void *)grad, enzyme_dup, u1, ud1, enzyme_dup, g1, hv1, 0.8,
                                  -0.2, enzyme_const, n, enzyme_const, (void *)0, enzyme_const,
                                  (void *)0);
    for (int k = 0; k <= N; k++) {
      snprintf(name, sizeof name, "hvp_w2_%s_n%lld_s%lld_l0_%d", sn, (long long)n,
               (long long)snaps, k);
      check(name, k < N ? hv[0][k] : hc.c[0], ref[k], 1e-10);
      snprintf(name, sizeof name, "hvp_w2_%s_n%lld_s%lld_l1_%d", sn, (long long)n,
               (long long)snaps, k);
      check(name, k < N ? hv[1][k] : hc.c[1], k < N ? hv1[k] : hc1, 1e-10);
    }
  }
}

static void while_loop(double limit) {
  char name[96];
  const double h = 1e-6;
  double ref[N + 1];
  for (int pass = 0; pass < 2; pass++) {
    EnzymeCkptStats stats = {0};
    EnzymeCkptConfig cfg = {1, 0, NULL, 0, &stats, 0};
    double u[N], ud[N], g[N] = {0}, hv[N] = {0};
    init(u);
    memcpy(ud, VU, sizeof ud);
    double hc = __enzyme_fwddiff((void *)wgrad, enzyme_dup, u, ud, enzyme_dup, g, hv, 0.8, VC,
                                 enzyme_const, &limit, enzyme_const, pass ? &cfg : 0);
    for (int k = 0; k <= N; k++) {
      double got = k < N ? hv[k] : hc;
      if (!pass) {
        ref[k] = got;
        continue;
      }
      snprintf(name, sizeof name, "while_hvp_%g_%d", limit, k);
      check(name, got, ref[k], 1e-10);
    }
  }
  /* central differences of the gradient (the step count stays the same for small h) */
  double gp[N] = {0}, gm[N] = {0}, up[N], um[N];
  for (int k = 0; k < N; k++) {
    up[k] = 0.3 + 0.15 * k + h * VU[k];
    um[k] = 0.3 + 0.15 * k - h * VU[k];
  }
  double cp = wgrad(up, gp, 0.8 + h * VC, &limit, 0), cm = wgrad(um, gm, 0.8 - h * VC, &limit, 0);
  for (int k = 0; k <= N; k++) {
    snprintf(name, sizeof name, "while_hvp_fd_%g_%d", limit, k);
    check(name, ref[k], k < N ? (gp[k] - gm[k]) / (2 * h) : (cp - cm) / (2 * h), 1e-5);
  }
  /* reverse vector mode through the while loop: both lanes equal scalar gradients */
  EnzymeCkptConfig cfg = {1, 0, NULL, 0, NULL, 0};
  double u[N], du[2][N] = {{0}}, want[N] = {0}, v[N];
  init(u);
  init(v);
  D2 dc = __enzyme_autodiff_w2((void *)wloss, enzyme_width, 2, enzyme_dup, u, du[0], du[1], 0.8,
                               enzyme_const, &limit, enzyme_const, &cfg);
  double wc = __enzyme_autodiff((void *)wplain, enzyme_dup, v, want, 0.8, enzyme_const, &limit);
  for (int j = 0; j < 2; j++) {
    snprintf(name, sizeof name, "while_w2_dc_%g_l%d", limit, j);
    check(name, dc.c[j], wc, 1e-10);
    for (int k = 0; k < N; k++) {
      snprintf(name, sizeof name, "while_w2_du_%g_l%d_%d", limit, j, k);
      check(name, du[j][k], want[k], 1e-10);
    }
  }
}

/* forward over a reverse pass that runs more than once: the program's split pair, and reverse
 * vector mode (each lane's Hessian-vector product against one plain call per seed) */
static void hvp_multi(const char *sn, const EnzymeCheckpointScheme *s, int64_t n) {
  char name[96];
  EnzymeCkptConfig cfg = {2, 0, NULL, 0, NULL, 0};
  double want[N + 1];
  {
    double u[N], ud[N], g[N] = {0}, hv[N] = {0};
    init(u);
    memcpy(ud, VU, sizeof ud);
    want[N] = __enzyme_fwddiff((void *)grad, enzyme_dup, u, ud, enzyme_dup, g, hv, 0.8, VC,
                               enzyme_const, n, enzyme_const, (void *)0, enzyme_const, (void *)0);
    memcpy(want, hv, sizeof hv);
  }
  {
    double u[N], ud[N], g[N] = {0}, hv[N] = {0};
    init(u);
    memcpy(ud, VU, sizeof ud);
    double hc = __enzyme_fwddiff((void *)gsplit, enzyme_dup, u, ud, enzyme_dup, g, hv, 0.8, VC,
                                 enzyme_const, n, enzyme_const, s, enzyme_const, &cfg);
    for (int k = 0; k <= N; k++) {
      snprintf(name, sizeof name, "hvp_split_%s_n%lld_%d", sn, (long long)n, k);
      check(name, k < N ? hv[k] : hc, want[k], 1e-10);
    }
  }
  double u[N], ud[N], du[2][N] = {{0}}, hv[2][N] = {{0}}, dout[2][3];
  init(u);
  memcpy(ud, VU, sizeof ud);
  memcpy(dout, SEED, sizeof dout);
  D2 hc = __enzyme_fwddiff_w2((void *)gradw, enzyme_dup, u, ud, enzyme_dup, du[0], hv[0],
                              enzyme_dup, du[1], hv[1], enzyme_const, dout[0], enzyme_const,
                              dout[1], 0.8, VC, enzyme_const, n, enzyme_const, s, enzyme_const,
                              &cfg);
  for (int j = 0; j < 2; j++) {
    double v[N], vd[N], dv[N] = {0}, hw[N] = {0}, dov[3];
    init(v);
    memcpy(vd, VU, sizeof vd);
    memcpy(dov, SEED[j], sizeof dov);
    double hp = __enzyme_fwddiff((void *)gradp, enzyme_dup, v, vd, enzyme_dup, dv, hw,
                                 enzyme_const, dov, 0.8, VC, enzyme_const, n);
    for (int k = 0; k <= N; k++) {
      snprintf(name, sizeof name, "hvp_width_%s_n%lld_l%d_%d", sn, (long long)n, j, k);
      check(name, k < N ? hv[j][k] : hc.c[j], k < N ? hw[k] : hp, 1e-10);
    }
  }
}

/* __enzyme_augmentfwd once, __enzyme_reverse with enzyme_nofree, then again with another seed */
static void reverse_twice(const char *sn, const EnzymeCheckpointScheme *s, int64_t n) {
  char name[96];
  EnzymeCkptConfig cfg = {2, 0, NULL, 0, NULL, 0};
  double u[N], du[N] = {0}, out[3], dout[3];
  init(u);
  memcpy(dout, SEED[0], sizeof dout);
  void *t = __enzyme_augmentfwd((void *)model, enzyme_dup, u, du, 0.8, enzyme_dup, out, dout,
                                enzyme_const, n, enzyme_const, s, enzyme_const, &cfg);
  for (int j = 0; j < 2; j++) {
    memcpy(dout, SEED[j], sizeof dout);
    memset(du, 0, sizeof du);
    double dc = j ? __enzyme_reverse((void *)model, enzyme_dup, u, du, 0.8, enzyme_dup, out, dout,
                                     enzyme_const, n, enzyme_const, s, enzyme_const, &cfg,
                                     enzyme_tape, t)
                  : __enzyme_reverse((void *)model, enzyme_dup, u, du, 0.8, enzyme_dup, out, dout,
                                     enzyme_const, n, enzyme_const, s, enzyme_const, &cfg,
                                     enzyme_nofree, enzyme_tape, t);
    double v[N], dv[N] = {0}, o[3], dov[3];
    init(v);
    memcpy(dov, SEED[j], sizeof dov);
    double wc = __enzyme_autodiff((void *)plain, enzyme_dup, v, dv, 0.8, enzyme_dup, o, dov,
                                  enzyme_const, n);
    snprintf(name, sizeof name, "twice_dc_%s_n%lld_%d", sn, (long long)n, j);
    check(name, dc, wc, 1e-10);
    for (int k = 0; k < N; k++) {
      snprintf(name, sizeof name, "twice_du_%s_n%lld_%d_%d", sn, (long long)n, j, k);
      check(name, du[k], dv[k], 1e-10);
    }
  }
}

/* annotated loops: outlined into checkpointed loops by the link step */
#define BODY                                                                                  \
  {                                                                                           \
    double t[N];                                                                              \
    for (int k = 0; k < N; k++)                                                               \
      t[k] = u[k] + 0.1 * u[(k + 1) % N] * acc + 0.01 * sin(u[k] + 0.1 * (double)i) + c * w[k]; \
    for (int k = 0; k < N; k++) {                                                             \
      u[k] = t[k];                                                                            \
      w[k] = 0.9 * w[k] + 0.05 * cos(t[k]);                                                   \
    }                                                                                         \
    acc += u[1] * 0.3;                                                                        \
  }
#define RUN(NAME, ATTR)                                                                       \
  __attribute__((noinline)) static double NAME(const double *x, double *w, double c, long n) { \
    double *u = (double *)malloc(N * sizeof(double));                                         \
    for (int k = 0; k < N; k++)                                                               \
      u[k] = x[k];                                                                            \
    double acc = 0.2;                                                                         \
    __enzyme_ptr_size_hint(w, N * sizeof(double));                                            \
    ATTR for (long i = 0; i < n; i++) BODY                                                    \
    double r = acc;                                                                           \
    for (int k = 0; k < N; k++)                                                               \
      r += u[k] * u[k] + w[k];                                                                \
    free(u);                                                                                  \
    return r;                                                                                 \
  }
RUN(aplain, )
RUN(arevolve2, __attribute__((enzyme_checkpoint("revolve", 2))))
RUN(aregular3, __attribute__((enzyme_checkpointing_enable("regular", 3))))
RUN(astoreall, __attribute__((enzyme_checkpoint("store_all"))))

#define GRAD(NAME, F)                                                                         \
  __attribute__((noinline)) static double NAME(double *x, double *dx, double *w, double *dw,  \
                                               double c, long n) {                            \
    return __enzyme_autodiff((void *)F, enzyme_dup, x, dx, enzyme_dup, w, dw, c, enzyme_const, \
                             n);                                                              \
  }
GRAD(gplain, aplain)
GRAD(grevolve2, arevolve2)
GRAD(gregular3, aregular3)
GRAD(gstoreall, astoreall)
#define HVP(NAME, G)                                                                          \
  __attribute__((noinline)) static double NAME(double *x, double *xd, double *dx, double *hx, \
                                               double *w, double *wd, double *dw, double *hw,  \
                                               long n) {                                      \
    return __enzyme_fwddiff((void *)G, enzyme_dup, x, xd, enzyme_dup, dx, hx, enzyme_dup, w,  \
                            wd, enzyme_dup, dw, hw, 0.7, 0.4, enzyme_const, n);               \
  }
HVP(hplain, gplain)
HVP(hrevolve2, grevolve2)
HVP(hregular3, gregular3)
HVP(hstoreall, gstoreall)
static double (*const hvps[4])(double *, double *, double *, double *, double *, double *,
                               double *, double *, long) = {hplain, hrevolve2, hregular3,
                                                            hstoreall};

static void annotated(long n) {
  char name[96];
  const double h = 1e-6;
  double ref[2 * N + 1];
  for (int which = 0; which < 4; which++) {
    double x[N], xd[N], dx[N] = {0}, hx[N] = {0}, w[N], wd[N], dw[N] = {0}, hw[N] = {0};
    for (int k = 0; k < N; k++) {
      x[k] = 0.3 + 0.1 * k;
      xd[k] = 1 - 0.2 * k;
      w[k] = 0.5 - 0.1 * k;
      wd[k] = 0.1 * k;
    }
    double hc = hvps[which](x, xd, dx, hx, w, wd, dw, hw, n);
    for (int k = 0; k <= 2 * N; k++) {
      double got = k < N ? hx[k] : k < 2 * N ? hw[k - N] : hc;
      if (!which) {
        ref[k] = got;
        continue;
      }
      snprintf(name, sizeof name, "annotated_hvp_%d_n%ld_%d", which, n, k);
      check(name, got, ref[k], 1e-10);
    }
  }
  double gp[2 * N] = {0}, gm[2 * N] = {0}, c[2];
  for (int sgn = 0; sgn < 2; sgn++) {
    double e = sgn ? -h : h, x[N], w[N];
    for (int k = 0; k < N; k++) {
      x[k] = 0.3 + 0.1 * k + e * (1 - 0.2 * k);
      w[k] = 0.5 - 0.1 * k + e * 0.1 * k;
    }
    double *g = sgn ? gm : gp;
    c[sgn] = gplain(x, g, w, g + N, 0.7 + e * 0.4, n);
  }
  for (int k = 0; k <= 2 * N; k++) {
    snprintf(name, sizeof name, "annotated_hvp_fd_n%ld_%d", n, k);
    check(name, ref[k], k < 2 * N ? (gp[k] - gm[k]) / (2 * h) : (c[0] - c[1]) / (2 * h), 1e-5);
  }
}

int main(void) {
  const EnzymeCheckpointScheme *schemes[] = {&EnzymeCkptRevolve, &EnzymeCkptBinomial,
                                             &EnzymeCkptPeriodic, &EnzymeCkptStoreAll};
  const char *names[] = {"revolve", "binomial", "periodic", "store_all"};
  int64_t steps[] = {0, 1, 6, 13};
  int64_t snaps[] = {1, 3};
  for (unsigned a = 0; a < 4; a++)
    for (unsigned b = 0; b < 4; b++)
      for (unsigned c = 0; c < 2; c++) {
        vector_modes(names[b], schemes[b], steps[a], snaps[c]);
        hvp(names[b], schemes[b], steps[a], snaps[c]);
      }
  for (unsigned b = 0; b < 4; b++) {
    reverse_twice(names[b], schemes[b], 9);
    hvp_multi(names[b], schemes[b], 1);
    hvp_multi(names[b], schemes[b], 10);
  }
  for (long n = 0; n < 10; n += 3) annotated(n);
  double limits[] = {0.1, 1.0, 1.6};
  for (unsigned l = 0; l < 3; l++) while_loop(limits[l]);
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  return 0;
}
