! A recursive adaptive Simpson rule whose real arguments come by reference (intent(in)): its
! recursive calls pass them in many activity signatures. The callee summaries of mutually
! dependent signatures were recomputed from scratch at every fixed-point round of each one
! (exponential: 190 s to differentiate this file); central differences check the gradient.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  pure function g(t, p) result(y)
    real(8), intent(in) :: t, p
    real(8) :: y
    y = exp(-p * t**2)
  end function
  recursive function asimp(a, b, p, fa, fm, fb, whole, depth) result(s)
    real(8), intent(in) :: a, b, p, fa, fm, fb, whole    ! "value" instead: 32 s
    integer, intent(in) :: depth
    real(8) :: s, m, flm, frm, left, right
    m = 0.5d0 * (a + b)
    flm = g(0.5d0 * (a + m), p); frm = g(0.5d0 * (m + b), p)
    left = (m - a) / 6 * (fa + 4 * flm + fm)
    right = (b - m) / 6 * (fm + 4 * frm + fb)
    if (depth <= 0) then
      s = left + right + (left + right - whole) / 15
    else
      s = asimp(a, m, p, fa, flm, fm, left, depth - 1) + asimp(m, b, p, fm, frm, fb, right, depth - 1)
    end if
  end function
  function f(x, n) bind(c, name="f") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    real(c_double) :: fa, fm, fb
    fa = g(0d0, x(2)); fm = g(0.5d0 * x(1), x(2)); fb = g(x(1), x(2))
    e = asimp(0d0, x(1), x(2), fa, fm, fb, x(1) / 6 * (fa + 4 * fm + fb), 4)
  end function
end module

program drv
  use m
  implicit none
  interface
    subroutine grad(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(8) :: x(2) = [1d0, 2d0], dx(2) = 0, xp(2), xm(2), h = 1d-6
  integer :: k
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 2)
  do k = 1, 2
    xp = x; xm = x; xp(k) = x(k) + h; xm(k) = x(k) - h
    print '(a,i0,es22.14,a,es22.14)', 'dx', k, dx(k), ' | ', (f(xp, 2) - f(xm, 2)) / (2 * h)
  end do
end program
