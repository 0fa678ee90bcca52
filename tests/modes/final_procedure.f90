! A derived type with a final procedure, created and finalized inside the differentiated function:
! flang finalizes it through its runtime, which has no bitcode; the derivative stops with a
! message when it reaches the finalization (the primal runs as compiled).
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  integer :: finalized = 0
  type :: buf_t
    real(c_double), allocatable :: a(:)
  contains
    final :: cleanup
  end type
contains
  subroutine cleanup(b)
    type(buf_t), intent(inout) :: b
    finalized = finalized + 1
    if (allocated(b%a)) deallocate(b%a)
  end subroutine
  function energy(x, n) bind(c, name="energy") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    type(buf_t) :: b
    allocate(b%a(n))
    b%a = x**2
    e = sum(b%a * x)
  end function
end module
program main
  use m
  interface
    real(c_double) function autodiff(f, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
      integer(c_int), value :: c, n
    end function
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3) = 0, r
  print *, energy(x, 3)
  r = autodiff(c_funloc(energy), x, dx, enzyme_const, 3)
  print *, dx, 3*x**2, finalized
end program
