! A typed polymorphic ALLOCATE (`allocate(sq_t :: obj)` of a CLASS variable) of a type with an
! allocatable component: flang sets the descriptor up for the dynamic type in its runtime
! (InitDerivedForAllocate), repeated on the shadow descriptor. dx = 3 * 2x = 12 at x = 2.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  type, abstract :: base_t
  contains
    procedure(ev), deferred :: eval
  end type
  abstract interface
    function ev(self, x) result(y)
      import :: base_t, c_double
      class(base_t), intent(in) :: self
      real(c_double), intent(in) :: x
      real(c_double) :: y
    end function
  end interface
  type, extends(base_t) :: sq_t
    real(c_double), allocatable :: a(:)
  contains
    procedure :: eval => sq_eval
  end type
contains
  function sq_eval(self, x) result(y)
    class(sq_t), intent(in) :: self
    real(c_double), intent(in) :: x
    real(c_double) :: y
    y = self%a(1) * x**2
  end function
  function f(x) bind(c, name="f") result(y)
    real(c_double), intent(in) :: x
    real(c_double) :: y
    class(base_t), allocatable :: obj
    allocate(sq_t :: obj)
    select type (obj)
    type is (sq_t)
      obj%a = [3.0_c_double]
    end select
    y = obj%eval(x)
  end function
end module
program p
  use m
  implicit none
  interface
    subroutine ad(fn, d, x, dx) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: fn
      integer(c_int), value :: d
      real(c_double) :: x, dx
    end subroutine
  end interface
  real(c_double) :: x = 2, dx = 0
  call ad(c_funloc(f), enzyme_dup, x, dx)
  print *, 'dx =', dx, ' expected 12'
end program
