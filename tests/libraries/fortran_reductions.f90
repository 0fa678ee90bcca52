! The array intrinsics an unoptimized flang build keeps as runtime calls (SUM, PRODUCT, MAXVAL,
! MINVAL, DOT_PRODUCT, MATMUL in both orders, with a MASK, on sections and on a constant matrix;
! MAXLOC, MINLOC and COUNT, whose integer results index the data),
! with allocation on assignment in between. An optimized build inlines most of them.
subroutine reductions(n, x, e) bind(c, name="reductions")
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double), intent(in) :: x(n)
  real(c_double), intent(out) :: e
  real(c_double), allocatable :: y(:), z(:)
  real(c_double) :: m(3, 3), c(3, 3), v(3), w(3), u(3)
  real(c_float) :: f(3)
  integer :: i, j
  allocate(y(n))
  y = x * x + 1.0d0
  z = y
  z(1) = z(1) + sum(y)
  m = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0, 7d0, 8d0, 9d0], [3, 3])
  do j = 1, 3
    do i = 1, 3
      c(i, j) = x(i) * x(j) + m(i, j)
    end do
  end do
  v = x(1:3)
  w = matmul(m, v)
  u = matmul(v, c)
  f = real(x(2:4), c_float)
  e = dot_product(z, y) + maxval(y) + minval(z) + product(x(1:2)) + sum(w) + sum(u * u)
  e = e + sum(z(2:n) * y(1:n-1)) + sum(y, mask=y > 1.1d0) + 1d-3 * sum(f * f)
  e = e + sum(matmul(c, c)) + x(maxloc(x, 1)) * count(y > 1.2d0) + x(minloc(y(2:n), 1))
  deallocate(y)
end subroutine
