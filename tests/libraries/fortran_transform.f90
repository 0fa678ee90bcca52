! flang's array-moving intrinsics, runtime calls in an unoptimized build (PACK and UNPACK at -O2
! too): TRANSPOSE, RESHAPE (with PAD=), CSHIFT, EOSHIFT (with and without BOUNDARY=), SPREAD,
! PACK, UNPACK; differentiated through enzyme-cc's own implementation
! (rules/fortran_transform.c). Driven by fortran_reductions_main.c with n = 6.
subroutine transform_kernel(n, x, e) bind(c, name='transform_kernel')
  implicit none
  integer, value :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: e
  real(8), allocatable :: a(:,:), t(:,:), b(:,:), c(:), d(:,:), f(:), g(:,:), s(:,:), p(:), u(:)
  real(8) :: w6(6), w32(3,2), w23(2,3), pad(2)
  logical, parameter :: mask(5) = [.true., .false., .true., .false., .true.]
  integer :: i
  w6 = [(dble(i), i = 1, 6)]
  w32 = reshape(w6, [3, 2])
  w23 = reshape(w6 * 0.5d0, [2, 3])
  pad = [0.5d0, x(1)]
  a = reshape(x, [2, 3])
  t = transpose(a)
  b = reshape(x(1:4), [3, 3], pad)
  c = cshift(x, 2)
  d = cshift(a, -1, dim=2)
  f = eoshift(x, -2, boundary=x(3))
  g = eoshift(a, 1, dim=1)
  s = spread(x(1:3), 2, 2)
  p = pack(x, x > 0.5d0)
  u = unpack(x(4:6), mask, 0.25d0)
  e = sum(t * w32) + 0.1d0 * sum(b * b) + sum(c * w6) + sum(d * w23) + sum(f * f * w6) &
      + sum(g * g) + sum(s * w32 * s) + sum(p * p * p) + sum(u * w6(1:5))
end subroutine
