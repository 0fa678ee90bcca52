! An element loop copying an argument into a module allocatable (NPB's `u(m, i, j, k) =
! uin(l)` in a driver), which LLVM makes a memcpy, with the module's arrays read in another
! file (module_copy_in_data.f90): nothing in this function types the copied memory, and it was
! refused ("cannot deduce the type of the memory being copied"). The module array's
! descriptor declares its data REAL(8) (its type code): that types the copy. f = sum u^2 with
! u = x, so df/dx = 2 x. Each line: name, got | expected.
module copy_in_obj
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  subroutine copyin(dst, src, n)
    integer :: n, i
    double precision :: dst(n), src(n)
    do i = 1, n
      dst(i) = src(i)
    end do
  end subroutine

  function obj(x, n) bind(c, name="obj") result(f)
    use copy_in_data
    integer(c_int), value :: n
    real(c_double) :: x(*), f
    call copyin(u, x, n)
    call squares
    f = sum(r)
  end function
end module

program main
  use copy_in_obj
  use copy_in_data
  implicit none
  interface
    subroutine grad(fp, d1, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  double precision, allocatable :: x(:), dx(:)
  integer :: i
  allocate(u(2, 3), r(2, 3), x(6), dx(6))
  x = [(0.5d0 * i - 1, i = 1, 6)]
  dx = 0
  call grad(c_funloc(obj), enzyme_dup, x, dx, enzyme_const, 6)
  do i = 1, 6
    print '(a, i0, g24.15, a, g24.15)', 'dx', i, dx(i), ' | ', 2 * x(i)
  end do
end program
