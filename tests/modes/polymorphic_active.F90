! A material-model object: a CLASS allocatable of an abstract type with a deferred binding,
! allocated with its concrete type (-DTYPED) or from a structure constructor by SOURCE=
! (-DSOURCE), its component (default-initialized) holding an active value. f = 3x * x^2.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  type, abstract :: base_t
    real(c_double) :: e = 1d0          ! default initialization, no allocatable component
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
  contains
    procedure :: eval => sq_eval
  end type
contains
  function sq_eval(self, x) result(y)
    class(sq_t), intent(in) :: self
    real(c_double), intent(in) :: x
    real(c_double) :: y
    y = self%e * x**2
  end function
  function f(x) bind(c, name="f") result(y)
    real(c_double), intent(in) :: x
    real(c_double) :: y
    class(base_t), allocatable :: obj
#ifdef SOURCE
    allocate(obj, source=sq_t(e=3d0 * x))
#else
    allocate(sq_t :: obj)
    obj%e = 3d0 * x
#endif
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
  print *, dx
end program
