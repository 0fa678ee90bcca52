! `!$omp parallel ... if(cond)` as SNAP writes every region (flang calls __kmpc_fork_call_if,
! refused before): with and without num_threads, the condition true and false. Each case
! prints the team size the region ran with (1 where the condition is false) and the largest
! error of the gradient of sum(sin(x)^2) against its analytic value.
module regions
  use iso_c_binding
  use omp_lib
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  integer :: team
contains
  function clause(x, n, nt) bind(c, name="clause") result(r)
    integer(c_int), value :: n, nt
    real(c_double), intent(in) :: x(n)
    real(c_double) :: r
    integer :: i
    r = 0
    !$omp parallel do num_threads(nt) if(nt > 1) reduction(+:r)
    do i = 1, n
      r = r + sin(x(i))**2
      team = omp_get_num_threads()
    end do
  end function
  function plain(x, n, on) bind(c, name="plain") result(r)
    integer(c_int), value :: n, on
    real(c_double), intent(in) :: x(n)
    real(c_double) :: r
    integer :: i
    r = 0
    !$omp parallel do if(on /= 0) reduction(+:r)
    do i = 1, n
      r = r + sin(x(i))**2
      team = omp_get_num_threads()
    end do
  end function
end module

program parallel_if
  use regions
  implicit none
  interface
    real(c_double) function autodiff(f, d, x, dx, c, n, c2, k) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n, c2, k
      real(c_double) :: x(*), dx(*)
    end function
  end interface
  integer, parameter :: n = 40
  real(c_double) :: x(n), dx(n), r
  integer :: i, k
  x = [(0.1d0 * i, i = 1, n)]
  do k = 1, 2
    dx = 0
    r = autodiff(c_funloc(clause), enzyme_dup, x, dx, enzyme_const, n, enzyme_const, k)
    print '(a, i0, 1x, i0, 1x, es10.2)', 'clause ', k, team, maxval(abs(dx - sin(2 * x)))
    dx = 0
    r = autodiff(c_funloc(plain), enzyme_dup, x, dx, enzyme_const, n, enzyme_const, k - 1)
    print '(a, i0, 1x, i0, 1x, es10.2)', 'plain ', k - 1, team, maxval(abs(dx - sin(2 * x)))
  end do
end program
