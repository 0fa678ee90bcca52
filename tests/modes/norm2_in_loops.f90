! NORM2 in a loop, over a moving column section and over a local array rewritten in every
! iteration: its derivative was a rule that read the array in the reverse sweep, where it held
! the last iteration's column or contents (reverse mode wrong; under OpenMP zeros or a crash).
! NORM2 is now code enzyme-cc differentiates (rules/fortran_runtime.c).
! cols = sum_i |x(:, i)|: d/dx(:, i) = x(:, i) / |x(:, i)|.
! scaled = sum_i |i x(:, i)|: d/dx(:, i) = i x(:, i) / |x(:, i)|.
! Each line: name, got | expected (reverse and forward mode).
module norms
  use iso_c_binding
  implicit none
contains
  function cols(x) bind(c, name="cols") result(e)
    real(c_double), intent(in) :: x(3, 2)
    real(c_double) :: e
    integer :: i
    e = 0
    do i = 1, 2
      e = e + norm2(x(:, i))
    end do
  end function

  function scaled(x) bind(c, name="scaled") result(e)
    real(c_double), intent(in) :: x(3, 2)
    real(c_double) :: e, u(3)
    integer :: i
    e = 0
    do i = 1, 2
      u = x(:, i) * i
      e = e + norm2(u)
    end do
  end function
end module

program main
  use norms
  implicit none
  interface
    subroutine autodiff(f, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
    end subroutine
    function fwddiff(f, x, dx) bind(c, name="__enzyme_fwddiff") result(t)
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double) :: x(*), dx(*)
      real(c_double) :: t
    end function
  end interface
  real(c_double) :: x(3, 2), dx(3, 2), want(3, 2), seed(3, 2)
  integer :: i, k
  x = reshape([1d0, 2d0, 2d0, 3d0, 0d0, 4d0], [3, 2])
  do i = 1, 2
    want(:, i) = x(:, i) / norm2(x(:, i))
  end do
  dx = 0
  call autodiff(c_funloc(cols), x, dx)
  do i = 1, 2
    do k = 1, 3
      print '(a, i0, i0, g24.15, a, g24.15)', 'cols ', k, i, dx(k, i), ' | ', want(k, i)
    end do
  end do
  dx = 0
  call autodiff(c_funloc(scaled), x, dx)
  do i = 1, 2
    do k = 1, 3
      print '(a, i0, i0, g24.15, a, g24.15)', 'scaled ', k, i, dx(k, i), ' | ', i * want(k, i)
    end do
  end do
  seed = 0
  seed(3, 2) = 1
  print '(a, g24.15, a, g24.15)', 'scaled forward', fwddiff(c_funloc(scaled), x, seed), ' | ', &
    2 * want(3, 2)
end program
