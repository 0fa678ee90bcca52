! A type-bound procedure called through a polymorphic allocatable component of a module
! array (`laws(i)%p%w(x(i))`, `class(law_t), allocatable :: p`), allocated by the main program:
! the derivative crashed (a new-user check). Each line: name, got | expected (e_i * x_i).
module mo
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  type :: law_t
    real(c_double) :: e = 1d0
  contains
    procedure :: w => lin_w
  end type
  type :: holder
    class(law_t), allocatable :: p
  end type
  type(holder), allocatable :: laws(:)
contains
  real(c_double) function lin_w(self, x)
    class(law_t), intent(in) :: self
    real(c_double), intent(in) :: x
    lin_w = 0.5d0 * self%e * x * x
  end function
  function energy(x, n) bind(c, name="energy") result(r)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: r
    integer :: i
    r = 0
    do i = 1, n
      r = r + laws(i)%p%w(x(i))
    end do
  end function
end module
program p
  use mo
  implicit none
  interface
    subroutine grad(fp, d, x, dx, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(2) = [0.1d0, 0.2d0], dx(2) = 0
  integer :: i
  allocate(laws(2))
  do i = 1, 2
    allocate(law_t :: laws(i)%p)
    laws(i)%p%e = real(i, c_double)
  end do
  dx = 0
  call grad(c_funloc(energy), enzyme_dup, x, dx, 2)
  do i = 1, 2
    print '(a, i0, g24.15, a, g24.15)', 'dx', i, dx(i), ' | ', real(i, c_double) * x(i)
  end do
end program
