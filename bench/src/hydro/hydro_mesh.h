/* Mesh, constants and initial state of the Lagrangian hydrodynamics benchmark (bench/hydro.py).
   Valid C and C++: hydro.c (enzyme-cc: serial, OpenMP, MPI) and hydro_adolc.cpp (ADOL-C) share
   it. Our own code.

   The mesh is a structured nx x nx x nz box of hexahedra stored as an unstructured mesh: an
   element -> 8 node index array and a node -> (element, corner) list for gathers. Under MPI each
   rank holds a slab of nz element layers of the global nx x nx x nx box (nz = nx / ranks) and
   nz + 1 node planes; a rank's top node plane is its upper neighbour's bottom plane. */
#ifndef HYDRO_MESH_H
#define HYDRO_MESH_H
#include <math.h>
#include <stdlib.h>
#ifdef USE_MPI
#include <mpi.h>
#endif

/* corner c of a hex sits at (i + (c & 1), j + (c >> 1 & 1), k + (c >> 2)) */
#define HYDRO_GAMMA 1.4  /* ideal gas */
#define HYDRO_QQUAD 1.0  /* quadratic and linear artificial viscosity coefficients */
#define HYDRO_QLIN 0.3
#define HYDRO_HG 0.05    /* hourglass control */
#define HYDRO_COUR 0.5   /* Courant factor */
#define HYDRO_DVMAX 0.05 /* largest relative volume change per step */
#define HYDRO_EMIN 1e-9  /* clamps and cut-offs */
#define HYDRO_PMIN 0.0
#define HYDRO_ECUT 1e-12
#define HYDRO_PCUT 1e-12
#define HYDRO_UCUT 1e-12
#define HYDRO_VCUT 1e-13
#define HYDRO_SS2MIN 1e-20

typedef struct {
  int nx, nz;         /* elements per side in x and y, element layers in z here */
  int kz0;            /* global index of the first element layer here */
  int ne, nn, npl;    /* elements, nodes, nodes per plane */
  int *elem_node;     /* 8 node indices per element */
  int *node_start;    /* nn + 1 offsets into node_corner */
  int *node_corner;   /* 8 * element + corner of every element touching the node */
  int *bc;            /* per node: 1 on x = 0, 2 on y = 0, 4 on z = 0 (symmetry planes) */
  double *x0, *y0, *z0;
  double *volo, *emass, *nmass;
  double *own;        /* 1 where this rank counts the node in the objective, else 0 */
  double dt0;
  int rank, nranks;
#ifdef USE_MPI
  MPI_Comm comm;
#endif
} Mesh;

/* a deterministic value in [0, 1) from an integer: every rank gets the same for a global id */
static double hydro_hash(unsigned g) {
  g ^= g >> 16; g *= 0x7feb352dU; g ^= g >> 15; g *= 0x846ca68bU; g ^= g >> 16;
  return (g & 0xffffff) / 16777216.0;
}

/* builds this rank's slab; nodal masses of shared planes are summed by the caller under MPI */
static void hydro_mesh(Mesh *m, int nx, int nz, int kz0, int rank, int nranks) {
  int n1 = nx + 1;
  double h = 1.0 / nx;
  m->nx = nx; m->nz = nz; m->kz0 = kz0; m->rank = rank; m->nranks = nranks;
  m->ne = nx * nx * nz; m->npl = n1 * n1; m->nn = m->npl * (nz + 1);
  m->elem_node = (int *)malloc(sizeof(int) * 8 * m->ne);
  m->node_start = (int *)calloc(m->nn + 1, sizeof(int));
  m->node_corner = (int *)malloc(sizeof(int) * 8 * m->ne);
  m->bc = (int *)malloc(sizeof(int) * m->nn);
  m->x0 = (double *)malloc(sizeof(double) * m->nn);
  m->y0 = (double *)malloc(sizeof(double) * m->nn);
  m->z0 = (double *)malloc(sizeof(double) * m->nn);
  m->nmass = (double *)calloc(m->nn, sizeof(double));
  m->own = (double *)malloc(sizeof(double) * m->nn);
  m->volo = (double *)malloc(sizeof(double) * m->ne);
  m->emass = (double *)malloc(sizeof(double) * m->ne);
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= nx; j++)
      for (int i = 0; i <= nx; i++) {
        int nd = (k * n1 + j) * n1 + i;
        /* a slightly distorted box, so that no two elements are alike */
        double d = 0.04 * h * (hydro_hash(7u * (nd + (unsigned)(kz0 * m->npl))) - 0.5);
        m->x0[nd] = i * h + (i > 0 && i < nx ? d : 0);
        m->y0[nd] = j * h + (j > 0 && j < nx ? d : 0);
        m->z0[nd] = (k + kz0) * h;
        m->bc[nd] = (i == 0) | (j == 0) << 1 | (k + kz0 == 0) << 2;
        m->own[nd] = (k == 0 && rank > 0) ? 0.0 : 1.0;
      }
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < nx; j++)
      for (int i = 0; i < nx; i++) {
        int e = (k * nx + j) * nx + i;
        for (int c = 0; c < 8; c++) {
          int nd = ((k + (c >> 2)) * n1 + j + (c >> 1 & 1)) * n1 + i + (c & 1);
          m->elem_node[8 * e + c] = nd;
          m->node_start[nd + 1]++;
        }
      }
  for (int nd = 0; nd < m->nn; nd++) m->node_start[nd + 1] += m->node_start[nd];
  int *fill = (int *)calloc(m->nn, sizeof(int));
  for (int e = 0; e < m->ne; e++)
    for (int c = 0; c < 8; c++) {
      int nd = m->elem_node[8 * e + c];
      m->node_corner[m->node_start[nd] + fill[nd]++] = 8 * e + c;
    }
  free(fill);
  m->dt0 = 0.05 * h;
}

static inline void hydro_free(Mesh *m) {
  free(m->elem_node); free(m->node_start); free(m->node_corner); free(m->bc);
  free(m->x0); free(m->y0); free(m->z0); free(m->nmass); free(m->own); free(m->volo);
  free(m->emass);
}

/* initial element energies (per unit reference volume: a smooth hot corner plus noise) and node
   velocities (three blocks of nn: small noise, zero normal to the symmetry planes) */
static void hydro_init(const Mesh *m, double *e0, double *v0) {
  double h = 1.0 / m->nx;
  for (int k = 0; k < m->nz; k++)
    for (int j = 0; j < m->nx; j++)
      for (int i = 0; i < m->nx; i++) {
        int e = (k * m->nx + j) * m->nx + i;
        double cx = (i + 0.5) * h, cy = (j + 0.5) * h, cz = (k + m->kz0 + 0.5) * h;
        unsigned g = (unsigned)(e + m->kz0 * m->nx * m->nx);
        e0[e] = 0.5 + 3.0 * exp(-(cx * cx + cy * cy + cz * cz) / 0.08) + 0.1 * hydro_hash(g);
      }
  for (int nd = 0; nd < m->nn; nd++) {
    unsigned g = (unsigned)(nd + m->kz0 * m->npl);
    for (int d = 0; d < 3; d++)
      v0[d * m->nn + nd] = (m->bc[nd] >> d & 1) ? 0.0 : 0.05 * (hydro_hash(3u * g + d + 1) - 0.5);
  }
}
#endif
