! Two marker calls in the arms of one IF that differ in one activity marker only (the output's
! shadow enzyme_dup in one arm, enzyme_dupnoneed in the other): the pre-AD pipeline sank them
! into one call whose marker argument was a select of the two loaded markers, refused as "too
! many arguments" (found by a new-user check). The markers' declarations are `nomerge` now.
! r = u**2 elementwise, seeded dr = 1: du = 2 u in both arms, reverse and forward mode.
! Each line: name, got | expected.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_dupnoneed") :: enzyme_dupnoneed
contains
  subroutine sq(u, r) bind(c, name="sq")
    real(c_double), intent(in) :: u(2)
    real(c_double), intent(out) :: r(2)
    r = u**2
  end subroutine
end module

program main
  use m
  implicit none
  interface
    subroutine vjp(f, d1, u, du, d2, r, dr) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d1, d2
      real(c_double) :: u(*), du(*), r(*), dr(*)
    end subroutine
    subroutine jvp(f, d1, u, du, d2, r, dr) bind(c, name="__enzyme_fwddiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d1, d2
      real(c_double) :: u(*), du(*), r(*), dr(*)
    end subroutine
  end interface
  real(c_double) :: u(2) = [3d0, 5d0], du(2), r(2), dr(2)
  integer :: mode
  do mode = 1, 2
    du = 0
    dr = 1
    if (mode == 1) then
      call vjp(c_funloc(sq), enzyme_dup, u, du, enzyme_dup, r, dr)
    else
      call vjp(c_funloc(sq), enzyme_dup, u, du, enzyme_dupnoneed, r, dr)
    end if
    print '(a, i1, a, 2f12.6, a, 2f12.6)', 'reverse ', mode, ' ', du, ' | ', 2 * u
  end do
  do mode = 1, 2
    du = [1d0, 2d0]
    dr = 0
    if (mode == 1) then
      call jvp(c_funloc(sq), enzyme_dup, u, du, enzyme_dup, r, dr)
    else
      call jvp(c_funloc(sq), enzyme_dup, u, du, enzyme_dupnoneed, r, dr)
    end if
    print '(a, i1, a, 2f12.6, a, 2f12.6)', 'forward ', mode, ' ', dr, ' | ', 2 * u * [1d0, 2d0]
  end do
end program
