! Data passed enzyme_const and copied inside the differentiated procedure: a column section into
! a local (`d = x(:, i)`), a whole-array copy into an active local (`y = x`), and sections
! passed to an assumed-shape helper. An unoptimized build calls the runtime's intrinsic
! assignment for the copies, with a descriptor of the constant array as the source; AD gave
! that descriptor a shadow it cannot have and refused ("a pointer to double data without a
! shadow ... is stored into memory that has one") at -O0 only.
! sq(x, s) = s * sum_i |x(:, i)|^2:         d/ds = sum(x**2).
! smooth(x, k) = wsum(y, k) + wsum(x(1:n:2), k**2), y = x + k * (second difference of x),
! wsum(v, k) = sum(exp(-k v) v): d/dk by central differences (forward and reverse mode).
! Each line: name, got | expected.
module consts
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function sq(x, n, s) bind(c, name="sq") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(3, n)
    real(c_double), value :: s
    real(c_double) :: e, d(3)
    integer :: i
    e = 0
    do i = 1, n
      d = x(:, i)
      e = e + s * dot_product(d, d)
    end do
  end function

  function wsum(v, k) result(s)
    real(c_double), intent(in) :: v(:)
    real(c_double), intent(in) :: k
    real(c_double) :: s
    s = sum(exp(-k * v) * v)
  end function

  function smooth(x, n, k) bind(c, name="smooth") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double), value :: k
    real(c_double) :: e, y(n)
    y = x
    y(2:n-1) = y(2:n-1) + k * (x(1:n-2) - 2 * x(2:n-1) + x(3:n))
    e = wsum(y, k) + wsum(x(1:n:2), k**2)
  end function
end module

program main
  use consts
  implicit none
  interface
    function grad(f, c1, x, c2, n, s) bind(c, name="__enzyme_autodiff") result(ds)
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: c1, c2, n
      real(c_double) :: x(*)
      real(c_double), value :: s
      real(c_double) :: ds
    end function
    function tangent(f, c1, x, c2, n, s, ds) bind(c, name="__enzyme_fwddiff") result(t)
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: c1, c2, n
      real(c_double) :: x(*)
      real(c_double), value :: s, ds
      real(c_double) :: t
    end function
  end interface
  real(c_double) :: x(3, 2), z(7), k, h, fd
  integer :: i
  x = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [3, 2])
  print '(a, g24.15, a, g24.15)', 'sq reverse ', &
    grad(c_funloc(sq), enzyme_const, x, enzyme_const, 2, 1.5d0), ' | ', sum(x**2)
  print '(a, g24.15, a, g24.15)', 'sq forward ', &
    tangent(c_funloc(sq), enzyme_const, x, enzyme_const, 2, 1.5d0, 1d0), ' | ', sum(x**2)
  z = [(0.3d0 * i + 0.1d0 * mod(i * i, 5), i = 1, 7)]
  k = 0.7d0
  h = 1d-5
  fd = (smooth(z, 7, k + h) - smooth(z, 7, k - h)) / (2 * h)
  print '(a, g24.15, a, g24.15)', 'smooth reverse ', &
    grad(c_funloc(smooth), enzyme_const, z, enzyme_const, 7, k), ' | ', fd
  print '(a, g24.15, a, g24.15)', 'smooth forward ', &
    tangent(c_funloc(smooth), enzyme_const, z, enzyme_const, 7, k, 1d0), ' | ', fd
end program
