! A dot product as tuned Fortran writes it (a clean-up loop, then unrolled by five; strided and
! negative increments), called with the same array for both arguments: legal Fortran, as both
! are only read, and common (DDOT(N, X, 1, X, 1) for a squared norm). flang marks every dummy
! argument noalias; the derivative's reverse sweep writes the shadows of both, so the shadows of
! arguments the routine only reads must not be noalias (the gradient was wrong, with no error).
! fortran_aliased_dot_main.c checks it.
double precision function dot5(n, x, incx, y, incy)
  implicit none
  integer, intent(in) :: n, incx, incy
  double precision, intent(in) :: x(*), y(*)
  integer :: i, m, ix, iy
  double precision :: s
  dot5 = 0d0
  s = 0d0
  if (n <= 0) return
  if (incx == 1 .and. incy == 1) then
    m = mod(n, 5)
    if (m /= 0) then
      do i = 1, m
        s = s + x(i) * y(i)
      end do
      if (n < 5) then
        dot5 = s
        return
      end if
    end if
    do i = m + 1, n, 5
      s = s + x(i) * y(i) + x(i + 1) * y(i + 1) + x(i + 2) * y(i + 2) + x(i + 3) * y(i + 3) &
          + x(i + 4) * y(i + 4)
    end do
  else
    ix = 1
    iy = 1
    if (incx < 0) ix = (1 - n) * incx + 1
    if (incy < 0) iy = (1 - n) * incy + 1
    do i = 1, n
      s = s + x(ix) * y(iy)
      ix = ix + incx
      iy = iy + incy
    end do
  end if
  dot5 = s
end function
