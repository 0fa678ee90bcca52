! Old-style OpenMP queries declared as externals (`!$ INTEGER :: OMP_GET_THREAD_NUM`), as
! CloverLeaf's timestep does, inside and outside a parallel region of the differentiated
! function: flang calls libomp's Fortran entries (omp_get_thread_num_, ...), which were refused
! in differentiated code where the C ones were kept as they are. f = sum_i w_i x_i^2 with
! w_i = 1 + (number of threads > 0); df/dx_i = 2 w_i x_i for any thread count. Prints
! "got want" per component.
module obj_mod
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function f(x, n) bind(c, name="f") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: s, part(0:63), w
    integer :: i, tid, nth
!$  integer :: omp_get_thread_num, omp_get_num_threads, omp_get_max_threads
    nth = 1
!$  nth = omp_get_max_threads()
    part = 0
    w = 1
    if (nth > 0) w = 2
!$omp parallel private(tid)
    tid = 0
!$  tid = omp_get_thread_num()
!$omp do
    do i = 1, n
      part(tid) = part(tid) + w * x(i) ** 2
    end do
!$omp end do
!$omp end parallel
    s = sum(part)
  end function
end module

program main
  use obj_mod
  implicit none
  interface
    subroutine grad(fp, d1, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(8), dx(8)
  integer :: i
  x = [(0.5d0 * i, i = 1, 8)]
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 8)
  do i = 1, 8
    print '(2g24.15)', dx(i), 4 * x(i)
  end do
end program
