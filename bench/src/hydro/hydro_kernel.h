/* The time steps of the Lagrangian hydrodynamics benchmark (bench/hydro.py), written once for
   `real` = double (hydro.c, differentiated by enzyme-cc) and `real` = adouble (hydro_adolc.cpp).
   The includer defines `real` and includes hydro_mesh.h first. Our own code.

   One step: per element the pressure + artificial viscosity force p dV/dx_c and an hourglass
   force on each of its 8 corners (an element-indexed corner array, no scatter, so the OpenMP
   loop has no races); per node a gather of its corners' forces (under MPI the shared node
   planes are then summed with the neighbour); acceleration, symmetry planes, velocity and
   position; per element the new volume, artificial viscosity, a predictor-corrector energy
   update with the equation of state, and the Courant and volume-change limits, whose minimum
   over the elements (all ranks) is the next step's dt. The objective is the total energy
   (internal + kinetic) plus 0.1 x the sum of the final node coordinates. */

#ifdef __cplusplus
#define HYDRO_NEW(n) (new real[(size_t)(n)])
#define HYDRO_DEL(p) (delete[](p))
#else
#define HYDRO_NEW(n) ((real *)malloc(sizeof(real) * (size_t)(n)))
#define HYDRO_DEL(p) free(p)
#endif

/* the volume of a hex as 6 tetrahedra around its 0-7 diagonal (one per monotone path from
   corner 0 to 7; odd paths are mirrored, hence the signs); with gx != 0 also dV/dx_c */
static real hex_volume(const real *x, const real *y, const real *z, real *gx, real *gy,
                       real *gz) {
  static const int ta[6] = {1, 2, 1, 2, 4, 4}, tb[6] = {3, 3, 5, 6, 5, 6};
  static const double ts[6] = {1, -1, -1, 1, 1, -1};
  real vol = 0.0;
  if (gx)
    for (int c = 0; c < 8; c++) gx[c] = gy[c] = gz[c] = 0.0;
  real cx = x[7] - x[0], cy = y[7] - y[0], cz = z[7] - z[0];
  for (int t = 0; t < 6; t++) {
    int a = ta[t], b = tb[t];
    real ax = x[a] - x[0], ay = y[a] - y[0], az = z[a] - z[0];
    real bx = x[b] - x[0], by = y[b] - y[0], bz = z[b] - z[0];
    real bcx = by * cz - bz * cy, bcy = bz * cx - bx * cz, bcz = bx * cy - by * cx;
    double s = ts[t] / 6.0;
    vol += s * (ax * bcx + ay * bcy + az * bcz);
    if (gx) {
      real cax = cy * az - cz * ay, cay = cz * ax - cx * az, caz = cx * ay - cy * ax;
      real abx = ay * bz - az * by, aby = az * bx - ax * bz, abz = ax * by - ay * bx;
      gx[a] += s * bcx; gy[a] += s * bcy; gz[a] += s * bcz;
      gx[b] += s * cax; gy[b] += s * cay; gz[b] += s * caz;
      gx[7] += s * abx; gy[7] += s * aby; gz[7] += s * abz;
      gx[0] -= s * (bcx + cax + abx); gy[0] -= s * (bcy + cay + aby);
      gz[0] -= s * (bcz + caz + abz);
    }
  }
  return vol;
}

#ifdef USE_MPI
/* adds the neighbours' values of the shared node planes (ncomp values per node) to this rank's:
   pairs (r, r + 1) with r even exchange first, then those with r odd (MPI_Sendrecv) */
static void sum_planes(const Mesh *m, real *f, int ncomp, real *buf) {
  int cnt = ncomp * m->npl;
  for (int phase = 0; phase < 2; phase++) {
    int nb = -1;
    real *plane = f;
    if (m->rank % 2 == phase && m->rank + 1 < m->nranks) {
      nb = m->rank + 1;
      plane = f + (size_t)cnt * m->nz;
    } else if (m->rank % 2 != phase && m->rank > 0) {
      nb = m->rank - 1;
    }
    if (nb < 0) continue;
    MPI_Sendrecv(plane, cnt, MPI_DOUBLE, nb, 7, buf, cnt, MPI_DOUBLE, nb, 7, m->comm,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < cnt; i++) plane[i] += buf[i];
  }
}
#endif

#ifndef HYDRO_NO_SETUP
/* reference volumes and masses (density 1); the caller sums shared nodal masses under MPI */
static void hydro_masses(Mesh *m) {
  for (int e = 0; e < m->ne; e++) {
    real px[8], py[8], pz[8];
    for (int c = 0; c < 8; c++) {
      int nd = m->elem_node[8 * e + c];
      px[c] = m->x0[nd]; py[c] = m->y0[nd]; pz[c] = m->z0[nd];
    }
    double v = hex_volume(px, py, pz, 0, 0, 0);
    m->volo[e] = v; m->emass[e] = v;
    for (int c = 0; c < 8; c++) m->nmass[m->elem_node[8 * e + c]] += v / 8;
  }
}
#endif

real hydro_run(const Mesh *m, const real *e0, const real *v0, int steps) {
  /* hourglass base vectors: products of the corners' +-1 signs orthogonal to linear fields */
  static const double G[4][8] = {{1, 1, -1, -1, -1, -1, 1, 1}, {1, -1, 1, -1, -1, 1, -1, 1},
                                 {1, -1, -1, 1, 1, -1, -1, 1}, {-1, 1, 1, -1, 1, -1, -1, 1}};
  const int ne = m->ne, nn = m->nn;
  real *x = HYDRO_NEW(3 * nn), *u = HYDRO_NEW(3 * nn), *f = HYDRO_NEW(3 * nn);
  real *e = HYDRO_NEW(ne), *p = HYDRO_NEW(ne), *q = HYDRO_NEW(ne), *v = HYDRO_NEW(ne);
  real *ss = HYDRO_NEW(ne), *fe = HYDRO_NEW(24 * ne);
#ifdef USE_MPI
  real *buf = HYDRO_NEW(3 * m->npl);
#endif
  for (int nd = 0; nd < nn; nd++) {
    x[nd] = m->x0[nd]; x[nn + nd] = m->y0[nd]; x[2 * nn + nd] = m->z0[nd];
  }
  for (int i = 0; i < 3 * nn; i++) u[i] = v0[i];
  for (int i = 0; i < ne; i++) {
    e[i] = e0[i]; v[i] = 1.0; q[i] = 0.0;
    p[i] = (HYDRO_GAMMA - 1) * e[i];
    ss[i] = sqrt(HYDRO_GAMMA * p[i]);
  }
  real dt = m->dt0;
  for (int step = 0; step < steps; step++) {
    /* corner forces per element */
#pragma omp parallel for schedule(static)
    for (int el = 0; el < ne; el++) {
      const int *nds = m->elem_node + 8 * el;
      real px[8], py[8], pz[8], gx[8], gy[8], gz[8];
      for (int c = 0; c < 8; c++) {
        px[c] = x[nds[c]]; py[c] = x[nn + nds[c]]; pz[c] = x[2 * nn + nds[c]];
      }
      real vol = hex_volume(px, py, pz, gx, gy, gz);
      real sig = p[el] + q[el];
      real coef = HYDRO_HG / 8 * m->emass[el] * ss[el] / cbrt(vol);
      real *fc = fe + 24 * el;
      for (int c = 0; c < 8; c++) {
        fc[3 * c] = sig * gx[c]; fc[3 * c + 1] = sig * gy[c]; fc[3 * c + 2] = sig * gz[c];
      }
      for (int d = 0; d < 3; d++) {
        real hm[4];
        for (int k = 0; k < 4; k++) {
          hm[k] = 0.0;
          for (int c = 0; c < 8; c++) hm[k] += G[k][c] * u[d * nn + nds[c]];
        }
        for (int c = 0; c < 8; c++)
          fc[3 * c + d] -= coef * (G[0][c] * hm[0] + G[1][c] * hm[1] + G[2][c] * hm[2] +
                                   G[3][c] * hm[3]);
      }
    }
    /* gather per node from its elements' corners */
#pragma omp parallel for schedule(static)
    for (int nd = 0; nd < nn; nd++) {
      real fx = 0.0, fy = 0.0, fz = 0.0;
      for (int i = m->node_start[nd]; i < m->node_start[nd + 1]; i++) {
        const real *fc = fe + 3 * m->node_corner[i];
        fx += fc[0]; fy += fc[1]; fz += fc[2];
      }
      f[3 * nd] = fx; f[3 * nd + 1] = fy; f[3 * nd + 2] = fz;
    }
#ifdef USE_MPI
    sum_planes(m, f, 3, buf);
#endif
    /* acceleration, symmetry planes, velocity (tiny values cut to 0) and position */
#pragma omp parallel for schedule(static)
    for (int nd = 0; nd < nn; nd++) {
      for (int d = 0; d < 3; d++) {
        real un = u[d * nn + nd] + f[3 * nd + d] / m->nmass[nd] * dt;
        if (m->bc[nd] >> d & 1) un = 0.0;
        if (fabs(un) < HYDRO_UCUT) un = 0.0;
        u[d * nn + nd] = un;
        x[d * nn + nd] += un * dt;
      }
    }
    /* volume, artificial viscosity, energy and equation of state, time-step limits */
    double big = 1e30;
    real dtc_min = big, dtv_min = big;
#pragma omp parallel for schedule(static) reduction(min : dtc_min, dtv_min)
    for (int el = 0; el < ne; el++) {
      const int *nds = m->elem_node + 8 * el;
      real px[8], py[8], pz[8];
      for (int c = 0; c < 8; c++) {
        px[c] = x[nds[c]]; py[c] = x[nn + nds[c]]; pz[c] = x[2 * nn + nds[c]];
      }
      real vol = hex_volume(px, py, pz, 0, 0, 0);
      real vnew = vol / m->volo[el];
      if (fabs(vnew - 1.0) < HYDRO_VCUT) vnew = 1.0;
      real delv = vnew - v[el];
      real vdov = delv / (0.5 * (vnew + v[el]) * dt);
      real len = cbrt(vol);
      real qn = 0.0;
      if (vdov < 0.0) {                       /* compression only */
        real dl = len * vdov;
        qn = m->emass[el] / vol * (HYDRO_QQUAD * dl * dl - HYDRO_QLIN * ss[el] * dl);
      }
      real e1 = e[el] - delv * (p[el] + qn);  /* predictor */
      if (e1 < HYDRO_EMIN) e1 = HYDRO_EMIN;
      real p1 = fmax((HYDRO_GAMMA - 1) * e1 / vnew, HYDRO_PMIN);
      real en = e[el] - 0.5 * delv * (p[el] + p1) - delv * qn;  /* corrector */
      if (en < HYDRO_EMIN) en = HYDRO_EMIN;
      if (fabs(en) < HYDRO_ECUT) en = 0.0;
      real pn = fmax((HYDRO_GAMMA - 1) * en / vnew, HYDRO_PMIN);
      if (fabs(pn) < HYDRO_PCUT) pn = 0.0;
      real ss2 = HYDRO_GAMMA * pn * vnew;
      if (ss2 < HYDRO_SS2MIN) ss2 = HYDRO_SS2MIN;
      real ssn = sqrt(ss2);
      e[el] = en; p[el] = pn; q[el] = qn; v[el] = vnew; ss[el] = ssn;
      real den = ssn;
      if (vdov < 0.0) den = den - 2.0 * HYDRO_QQUAD * len * vdov;
      real dtc = HYDRO_COUR * len / den;
      if (dtc < dtc_min) dtc_min = dtc;
      if (fabs(vdov) > 1e-20) {
        real dtv = HYDRO_DVMAX / fabs(vdov);
        if (dtv < dtv_min) dtv_min = dtv;
      }
    }
    real dtn = fmin(dtc_min, dtv_min);
#ifdef USE_MPI
    real dtg;
    MPI_Allreduce(&dtn, &dtg, 1, MPI_DOUBLE, MPI_MIN, m->comm);
    dtn = dtg;
#endif
    if (dtn > 1.2 * dt) dtn = 1.2 * dt;
    dt = dtn;
  }
  /* objective: this rank's elements and owned nodes */
  real ei = 0.0, ek = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : ei)
  for (int el = 0; el < ne; el++) ei += e[el] * m->volo[el];
#pragma omp parallel for schedule(static) reduction(+ : ek)
  for (int nd = 0; nd < nn; nd++)
    ek += m->own[nd] * (0.5 * m->nmass[nd] * (u[nd] * u[nd] + u[nn + nd] * u[nn + nd] +
                                               u[2 * nn + nd] * u[2 * nn + nd]) +
                        0.1 * (x[nd] + x[nn + nd] + x[2 * nn + nd]));
  real obj = ei + ek;
  HYDRO_DEL(x); HYDRO_DEL(u); HYDRO_DEL(f); HYDRO_DEL(e); HYDRO_DEL(p); HYDRO_DEL(q);
  HYDRO_DEL(v); HYDRO_DEL(ss); HYDRO_DEL(fe);
#ifdef USE_MPI
  HYDRO_DEL(buf);
  real tot;
  MPI_Allreduce(&obj, &tot, 1, MPI_DOUBLE, MPI_SUM, m->comm);
  /* every rank returns its share: the ranks' results sum to the global objective */
  obj = tot / m->nranks;
#endif
  return obj;
}
