! Shadows of module variables from Fortran (Enzyme's __enzyme_context / __enzyme_shadow through
! bind(c) interfaces): the gradient with respect to them, zeroed before each, and forward mode.
module params
  use iso_c_binding, only: c_double, c_int
  implicit none
  real(c_double) :: w = 2.0d0
  real(c_double) :: coef(3) = [1.0d0, 2.0d0, 3.0d0]
  integer(c_int), bind(C, name="enzyme_context") :: enzyme_context
contains
  function f(x) bind(c, name="f") result(y)
    real(c_double), value :: x
    real(c_double) :: y
    y = w * x * x + coef(2) * x
  end function
end module

program main
  use iso_c_binding
  use params
  implicit none
  interface
    function new_context(width) bind(c, name="__enzyme_context") result(ctx)
      import :: c_int, c_ptr
      integer(c_int), value :: width
      type(c_ptr) :: ctx
    end function
    function shadow_of(ctx, var, lane) bind(c, name="__enzyme_shadow") result(p)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: ctx
      real(c_double) :: var
      integer(c_int), value :: lane
      type(c_ptr) :: p
    end function
    subroutine zero_shadows(ctx) bind(c, name="__enzyme_zero_shadows")
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine
    function autodiff(fn, marker, ctx, x) bind(c, name="__enzyme_autodiff") result(d)
      import :: c_funptr, c_double, c_int, c_ptr
      type(c_funptr), value :: fn
      integer(c_int), value :: marker
      type(c_ptr), value :: ctx
      real(c_double), value :: x
      real(c_double) :: d
    end function
    function fwddiff(fn, marker, ctx, x, dx) bind(c, name="__enzyme_fwddiff") result(d)
      import :: c_funptr, c_double, c_int, c_ptr
      type(c_funptr), value :: fn
      integer(c_int), value :: marker
      type(c_ptr), value :: ctx
      real(c_double), value :: x, dx
      real(c_double) :: d
    end function
  end interface
  type(c_ptr) :: ctx
  real(c_double), pointer :: dw, dc(:)
  real(c_double) :: d
  integer :: rep
  ctx = new_context(1)
  call c_f_pointer(shadow_of(ctx, w, 0), dw)
  call c_f_pointer(shadow_of(ctx, coef(1), 0), dc, [3])
  do rep = 1, 2
    call zero_shadows(ctx)
    d = autodiff(c_funloc(f), enzyme_context, ctx, 3.0d0)
    print '(a, 3f10.4, a, 3f10.4)', 'got ', d, dw, dc(2), ' | ', 14.0d0, 9.0d0, 3.0d0
  end do
  dw = 1.0d0
  dc = 0.0d0
  print '(a, f10.4, a, f10.4)', 'got ', fwddiff(c_funloc(f), enzyme_context, ctx, 3.0d0, 0.0d0), &
    ' | ', 9.0d0
end program
