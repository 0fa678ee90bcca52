/* A library's printf-style error reporter reached by differentiated code, and run: a solver
   step reports a rejected step through `report(mem, code, fmt, ...)` (SUNDIALS'
   cvProcessError), passing active doubles among its variadic arguments. The reporter formats
   them into a local buffer with vsnprintf, counts in an integer field of the solver's state,
   and hands the text to an error handler through a function pointer in that state (the
   library's default one, or the user's). A variadic function cannot be differentiated, but
   this one writes nothing a derivative lives in: its calls carry no derivative, as printf's.
   It was refused ("cannot differentiate variadic function 'report'"). Reverse mode against
   central differences, forward against reverse. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 3

typedef void (*Handler)(int code, const char *where, const char *msg, void *data);
typedef struct {
  double *y;
  double h;
  int nreports;
  long last_code;
  Handler handler;
  void *handler_data;
} Solver;

static char last_text[128];
static int user_calls;

static void default_handler(int code, const char *where, const char *msg, void *data) {
  Solver *s = data;
  if (s->nreports < 0)        /* never: the library's own printing, kept quiet here */
    fprintf(stderr, "[%s] error %d: %s\n", where, code, msg);
  snprintf(last_text, sizeof last_text, "%s: %s", where, msg);
}

static void user_handler(int code, const char *where, const char *msg, void *data) {
  (void)where; (void)data;
  user_calls += code < 0;
  strncpy(last_text, msg, sizeof last_text - 1);
}

__attribute__((noinline)) void report(Solver *s, int code, const char *where, const char *fmt,
                                      ...) {
  char msg[96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  s->nreports++;
  s->last_code = code;
  if (s->handler)
    s->handler(code, where, msg, s->handler_data);
  else
    fprintf(stderr, "%s\n", msg);
}

/* one step per component; a step whose estimate exceeds the tolerance is reported and halved */
__attribute__((noinline)) static double advance(Solver *s, double t) {
  double acc = 0;
  for (int i = 0; i < N; i++) {
    double y = s->y[i], est = s->h * y * y;
    if (est > 0.5) {
      report(s, -3, "advance", "step %d rejected at t = %g: estimate %.3e > %g (y = %g)", i, t,
             est, 0.5, y);
      s->h *= 0.5;
      est = s->h * y * y;
    }
    s->y[i] = y + s->h * sin(y) + est;
    acc += s->y[i];
  }
  return acc;
}

static int use_user_handler;

static double f(double *y) {
  Solver s = {y, 0.3, 0, 0, default_handler, 0};
  s.handler_data = &s;
  if (use_user_handler) s.handler = user_handler;
  double r = 0;
  for (int k = 0; k < 3; k++) r += advance(&s, 0.1 * k);
  return r + s.h * s.nreports;
}

static void run(const char *side, const double *p0) {
  double p[N], dp[N] = {0}, t[N], dot = 0, hh = 1e-6;
  memcpy(p, p0, sizeof p);
  double q[N], dq[N] = {0};
  memcpy(q, p0, sizeof q);
  __enzyme_autodiff((void *)f, enzyme_dup, q, dq);
  for (int i = 0; i < N; i++) {
    double up[N], down[N];
    memcpy(up, p0, sizeof up);
    memcpy(down, p0, sizeof down);
    up[i] += hh;
    down[i] -= hh;
    double expect = (f(up) - f(down)) / (2 * hh);
    char name[32];
    snprintf(name, sizeof name, "%s_dy[%d]", side, i);
    check(name, dq[i], expect);
    t[i] = cos(1.0 + i);
    dot += t[i] * dq[i];
  }
  double r[N];
  memcpy(r, p0, sizeof r);
  char name[32];
  snprintf(name, sizeof name, "%s_fwd", side);
  check(name, __enzyme_fwddiff((void *)f, enzyme_dup, r, t), dot);
}

int main(void) {
  const double p0[N] = {0.4, 1.7, 1.1};   /* components 1 and 2 are reported */
  run("default", p0);
  check("reported", strstr(last_text, "rejected") != NULL, 1);
  use_user_handler = 1;
  run("user", p0);
  check("user_reports", user_calls > 0, 1);
  return failed != 0;
}
