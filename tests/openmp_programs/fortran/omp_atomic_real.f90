! `!$omp atomic` on a REAL: flang lowers it to a compare-and-swap loop, which is refused; the
! message spoke of C's _Atomic double and __atomic_fetch_add (test_openmp_fortran_atomic_hint).
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function f(x, n) bind(c, name="f") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: s, y(n)
    integer :: i
    s = 0
    !$omp parallel do
    do i = 1, n
      !$omp atomic
      s = s + x(i)**2
    end do
    !$omp end parallel do
  end function
end module
program p
  use m
  implicit none
  interface
    subroutine ad(fn, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: fn
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(6) = [1d0, 2d0, 3d0, 4d0, 5d0, 6d0], dx(6)
  dx = 0
  call ad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 6)
  print '(6f8.3)', dx
end program
