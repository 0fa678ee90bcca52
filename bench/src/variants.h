/* The list of gradient variants a binary was built with. */
#ifndef BENCH_VARIANTS_H
#define BENCH_VARIANTS_H
#ifndef BENCH_NO_ENZYME
#define BENCH_V_ENZYME "enzyme,"
#else
#define BENCH_V_ENZYME ""
#endif
#ifdef BENCH_HAVE_ADOLC
#define BENCH_V_ADOLC "adolc,"
#else
#define BENCH_V_ADOLC ""
#endif
#define BENCH_VARIANTS(extra) BENCH_V_ENZYME BENCH_V_ADOLC extra
#define BENCH_DEFINE_MARKERS int enzyme_dup, enzyme_const, enzyme_dupnoneed, enzyme_out;
#endif
