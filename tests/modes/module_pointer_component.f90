! A module variable of derived type whose POINTER component the differentiated function writes
! through. Associated with another array (`w%p => t`), its shadow is unknown: the derivative
! wrote through a null shadow (a crash at -O0 and -O2); now a refusal naming the POINTER.
! Only ALLOCATE'd (-DOWNED), it is the derivative's work buffer like an allocatable component.
module aliases
  use iso_c_binding
  implicit none
  type work_t
    real(c_double), pointer :: p(:) => null()
    integer :: n = 3
  end type
  real(c_double), allocatable, target :: t(:)
  type(work_t) :: w
contains
  function cubes(x) bind(c, name="cubes") result(s)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: s
    w%p = x**2
    s = sum(w%p * x)
  end function
end module

program main
  use aliases
  implicit none
  interface
    subroutine autodiff(f, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3)
#ifdef OWNED
  allocate(w%p(3))
#else
  allocate(t(3))
  w%p => t
#endif
  dx = 0
  call autodiff(c_funloc(cubes), x, dx)
  print '(3f8.3)', dx          ! 3 x**2
end program
