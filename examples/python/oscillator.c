/* A damped, driven oscillator x'' + 2 zeta omega x' + omega^2 x = a cos(t), integrated with RK4:
   the trajectory x(t_k), t_k = (k+1) DT, for parameters p = {omega, zeta, a}. Plain C: enzyme-cc differentiates it. */
static void rhs(const double *p, double t, const double *s, double *ds) {
  double omega = p[0], zeta = p[1], a = p[2];
  ds[0] = s[1];
  ds[1] = -2.0 * zeta * omega * s[1] - omega * omega * s[0] + a * __builtin_cos(t);
}

#define DT 0.05

void simulate(const double *p, const double *s0, int steps, double *traj) {
  const double dt = DT;
  double s[2] = {s0[0], s0[1]}, k1[2], k2[2], k3[2], k4[2], tmp[2];
  for (int i = 0; i < steps; i++) {
    double t = i * dt;
    rhs(p, t, s, k1);
    for (int j = 0; j < 2; j++) tmp[j] = s[j] + 0.5 * dt * k1[j];
    rhs(p, t + 0.5 * dt, tmp, k2);
    for (int j = 0; j < 2; j++) tmp[j] = s[j] + 0.5 * dt * k2[j];
    rhs(p, t + 0.5 * dt, tmp, k3);
    for (int j = 0; j < 2; j++) tmp[j] = s[j] + dt * k3[j];
    rhs(p, t + dt, tmp, k4);
    for (int j = 0; j < 2; j++) s[j] += dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    traj[i] = s[0];
  }
}
