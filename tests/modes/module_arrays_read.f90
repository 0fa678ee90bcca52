! Module arrays whose data the differentiated code reads (a copy by assignment, MATMUL at -O0,
! a derived type's allocatable component copied deep) or writes through a section: the
! derivative went through a null shadow base (a crash) or was refused. Their shadows now get
! buffers at each derivative's entry, so the adjoints of module data land there (and are
! dropped, as for a C global). Each line: name, got | expected.
module state
  use iso_c_binding
  implicit none
  type :: system
    real(c_double), allocatable :: w(:)
  end type
  real(c_double), allocatable :: g(:), a(:, :), work(:)
  type(system), save :: sys
contains
  ! sum(g * x^2) through a local copy of g: d/dx_i = 2 g_i x_i
  function copied(x) bind(c, name="copied") result(f)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: f
    real(c_double), allocatable :: w(:)
    w = g
    f = sum(w * x**2)
  end function
  ! the same through a deep copy of a module derived type
  function deep_copied(x) bind(c, name="deep_copied") result(f)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: f
    type(system) :: loc
    loc = sys
    f = sum(loc%w * x**2)
  end function
  ! sum(matmul(a, x)): d/dx_j = sum_i a(i, j)
  function product(x) bind(c, name="product") result(f)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: f
    f = sum(matmul(a, x))
  end function
  ! a section of a module work array written, then read: d/dx_i = 3 x_i^2
  function sectioned(x) bind(c, name="sectioned") result(f)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: f
    work(1:3) = x**2
    f = sum(work(1:3) * x)
  end function
end module

program main
  use state
  implicit none
  interface
    subroutine autodiff(f, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3)
  integer :: k, round
  g = [2d0, 5d0, 7d0]
  sys%w = [3d0, 1d0, 4d0]
  a = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0, 7d0, 8d0, 9d0], [3, 3])
  allocate(work(5))
  do round = 1, 2
    dx = 0
    call autodiff(c_funloc(copied), x, dx)
    do k = 1, 3
      print '(a, i0, g24.15, a, g24.15)', 'copied dx', k, dx(k), ' | ', 2 * g(k) * x(k)
    end do
    dx = 0
    call autodiff(c_funloc(deep_copied), x, dx)
    do k = 1, 3
      print '(a, i0, g24.15, a, g24.15)', 'deep_copied dx', k, dx(k), ' | ', 2 * sys%w(k) * x(k)
    end do
    dx = 0
    call autodiff(c_funloc(product), x, dx)
    do k = 1, 3
      print '(a, i0, g24.15, a, g24.15)', 'product dx', k, dx(k), ' | ', sum(a(:, k))
    end do
    dx = 0
    call autodiff(c_funloc(sectioned), x, dx)
    do k = 1, 3
      print '(a, i0, g24.15, a, g24.15)', 'sectioned dx', k, dx(k), ' | ', 3 * x(k)**2
    end do
  end do
end program
