! A threadprivate module variable touched in the differentiated code with data that carries no
! derivative (NPB's timers: `!$omp threadprivate(start, elapsed)`, a call counter), inside and
! outside a parallel region: the derivative was refused ("OpenMP threadprivate in
! differentiated code is not supported"); the thread's copy is memory without a shadow, like a
! global's that nothing active is stored to. f = sum_i x_i^3, df/dx_i = 3 x_i^2. Prints "got
! want" per component.
module timed
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  integer :: ncalls = 0
  double precision :: start(4), elapsed(4)
!$omp threadprivate(ncalls, start, elapsed)
contains
  subroutine timer_start(k)
    integer, intent(in) :: k
    double precision :: omp_get_wtime
    start(k) = omp_get_wtime()
  end subroutine

  subroutine timer_stop(k)
    integer, intent(in) :: k
    double precision :: omp_get_wtime
    elapsed(k) = elapsed(k) + omp_get_wtime() - start(k)
  end subroutine

  function f(x, n) bind(c, name="f") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: s
    integer :: i
    ncalls = ncalls + 1
    call timer_start(1)
    s = 0
!$omp parallel do reduction(+:s)
    do i = 1, n
      ncalls = ncalls + 1
      s = s + x(i) ** 3
    end do
!$omp end parallel do
    call timer_stop(1)
  end function
end module

program main
  use timed
  implicit none
  interface
    subroutine grad(fp, d1, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(6), dx(6)
  integer :: i
  elapsed = 0
  x = [(0.25d0 * i, i = 1, 6)]
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 6)
  do i = 1, 6
    print '(2g24.15)', dx(i), 3 * x(i) ** 2
  end do
end program
