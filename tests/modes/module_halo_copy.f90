! Halo copies between tiles of a module variable (CloverLeaf's update_tile_halo): a kernel whose
! explicit-shape REAL(8) dummies it only copies (LLVM makes each copy loop a memcpy), handed the
! fields of chunk%tiles(t)%field from a caller that does not access them either. Nothing in
! either function types the copied memory; the tile type's description does (its components'
! kind). f = sum over tile 2's columns 1..n of a^2 + 3 b, after copying tile 1's a and b into
! them, where tile 1's a = x, b = 2 x: df/dx = 2 x + 6.
module halo
  use iso_c_binding
  implicit none
  type field_type
    real(8), allocatable :: a(:, :), b(:, :), c(:, :), d(:, :)
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
    integer :: t
    allocate(chunk%tiles(2))
    do t = 1, 2
      allocate(chunk%tiles(t)%field%a(0:n + 1, n), chunk%tiles(t)%field%b(0:n + 1, n))
      allocate(chunk%tiles(t)%field%c(0:n + 1, n), chunk%tiles(t)%field%d(0:n + 1, n))
      chunk%tiles(t)%field%a = 0
      chunk%tiles(t)%field%b = 0
      chunk%tiles(t)%field%c = 1
      chunk%tiles(t)%field%d = 2
    end do
  end subroutine

  subroutine copy_kernel(n, depth, a, b, c, d, fa, fb, fc, fd, which)
    integer :: n, depth, which(4), j, k
    real(8), dimension(0:n + 1, n) :: a, b, c, d, fa, fb, fc, fd
    if (which(1) == 1) then
      do k = 1, depth
        do j = 1, n
          a(j, k) = fa(j, k)
        end do
      end do
    end if
    if (which(2) == 1) then
      do k = 1, depth
        do j = 1, n
          b(j, k) = fb(j, k)
        end do
      end do
    end if
    if (which(3) == 1) then
      do k = 1, depth
        do j = 0, n + 1
          c(j, k) = fc(j, k)
        end do
      end do
    end if
    if (which(4) == 1) then
      do k = 1, depth
        do j = 0, n + 1
          d(j, k) = fd(j, k)
        end do
      end do
    end if
  end subroutine

  subroutine exchange(n, depth)
    integer :: n, depth, which(4)
    which = [1, 1, 0, 1]
    call copy_kernel(n, depth, chunk%tiles(2)%field%a, chunk%tiles(2)%field%b, &
                     chunk%tiles(2)%field%c, chunk%tiles(2)%field%d, &
                     chunk%tiles(1)%field%a, chunk%tiles(1)%field%b, &
                     chunk%tiles(1)%field%c, chunk%tiles(1)%field%d, which)
  end subroutine

  function f(x, n) bind(c, name="f") result(s)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n, n)
    real(c_double) :: s
    integer :: j, k
    do k = 1, n
      do j = 1, n
        chunk%tiles(1)%field%a(j, k) = x(j, k)
        chunk%tiles(1)%field%b(j, k) = 2 * x(j, k)
      end do
    end do
    call exchange(n, n)
    s = 0
    do k = 1, n
      do j = 1, n
        s = s + chunk%tiles(2)%field%a(j, k) ** 2 + 3 * chunk%tiles(2)%field%b(j, k)
      end do
    end do
  end function
end module

program main
  use halo
  implicit none
  interface
    subroutine grad(fp, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double, c_int
      type(c_funptr), value :: fp
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  integer, parameter :: n = 4
  real(c_double) :: x(n, n), dx(n, n)
  integer :: j, k
  call build(n)
  do k = 1, n
    do j = 1, n
      x(j, k) = 0.3d0 * j - 0.2d0 * k
    end do
  end do
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, n)
  do k = 1, n, 3
    print '(a, i0, a, i0, g24.15, a, g24.15)', 'dx', 3, ',', k, dx(3, k), ' | ', 2 * x(3, k) + 6
  end do
end program
