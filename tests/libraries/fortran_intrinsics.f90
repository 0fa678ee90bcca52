! flang runtime entries for intrinsics that stay calls: SUM, PRODUCT, MAXVAL, MINVAL (with MASK=)
! and NORM2 with DIM= (rules/fortran_dim.c; NORM2's at -O2 too), the copy-in/copy-out of a
! non-contiguous section passed to an explicit-shape dummy, RANDOM_NUMBER overwriting active
! data (its derivative is zero), the scalar rules of stdlib_rules/fortran.toml (MOD, MODULO,
! ERFC_SCALED, SCALE, FRACTION, SET_EXPONENT, RRSPACING, SPACING) and integer-valued ones
! (NINT, FLOOR, EXPONENT, SIZE: inactive); COMPLEX SUM, PRODUCT and DOT_PRODUCT (runtime calls at
! -O0). Driven by fortran_reductions_main.c with n = 6.
subroutine twice_row(k, v, s)
  implicit none
  integer :: k
  real(8) :: v(k), s
  s = s + sum(v * v)
  v = 2 * v                            ! written back to the section by the copy-out
end subroutine

subroutine intrinsics_kernel(n, x, e) bind(c, name='intrinsics_kernel')
  implicit none
  integer, value :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: e
  real(8) :: m(2, 3), h(3), w2(2), w3(3), s
  real(4) :: m4(2, 3)
  complex(8) :: z(3), y(3)
  integer :: seed(64), k
  m = reshape(x, [2, 3])
  m4 = real(m, 4)
  w2 = [1.5d0, -0.5d0]
  w3 = [0.3d0, 1.1d0, -0.7d0]
  e = sum(sum(m, dim=2) * w2) + sum(sum(m, dim=1) * w3) + sum(product(m, dim=2) * w2) &
      + sum(maxval(m, dim=1) * w3) + sum(minval(m, dim=2) * w2) &
      + sum(sum(m, dim=2, mask=m > 0.3d0) * w2) + sum(norm2(m, dim=1) * w3) &
      + sum(norm2(m, dim=2)) + 1d-3 * sum(real(sum(m4, dim=1), 8) * w3)
  s = 0
  call twice_row(3, m(1, :), s)        ! m(1, :) is not contiguous: copy-in, copy-out
  e = e + s + sum(m(1, :) * w3)
  e = e + mod(3 * x(1), 0.7d0) + modulo(-2 * x(2), 0.3d0) + erfc_scaled(x(3)) &
      + scale(x(4), 3) + fraction(5 * x(5)) + set_exponent(x(6), 2) + 1d-16 * rrspacing(x(1)) &
      + 1d15 * spacing(x(2))
  e = e + x(1) * nint(10 * x(2)) + x(3) * floor(4 * x(4)) + x(5) * exponent(x(6)) &
      + x(6) * size(m)
  z = cmplx(x(1:3), x(4:6), 8)
  y = cmplx(x(6:4:-1), 0.5d0 * x(1:3), 8)
  e = e + real(sum(z * z)) + aimag(product(z)) + real(dot_product(z, y)) &
      + aimag(dot_product(y, z))
  seed = 7
  call random_seed(put=seed)
  h = x(1:3)
  call random_number(h)                ! h's old (active) values are gone: no derivative
  e = e + sum(h * w3)
end subroutine
