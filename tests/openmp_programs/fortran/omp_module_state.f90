! Fortran module state carried between parallel regions: one subroutine fills a module array
! in a parallel do, another reduces into a module scalar; the differentiated function returns
! the square of that scalar. Prints "bad <mismatches against central differences>". Before
! 2026-11-30 the regions were not part of the call tree, so the module array had no shadow in
! them and the gradient was wrong with no error.
module state
  use iso_c_binding, only: c_double, c_int
  implicit none
  integer, parameter :: n = 8
  real(c_double) :: u(n), acc
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  subroutine fill(x)
    real(c_double), intent(in) :: x(n)
    integer :: i
    !$omp parallel do
    do i = 1, n
      u(i) = x(i) * x(mod(i, n) + 1)
    end do
    !$omp end parallel do
  end subroutine
  subroutine gather(x)
    real(c_double), intent(in) :: x(n)
    integer :: i
    acc = 0
    !$omp parallel do reduction(+:acc)
    do i = 1, n
      acc = acc + sin(u(i)) * x(i)
    end do
    !$omp end parallel do
  end subroutine
  function energy(x) bind(c, name="energy") result(y)
    real(c_double), intent(in) :: x(n)
    real(c_double) :: y
    call fill(x)
    call gather(x)
    y = acc * acc
  end function
end module

program main
  use iso_c_binding
  use state
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
