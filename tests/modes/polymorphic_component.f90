! A derived type with a `class(base), allocatable` component, a local of it in the differentiated
! function (an object holding a model chosen at run time): flang marks such a type as possibly
! needing finalization (an extension might have a final procedure), and its end-of-scope
! destruction stopped the derivative ("the finalization of an object of a derived type with final
! procedures", found by a new-user check). The destruction now looks at the dynamic types: none
! has a final procedure, so enzyme-cc frees the components itself. An array of such boxes too.
! e = sum_k s_k x_k^2 (+ r0 x_k for the extension): de/dx analytic. Each line: name, got | expected.
module models
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  type :: base
    real(c_double) :: s = 1
  contains
    procedure :: energy => base_energy
  end type
  type, extends(base) :: shifted
    real(c_double) :: r0 = 2
  contains
    procedure :: energy => shifted_energy
  end type
  type :: box
    class(base), allocatable :: p
  end type
contains
  function base_energy(self, x) result(e)
    class(base), intent(in) :: self
    real(c_double), intent(in) :: x
    real(c_double) :: e
    e = self%s * x**2
  end function
  function shifted_energy(self, x) result(e)
    class(shifted), intent(in) :: self
    real(c_double), intent(in) :: x
    real(c_double) :: e
    e = self%s * x**2 + self%r0 * x
  end function

  function one(x, n) bind(c, name="one") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    type(box) :: b
    allocate(b%p, source=shifted(s=0.5d0, r0=1.5d0))
    e = b%p%energy(x(1))
  end function

  function many(x, n) bind(c, name="many") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    type(box), allocatable :: boxes(:)
    integer :: k
    allocate(boxes(n))
    do k = 1, n
      if (mod(k, 2) == 1) then
        allocate(boxes(k)%p, source=base(s=real(k, c_double)))
      else
        allocate(boxes(k)%p, source=shifted(s=real(k, c_double), r0=0.25d0))
      end if
    end do
    e = 0
    do k = 1, n
      e = e + boxes(k)%p%energy(x(k))
    end do
  end function
end module

program main
  use models
  implicit none
  interface
    subroutine grad(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [3d0, -1d0, 0.5d0], dx(3), want(3)
  integer :: k
  dx = 0
  call grad(c_funloc(one), enzyme_dup, x, dx, enzyme_const, 1)
  print '(a, f14.10, a, f14.10)', 'one ', dx(1), ' | ', 0.5d0 * 2 * x(1) + 1.5d0
  dx = 0
  call grad(c_funloc(many), enzyme_dup, x, dx, enzyme_const, 3)
  do k = 1, 3
    want(k) = k * 2 * x(k)
    if (mod(k, 2) == 0) want(k) = want(k) + 0.25d0
  end do
  print '(a, 3f14.10, a, 3f14.10)', 'many ', dx, ' | ', want
end program
