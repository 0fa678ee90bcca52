! A module allocatable array of a derived type whose components are plain reals, allocated by
! the main program before the derivative starts and written and read (through a module
! subroutine) in the differentiated function: its shadow descriptor had no buffer (the shadow of
! an allocated array was made for arrays of reals only) and the derivative wrote through a null
! base (a crash, found by a new-user check). Now a derived type without allocatable components
! gets the same: the shape, its type description, and a zeroed buffer of its own.
! s = sum_i m x_i^2 (m = 2, three coordinates each): ds/dstate = 4 state, in three calls.
! Each line: name, got | expected.
module bodies
  use iso_c_binding
  implicit none
  type :: particle
    real(c_double) :: x(3), m
  end type
  type(particle), allocatable :: parts(:)
  real(c_double), allocatable :: acc(:, :)
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  subroutine accel(n)
    integer, intent(in) :: n
    integer :: i
    do i = 1, n
      acc(:, i) = parts(i)%m * parts(i)%x**2
    end do
  end subroutine

  function energy(state, n) bind(c, name="energy") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: state(3, n)
    real(c_double) :: s
    integer :: i
    do i = 1, n
      parts(i)%x = state(:, i)
      parts(i)%m = 2.0d0
    end do
    call accel(n)
    s = 0
    do i = 1, n
      s = s + sum(acc(:, i))
    end do
  end function
end module

program main
  use bodies
  implicit none
  interface
    subroutine autodiff(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double, c_int
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: st(6) = [1d0, 2d0, 3d0, 4d0, 5d0, 6d0], dst(6), s
  integer :: k, round
  allocate(parts(2), acc(3, 2))
  do round = 1, 3
    s = energy(st, 2)
    dst = 0
    call autodiff(c_funloc(energy), enzyme_dup, st, dst, enzyme_const, 2)
    do k = 1, 6, 5
      print '(a, i0, a, i0, g24.15, a, g24.15)', 'round', round, ' dst', k, dst(k), ' | ', &
        4 * st(k)
    end do
  end do
end program
