/* ADBench bundle adjustment residuals, after ADBench's C++ reference (src/cpp/shared/ba.h).
 * Camera (11 numbers): Rodrigues rotation (3), centre C (3), focal length f (1),
 * principal point x0 (2), radial distortion k1 k2 (2). */
#ifndef BENCH_BA_H
#define BENCH_BA_H
#include <math.h>

enum { BA_ROT_IDX = 0, BA_C_IDX = 3, BA_F_IDX = 6, BA_X0_IDX = 7, BA_RAD_IDX = 9 };

template <class T> static T ba_sqsum(int n, const T *x) {
  T res = 0;
  for (int i = 0; i < n; i++) res = res + x[i] * x[i];
  return res;
}

template <class T> static void ba_cross(const T *a, const T *b, T *out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

template <class T> static void ba_rodrigues_rotate_point(const T *rot, const T *pt, T *rotatedPt) {
  T sqtheta = ba_sqsum(3, rot);
  if (sqtheta != 0) {
    T theta = sqrt(sqtheta);
    T costheta = cos(theta);
    T sintheta = sin(theta);
    T theta_inverse = 1.0 / theta;
    T w[3];
    for (int i = 0; i < 3; i++) w[i] = rot[i] * theta_inverse;
    T w_cross_pt[3];
    ba_cross(w, pt, w_cross_pt);
    T tmp = (w[0] * pt[0] + w[1] * pt[1] + w[2] * pt[2]) * (1. - costheta);
    for (int i = 0; i < 3; i++)
      rotatedPt[i] = pt[i] * costheta + w_cross_pt[i] * sintheta + w[i] * tmp;
  } else {
    T rot_cross_pt[3];
    ba_cross(rot, pt, rot_cross_pt);
    for (int i = 0; i < 3; i++) rotatedPt[i] = pt[i] + rot_cross_pt[i];
  }
}

template <class T> static void ba_radial_distort(const T *rad_params, T *proj) {
  T rsq = ba_sqsum(2, proj);
  T L = 1. + rad_params[0] * rsq + rad_params[1] * rsq * rsq;
  proj[0] = proj[0] * L;
  proj[1] = proj[1] * L;
}

template <class T> static void ba_project(const T *cam, const T *X, T *proj) {
  const T *C = &cam[BA_C_IDX];
  T Xo[3], Xcam[3];
  Xo[0] = X[0] - C[0];
  Xo[1] = X[1] - C[1];
  Xo[2] = X[2] - C[2];
  ba_rodrigues_rotate_point(&cam[BA_ROT_IDX], Xo, Xcam);
  proj[0] = Xcam[0] / Xcam[2];
  proj[1] = Xcam[1] / Xcam[2];
  ba_radial_distort(&cam[BA_RAD_IDX], proj);
  proj[0] = proj[0] * cam[BA_F_IDX] + cam[BA_X0_IDX + 0];
  proj[1] = proj[1] * cam[BA_F_IDX] + cam[BA_X0_IDX + 1];
}

template <class T>
void ba_compute_reproj_error(const T *cam, const T *X, const T *w, const double *feat, T *err) {
  T proj[2];
  ba_project(cam, X, proj);
  err[0] = (*w) * (proj[0] - feat[0]);
  err[1] = (*w) * (proj[1] - feat[1]);
}

template <class T> void ba_compute_zach_weight_error(const T *w, T *err) {
  *err = 1 - (*w) * (*w);
}
#endif
