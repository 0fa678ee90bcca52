! A parallel loop over tiles calling a kernel that opens a parallel loop of its own (TeaLeaf's
! tea_leaf_cg_calc_p): nested parallelism is off, so each outer thread runs the inner region as
! a team of one, and both read the shared scalar beta, by reference. The inner teams took every
! address they touched for their own (omp_get_active_level() is 1 there, but the active team is
! the enclosing one) and added into beta's adjoint without atomics: at 2 threads a race, wrong in
! a third of the calls at -O0. p = r + beta p twice, from p = 1, r = 2: s = sum p, so
! ds/dbeta = n nt (2 + 2 beta) exactly. Prints the number of wrong calls of 200.
module nested_calc_p
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  subroutine kern(n, beta, p, r)
    integer :: n, j
    real(8) :: beta, p(n), r(n)
!$omp parallel do
    do j = 1, n
      p(j) = r(j) + beta * p(j)
    end do
!$omp end parallel do
  end subroutine

  subroutine calc_p(n, nt, beta, p, r)
    integer :: n, nt, t
    real(8) :: beta, p(n, nt), r(n, nt)
!$omp parallel do
    do t = 1, nt
      call kern(n, beta, p(:, t), r(:, t))
    end do
!$omp end parallel do
  end subroutine

  function f(b, n, nt) bind(c, name="f") result(s)
    integer(c_int), value :: n, nt
    real(c_double) :: b(1), s
    real(8), allocatable :: p(:, :), r(:, :)
    real(8) :: beta
    allocate(p(n, nt), r(n, nt))
    p = 1
    r = 2
    beta = b(1)
    call calc_p(n, nt, beta, p, r)
    call calc_p(n, nt, beta, p, r)
    s = sum(p)
  end function
end module

program main
  use nested_calc_p
  implicit none
  interface
    subroutine autodiff(fp, a, x, dx, c1, n, c2, nt) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: a, c1, n, c2, nt
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  integer, parameter :: n = 20000, nt = 2
  real(c_double) :: b(1), db(1)
  integer :: rep, bad
  b = 0.5d0
  bad = 0
  do rep = 1, 200
    db = 0
    call autodiff(c_funloc(f), enzyme_dup, b, db, enzyme_const, n, enzyme_const, nt)
    if (db(1) /= n * nt * (2 + 2 * b(1))) bad = bad + 1
  end do
  print '(a, i0)', 'wrong ', bad
end program
