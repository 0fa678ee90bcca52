! Copy loops over arrays reached through a module variable's allocatable array of derived type
! (CloverLeaf's reset_field_kernel on chunk%tiles(t)%field%density0/density1), which LLVM makes
! memcpy calls: each end's base address is reloaded from the descriptor inside a tile, an
! element of an array indexed at run time, and the copies were refused ("cannot deduce the type
! of the memory being copied"). Pointers loaded from one field of such elements now share their
! type evidence (copy_types._element_slot). f = sum_jk a(j, k)^2 + b(j, k) with a = b = 3 x
! after the copy, so df/dx = 18 x + 3. Each line: name, got | expected.
module tiles
  use iso_c_binding
  implicit none
  type field_type
    real(8), allocatable :: a(:, :), b(:, :)
  end type
  type tile_type
    type(field_type) :: field
  end type
  type chunk_type
    type(tile_type), allocatable :: tiles(:)
  end type
  type(chunk_type) :: chunk
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  subroutine build(n)
    integer, intent(in) :: n
    allocate(chunk%tiles(2))
    allocate(chunk%tiles(2)%field%a(-1:n + 2, -1:n + 2), chunk%tiles(2)%field%b(-1:n + 2, -1:n + 2))
    chunk%tiles(2)%field%a = 0
    chunk%tiles(2)%field%b = 0
  end subroutine

  subroutine reset(xmin, xmax, ymin, ymax, a, b)
    integer :: xmin, xmax, ymin, ymax, j, k
    real(8), dimension(xmin - 2:xmax + 2, ymin - 2:ymax + 2) :: a, b
    do k = ymin, ymax
      do j = xmin, xmax
        a(j, k) = b(j, k)
      end do
    end do
  end subroutine

  function f(x, n) bind(c, name="f") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n, n)
    real(c_double) :: s
    integer :: j, k, t
    t = 2
    do k = 1, n
      do j = 1, n
        chunk%tiles(t)%field%b(j, k) = 3 * x(j, k)
      end do
    end do
    call reset(1, n, 1, n, chunk%tiles(t)%field%a, chunk%tiles(t)%field%b)
    s = 0
    do k = 1, n
      do j = 1, n
        s = s + chunk%tiles(t)%field%a(j, k) ** 2 + chunk%tiles(t)%field%b(j, k)
      end do
    end do
  end function
end module

program main
  use tiles
  implicit none
  interface
    subroutine grad(fp, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double, c_int
      type(c_funptr), value :: fp
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  integer, parameter :: n = 5
  real(c_double) :: x(n, n), dx(n, n)
  integer :: j, k
  call build(n)
  do k = 1, n
    do j = 1, n
      x(j, k) = 0.1d0 * j - 0.05d0 * k
    end do
  end do
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, n)
  do k = 1, n, 2
    print '(a, i0, a, i0, g24.15, a, g24.15)', 'dx', 2, ',', k, dx(2, k), ' | ', 18 * x(2, k) + 3
  end do
end program
