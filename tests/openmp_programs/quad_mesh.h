/* A structured NX x NY mesh of quads stored as an unstructured one, for the corpus' programs
   that gather node values per element: NN nodes, NE elements, conn[4 * e + k] the node of
   element e's corner k (counter-clockwise), filled by SETUP at the start of main (omp_check.h).
   The includer defines NX and NY first. */
#define NN ((NX + 1) * (NY + 1))
#define NE (NX * NY)
static int conn[4 * NE];
#define SETUP                                                                            \
  for (int j = 0; j < NY; j++)                                                           \
    for (int i = 0; i < NX; i++) {                                                       \
      int e = j * NX + i, n0 = j * (NX + 1) + i;                                         \
      conn[4 * e] = n0, conn[4 * e + 1] = n0 + 1;                                        \
      conn[4 * e + 2] = n0 + NX + 2, conn[4 * e + 3] = n0 + NX + 1;                      \
    }
