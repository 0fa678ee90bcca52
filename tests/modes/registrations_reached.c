/* Registrations apply wherever their function is reached, as in Enzyme's derivative builders:
   through a function pointer held in a struct (a straight-through quantizer with a custom
   gradient and forward derivative, a log-like function, an inactive one), and when the function
   itself is handed to the marker. A registration for one mode only leaves the other mode to
   the function's body. Before, the pointer's targets and the marker's function were
   differentiated as code (floor -> 0, the Newton loop's derivative, x^2 -> 2x) and the
   other-mode cases were refused. Also: enzyme_const_return alone in __enzyme_fwddiff returns
   the primal (the link stopped with invalid IR). */
#include <math.h>
#include <stdio.h>
int enzyme_dup, enzyme_const, enzyme_const_return;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double quantize(double x) { return floor(8 * x) / 8; }
typedef struct { void *tape; double primal; } QAug;
QAug q_aug(double x) { QAug r = {0, floor(8 * x) / 8}; return r; }
double q_rev(double x, double d, void *tape) { return d; }        /* straight through */
double q_fwd(double x, double dx) { return dx; }
void *__enzyme_register_gradient_quantize[3] = {(void *)quantize, (void *)q_aug, (void *)q_rev};
void *__enzyme_register_derivative_quantize[2] = {(void *)quantize, (void *)q_fwd};

/* log by three Newton steps from y = 0: declared log-like, so its derivative is 1/x */
__attribute__((noinline)) double newton_log(double x) {
  double y = 0;
  for (int i = 0; i < 3; i++) y = y - 1 + x * exp(-y);
  return y;
}
void *__enzyme_function_like[2] = {(void *)newton_log, (void *)"log"};
__attribute__((noinline)) double counted(double x) { return x * x; }
void *__enzyme_inactivefn[1] = {(void *)counted};

/* a gradient only: forward mode differentiates the body, d(x|x|) = 2|x| */
__attribute__((noinline)) double sabs(double x) { return x < 0 ? -x : x; }
typedef struct { void *tape; double primal; } SAug;
SAug s_aug(double x) { SAug r = {0, x < 0 ? -x : x}; return r; }
double s_rev(double x, double d, void *tape) { return x < 0 ? -d : d; }
void *__enzyme_register_gradient_sabs[3] = {(void *)sabs, (void *)s_aug, (void *)s_rev};
/* a forward derivative only: reverse mode differentiates the body */
__attribute__((noinline)) double mycos(double x) { return cos(x); }
double mycos_fwd(double x, double dx) { return -sin(x) * dx; }
void *__enzyme_register_derivative_mycos[2] = {(void *)mycos, (void *)mycos_fwd};

typedef struct { double (*op)(double); } Layer;
double through(double w, const Layer *L) { return 3 * L->op(w); }
double f_sabs(double x) { return x * sabs(x); }
double g_mycos(double x) { return x * mycos(x); }
double e_exp(double r) { return exp(-r); }

int main(void) {
  Layer q = {quantize}, l = {newton_log}, c = {counted};
  double x = 2.0;
  printf("quantize pointer rev %.10g fwd %.10g | 3 3\n",
         __enzyme_autodiff((void *)through, 0.3, enzyme_const, &q),
         __enzyme_fwddiff((void *)through, 0.3, 1.0, enzyme_const, &q));
  printf("quantize marker rev %.10g fwd %.10g | 1 1\n", __enzyme_autodiff((void *)quantize, 0.3),
         __enzyme_fwddiff((void *)quantize, 0.3, 1.0));
  printf("log-like pointer rev %.10g fwd %.10g | %.10g %.10g\n",
         __enzyme_autodiff((void *)through, x, enzyme_const, &l),
         __enzyme_fwddiff((void *)through, x, 1.0, enzyme_const, &l), 3 / x, 3 / x);
  printf("log-like marker %.10g | %.10g\n", __enzyme_autodiff((void *)newton_log, x), 1 / x);
  printf("inactive pointer rev %.10g fwd %.10g | 0 0\n",
         __enzyme_autodiff((void *)through, x, enzyme_const, &c),
         __enzyme_fwddiff((void *)through, x, 1.0, enzyme_const, &c));
  printf("gradient only, forward %.10g | %.10g\n", __enzyme_fwddiff((void *)f_sabs, -0.7, 1.0),
         1.4);   /* 2|x| */
  printf("forward only, reverse %.10g | %.10g\n", __enzyme_autodiff((void *)g_mycos, 0.7),
         cos(0.7) - 0.7 * sin(0.7));
  printf("const return %.10g | %.10g\n", __enzyme_fwddiff((void *)e_exp, enzyme_const_return,
                                                          0.7, 1.0), exp(-0.7));
  return 0;
}
