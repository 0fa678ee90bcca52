! A module POINTER array associated with another array (`p => t`) and written through in the
! differentiated function: enzyme-cc cannot know its shadow (the derivative wrote through a null
! shadow base: a crash at -O0). Now a refusal that names the POINTER.
module aliases
  use iso_c_binding
  implicit none
  real(c_double), allocatable, target :: t(:)
  real(c_double), pointer :: p(:) => null()
contains
  function cubes(x) bind(c, name="cubes") result(s)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: s
    p = x**2
    s = sum(t * x)
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
  allocate(t(3))
  p => t
  dx = 0
  call autodiff(c_funloc(cubes), x, dx)
  print *, dx
end program
