! Module POINTER arrays used as work buffers that only ALLOCATE associates (a module variable,
! and a procedure's local `=> null()`, which is implicitly SAVE): allocated inside the first
! derivative call, or by a primal call before it, then reused. The derivative wrote through a
! null shadow base (a crash at -O0, a refusal at -O2). Each line: name, got | expected.
module buffers
  use iso_c_binding
  implicit none
  real(c_double), pointer :: work(:) => null()
contains
  ! s = sum(x_i^3) through the module buffer: ds/dx_i = 3 x_i^2
  function cubes(x) bind(c, name="cubes") result(s)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: s
    if (.not. associated(work)) allocate(work(3))
    work = x**2
    s = sum(work * x)
  end function
  ! s = sum(sin(x_i) x_i) through a saved local buffer: ds/dx_i = cos(x_i) x_i + sin(x_i)
  function sines(x) bind(c, name="sines") result(s)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: s
    real(c_double), pointer :: tmp(:) => null()
    if (.not. associated(tmp)) allocate(tmp(3))
    tmp = sin(x)
    s = sum(tmp * x)
  end function
end module

program main
  use buffers
  implicit none
  interface
    subroutine autodiff(f, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3), s
  integer :: k, round
  do round = 1, 3
    dx = 0
    call autodiff(c_funloc(cubes), x, dx)     ! the first allocates inside the derivative
    do k = 1, 3
      print '(a, i0, a, i0, g24.15, a, g24.15)', 'cubes', round, ' dx', k, dx(k), ' | ', &
        3 * x(k)**2
    end do
  end do
  do round = 1, 2
    s = sines(x)                              ! allocated by the primal before the derivative
    dx = 0
    call autodiff(c_funloc(sines), x, dx)
    do k = 1, 3
      print '(a, i0, a, i0, g24.15, a, g24.15)', 'sines', round, ' dx', k, dx(k), ' | ', &
        cos(x(k)) * x(k) + sin(x(k))
    end do
  end do
end program
