! Intrinsic assignment to allocatables (flang's _FortranAAssign): allocation on assignment,
! an allocated target of the same shape, a reversed section, a shrinking self-assignment whose
! source overlaps the target, a rank-2 array, REAL(4), COMPLEX(8), INTEGER and a scalar.
subroutine assign_kernel(n, x, e) bind(c, name="assign_kernel")
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double), intent(in) :: x(n)
  real(c_double), intent(out) :: e
  real(c_double), allocatable :: y(:), z(:), w(:,:), s
  real(c_float), allocatable :: f(:)
  complex(c_double_complex), allocatable :: c(:)
  integer, allocatable :: idx(:)
  integer :: i, j
  y = x * x
  z = y
  z = y(n:1:-1)
  y = y(2:n)
  allocate(w(2, n))
  w(1, :) = x
  w(2, :) = z
  w = w(:, n:1:-1)
  f = real(x, c_float)
  f = f(n:1:-1)
  c = cmplx(x, 2 * x, kind=c_double_complex)
  c = c * c
  idx = [(n + 1 - i, i = 1, n)]
  s = x(1)
  e = s * s
  do i = 1, n - 1
    e = e + y(i) * z(i) + sin(z(i + 1)) + 1d-4 * real(f(i), c_double)
  end do
  do i = 1, n
    j = idx(i)
    e = e + w(1, i) * w(2, j) + real(c(i)) * 0.1d0 + aimag(c(j)) * 0.01d0
  end do
end subroutine
