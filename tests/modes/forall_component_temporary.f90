! A FORALL over a derived-type allocatable component: flang builds a runtime temporary that
! enzyme-cc does not differentiate; the hint suggested -O2 (no help) before a loop.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  type :: st
    real(c_double), allocatable :: u(:)
  end type
contains
  subroutine upd(s, fl)
    type(st), intent(inout) :: s
    real(c_double), intent(in) :: fl(:)
    integer :: i
    forall (i = 1:size(s%u)) s%u(i) = s%u(i) - 0.1d0 * (fl(i+1) - fl(i))
  end subroutine
  function f(x, n) bind(c, name="f") result(j)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: j, fl(n+1)
    type(st) :: s
    s%u = x
    fl(1:n) = x**2
    fl(n+1) = 0
    call upd(s, fl)
    j = sum(s%u**2)
  end function
end module
program p
  use m
  implicit none
  interface
    subroutine ad(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(4) = [0.5d0, 1.5d0, 2.0d0, -0.3d0], dx(4), xp(4), xm(4)
  integer :: i
  dx = 0; call ad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 4)
  print '(a,4f12.6)', 'ad', dx
  do i = 1, 4
    xp = x; xm = x; xp(i) = x(i) + 1d-6; xm(i) = x(i) - 1d-6
    dx(i) = (f(xp, 4) - f(xm, 4)) / 2d-6
  end do
  print '(a,4f12.6)', 'fd', dx
end program
