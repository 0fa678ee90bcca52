! Fortran kernels with C bindings, differentiated from a C program (cmain.c).
module kernels
  use iso_c_binding, only: c_double, c_int
  implicit none
contains
  ! sum_i i * x(i)^2
  function weighted_sumsq(x, n) bind(c, name="weighted_sumsq") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: s
    integer :: i
    s = 0
    do i = 1, n
      s = s + i * x(i)**2
    end do
  end function

  ! y(i) = x(i) * sin(x(i+1)) for i < n, y(n) = x(n)^2
  subroutine couple(x, y, n) bind(c, name="couple")
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double), intent(out) :: y(n)
    integer :: i
    do i = 1, n - 1
      y(i) = x(i) * sin(x(i + 1))
    end do
    y(n) = x(n)**2
  end subroutine
end module
