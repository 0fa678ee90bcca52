! A module allocatable array allocated by the main program (before the derivative starts) and
! assigned in the differentiated function: its shadow descriptor had no buffer, and the
! derivative wrote through a null base (a crash). Now the shadow gets the array's shape and a
! zeroed buffer of its own at the derivative's entry. Each line: name, got | expected.
module workspace
  use iso_c_binding
  implicit none
  real(c_double), allocatable :: work(:)
contains
  ! s = sum(x_i^3) through the module array: ds/dx_i = 3 x_i^2
  function cubes(x) bind(c, name="cubes") result(s)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: s
    work = x**2
    s = sum(work * x)
  end function
end module

program main
  use workspace
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
  allocate(work(3))
  do round = 1, 3
    if (round == 3) then          ! another shape: the assignment reallocates inside
      deallocate(work)
      allocate(work(5))
    end if
    s = cubes(x)
    dx = 0
    call autodiff(c_funloc(cubes), x, dx)
    do k = 1, 3
      print '(a, i0, a, i0, g24.15, a, g24.15)', 'round', round, ' dx', k, dx(k), ' | ', &
        3 * x(k)**2
    end do
  end do
end program
