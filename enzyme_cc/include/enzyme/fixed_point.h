/* enzyme-cc's version of Enzyme's <enzyme/fixed_point.h>.
 *
 *   __enzyme_fixed_point((void *)step, enzyme_fp_state, z, bytes, ...,
 *                        [enzyme_fp_reduction, r (double),]
 *                        [enzyme_fp_max_iters, n (int64_t),]
 *                        [enzyme_fp_control, control,]
 *                        [enzyme_checkpoint_region, ptr, bytes,] ...
 *                        args...);
 *
 * runs `int64_t i = 0; while (step(i++, args...));`, where `int step(int64_t i, args...)`
 * updates the state z (doubles; `bytes` long; one of the step's pointer arguments, or memory
 * the step reaches itself, such as a global or a member of one) in place and returns whether
 * to go on. Derivatives do not go through every
 * iteration: at the converged state z* = phi(z*, x), reverse mode iterates the adjoint
 * w <- zbar + phi_z^T w with the reverse of one step and then adds phi_x^T w to the inputs'
 * adjoints (the state's shadow is zero afterwards); forward mode iterates the tangent
 * s <- phi_z s + phi_x xdot from s = 0. Either stops once the squared 2-norm of the update
 * has fallen below r (default 1e-12) times its first value, grows after five passes, or after
 * n passes (default 1000, 0: no limit); a control function `int control(double *cumul,
 * double *reduction)` decides instead (called with *cumul = -1 first, then with each squared
 * norm; returns whether to iterate again). The state, the checkpoint regions and the mutable
 * globals the step names are kept at the converged state for the reverse pass, which puts
 * that memory back as it found it; other memory the step reads must not change between the
 * loop and the reverse pass.
 *
 * `uint64_t __enzyme_iter(uint64_t a, uint64_t b);` (declare it yourself, as in Enzyme) is a
 * in the program and a + k*b in its k-th derivative (e.g. the number of terms of a series
 * that is differentiated k times).
 */
#ifndef ENZYME_CC_FIXED_POINT_H
#define ENZYME_CC_FIXED_POINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int enzyme_fp_state;
extern int enzyme_fp_reduction;
extern int enzyme_fp_max_iters;
extern int enzyme_fp_control;
extern int enzyme_checkpoint_region;

void __enzyme_fixed_point(void *step, ...);
void __enzyme_set_fixed_point(double reduction, int64_t max_iters, void *control, ...);

#ifdef __cplusplus
}
#endif

#endif
