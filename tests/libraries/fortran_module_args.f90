! Module arrays and a module scalar passed as actual arguments to subroutines that write them
! (Fortran passes by reference: the callee gets the global's address), then read by the
! differentiated function. Prints "bad <mismatches against central differences>". Before
! 2026-11-30: refused ("an active value is stored to memory that has no shadow" in fill).
module st
  use iso_c_binding, only: c_double, c_int
  implicit none
  integer, parameter :: n = 6
  real(c_double) :: u(n), w(n), tot
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  subroutine fill(a, x)
    real(c_double), intent(out) :: a(n)
    real(c_double), intent(in) :: x(n)
    integer :: i
    do i = 1, n
      a(i) = x(i) * x(mod(i, n) + 1) + sin(x(i))
    end do
  end subroutine
  subroutine accum(t, a)
    real(c_double), intent(inout) :: t
    real(c_double), intent(in) :: a(n)
    integer :: i
    do i = 1, n
      t = t + a(i) ** 2
    end do
  end subroutine
  function energy(x) bind(c, name="energy") result(y)
    real(c_double), intent(in) :: x(n)
    real(c_double) :: y
    call fill(u, x)
    call fill(w, u)
    tot = 0
    call accum(tot, w)
    call accum(tot, u)
    y = tot
  end function
end module
program main
  use iso_c_binding
  use st
  implicit none
  interface
    subroutine autodiff(f, a1, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double, c_int
      type(c_funptr), value :: f
      integer(c_int), value :: a1
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(n), dx(n), xp(n), fp, fm, h
  integer :: i, bad
  do i = 1, n
    x(i) = 0.3d0 + 0.5d0 * sin(1.1d0 + 2.3d0 * i)
  end do
  dx = 0
  call autodiff(c_funloc(energy), enzyme_dup, x, dx)
  bad = 0
  h = 1d-6
  do i = 1, n
    xp = x; xp(i) = xp(i) + h; fp = energy(xp)
    xp = x; xp(i) = xp(i) - h; fm = energy(xp)
    if (abs(dx(i) - (fp - fm) / (2 * h)) > 1d-5 * (1 + abs(dx(i)))) then
      print *, i, dx(i), (fp - fm) / (2 * h), "FAIL"
      bad = bad + 1
    end if
  end do
  print *, "bad", bad
end program
