! Convergence flags in a module allocatable LOGICAL array, cleared in the differentiated
! function (`converged = .false.`, a memset at -O2) and set by a callee kept out of line (SNAP's
! outer and inner iterations): the reverse sweep zeroed the flags' shadow, whose data pointer is
! null (integer and logical arrays get no shadow buffer): a crash at -O2. Three sweeps of
! r <- r (1 + sum x^2) from r = 1, no flag ever set: dr/dx_i = 6 x_i (1 + S)^2.
module sweeps
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  real(c_double), allocatable :: change(:)
  logical, allocatable :: converged(:)
contains
  subroutine sweep(x, n, r)
    integer(c_int) :: n
    real(c_double) :: x(n), r
    integer :: i
    do i = 1, n
      change(i) = x(i)**2 * r
    end do
    where (change <= 1d-3) converged = .true.
    r = r + sum(change)
  end subroutine
  function solve(x, n) bind(c, name="solve") result(r)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: r
    integer :: k
    r = 1
    converged = .false.
    do k = 1, 3
      !dir$ noinline
      call sweep(x, n, r)
      if (all(converged)) exit
    end do
  end function
end module

program flags
  use sweeps
  implicit none
  interface
    real(c_double) function autodiff(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end function
  end interface
  real(c_double) :: x(4) = [0.5d0, 0.6d0, 0.7d0, 0.8d0], dx(4), r, s
  integer :: i
  allocate(converged(4), change(4))
  s = sum(x**2)
  dx = 0
  r = autodiff(c_funloc(solve), enzyme_dup, x, dx, enzyme_const, 4)
  do i = 1, 4
    print '(a, i0, a, es24.16, a, es24.16)', 'dr/dx', i, ' ', dx(i), ' | ', 6 * x(i) * (1 + s)**2
  end do
end program
