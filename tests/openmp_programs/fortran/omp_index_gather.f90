! Fortran: an !$omp parallel do over quad elements gathering node coordinates through a
! connectivity array (1-based, so flang's index is the loaded value less one: the team's forward
! sweep tracks it by its index, openmp_index.py). Prints the largest relative difference
! between the reverse gradient and central differences, and a checksum of the gradient that
! the test compares across thread counts.
module mesh
  use iso_c_binding, only: c_double, c_int
  implicit none
  integer, parameter :: nx = 12, ny = 10, nn = (nx + 1) * (ny + 1), ne = nx * ny
  integer(c_int) :: conn(4, ne)
  integer(c_int), bind(c, name="enzyme_dup") :: dup
contains
  subroutine setup()
    integer :: i, j, e, n0
    do j = 0, ny - 1
      do i = 0, nx - 1
        e = j * nx + i + 1
        n0 = j * (nx + 1) + i + 1
        conn(:, e) = [n0, n0 + 1, n0 + nx + 2, n0 + nx + 1]
      end do
    end do
  end subroutine

  function energy(x, y) bind(c, name="energy") result(s)
    real(c_double), intent(in) :: x(nn), y(nn)
    real(c_double) :: s, cx(4), cy(4), a
    integer :: e, k
    s = 0
    !$omp parallel do private(cx, cy, a, k) reduction(+:s)
    do e = 1, ne
      do k = 1, 4
        cx(k) = x(conn(k, e))
        cy(k) = y(conn(k, e))
      end do
      a = 0.5d0 * ((cx(1) - cx(3)) * (cy(2) - cy(4)) - (cx(2) - cx(4)) * (cy(1) - cy(3)))
      s = s + a * a + 0.1d0 * sin(cx(1) * cy(3))
    end do
    !$omp end parallel do
  end function
end module

program main
  use iso_c_binding, only: c_double, c_funptr, c_funloc, c_int
  use mesh
  implicit none
  interface
    subroutine autodiff(f, ta, x, dx, tb, y, dy) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double, c_int
      type(c_funptr), value :: f
      integer(c_int), value :: ta, tb
      real(c_double) :: x(*), dx(*), y(*), dy(*)
    end subroutine
  end interface
  real(c_double) :: x(nn), y(nn), dx(nn), dy(nn), xp(nn), worst, fd, h
  integer :: i
  call setup()
  do i = 1, nn
    x(i) = mod(i - 1, nx + 1) + 0.1d0 * sin(1.3d0 * i)
    y(i) = (i - 1) / (nx + 1) + 0.1d0 * cos(0.7d0 * i)
  end do
  dx = 0
  dy = 0
  call autodiff(c_funloc(energy), dup, x, dx, dup, y, dy)
  worst = 0
  h = 1d-6
  do i = 1, nn
    xp = x
    xp(i) = x(i) + h
    fd = energy(xp, y)
    xp(i) = x(i) - h
    fd = (fd - energy(xp, y)) / (2 * h)
    worst = max(worst, abs(dx(i) - fd) / (1 + abs(fd)))
  end do
  print '(a, es10.3)', 'worst ', worst
  print '(a, es24.16)', 'sum ', sum(dx) + 2 * sum(dy)
end program
