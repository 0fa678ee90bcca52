! A FORTRAN 77 style COMMON block of doubles followed by integer counters (ODEPACK's /DLS001/:
! 218 doubles, then 37 integers): flang declares it a byte array, `[N x i8]`. A counter copied
! from one member to another (ODEPACK's `IWORK(14) = NQU`) was taken for 4 bytes of a double
! copied as an integer: the block's only float kind stood for every byte without evidence, and
! every derivative through DLSODE and DLSODA stopped there. Three steps of y <- y (1 + h t),
! t <- t + h: dJ/dy0_i = prod_k (1 + h t_k), J = sum y.
subroutine stepper(y, n)
  implicit none
  integer :: n, i
  double precision :: y(n)
  double precision :: rowns(8), h, tn
  integer :: init, nlast, nqu, nst
  common /ls001/ rowns, h, tn, init, nlast, nqu, nst
  if (init == 0) then
    nst = 0
    init = 1
  end if
  do i = 1, n
    rowns(i) = y(i)
    y(i) = y(i) + h * y(i) * tn
  end do
  tn = tn + h
  nqu = nlast
  nlast = nst
  nst = nst + 1
end subroutine

module objective
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function solve(y0, n) bind(c, name="solve") result(r)
    integer(c_int), value :: n
    real(c_double), intent(in) :: y0(n)
    real(c_double) :: r, y(8)
    double precision :: rowns(8), h, tn
    integer :: init, nlast, nqu, nst, k
    common /ls001/ rowns, h, tn, init, nlast, nqu, nst
    y(1:n) = y0
    tn = 0.5d0
    init = 0
    do k = 1, 3
      !dir$ noinline
      call stepper(y, n)
    end do
    r = sum(y(1:n)) + nqu
  end function
end module

program counters
  use objective
  implicit none
  interface
    real(c_double) function autodiff(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end function
  end interface
  double precision :: rowns(8), h, tn
  integer :: init, nlast, nqu, nst
  common /ls001/ rowns, h, tn, init, nlast, nqu, nst
  real(c_double) :: x(4) = [0.5d0, 0.6d0, 0.7d0, 0.8d0], dx(4), r, p
  integer :: i
  h = 0.1d0
  p = (1 + 0.1d0 * 0.5d0) * (1 + 0.1d0 * 0.6d0) * (1 + 0.1d0 * 0.7d0)
  dx = 0
  r = autodiff(c_funloc(solve), enzyme_dup, x, dx, enzyme_const, 4)
  do i = 1, 4
    print '(a, i0, a, es24.16, a, es24.16)', 'dJ/dy', i, ' ', dx(i), ' | ', p
  end do
  print '(a, i0)', 'steps counted ', nst
end program
