! Derived types with allocatable components (flang's runtime: ALLOCATE and DEALLOCATE of arrays
! of them, their default initialization, their destruction at the end of a scope and on entry to
! an INTENT(OUT) dummy) and MOVE_ALLOC; differentiated through enzyme-cc's own implementation
! (rules/fortran_derived.c). Driven by fortran_reductions_main.c.
module fd_types
  implicit none
  type :: body
    real(8), allocatable :: x(:)
    real(8) :: m = 1.5d0
    real(4) :: w(2) = [0.5, 0.25]
    integer :: id = 7
  end type
  type :: system
    type(body), allocatable :: b(:)
    type(body) :: anchor
    real(8) :: scale = 2.0d0
  end type
contains
  subroutine setup(s, n, x)
    type(system), intent(out) :: s
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    integer :: i
    allocate(s%b(3))
    do i = 1, 3
      s%b(i)%x = x * dble(i) + x(i)
      s%b(i)%m = s%b(i)%m * x(i)
    end do
    s%anchor%x = x(n:1:-1)
  end subroutine
end module

subroutine derived_kernel(n, x, e) bind(c, name='derived_kernel')
  use fd_types
  implicit none
  integer, value :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: e
  type(system) :: s
  type(body), allocatable :: spare(:), moved(:)
  integer :: i, k
  e = 0
  do k = 1, 2
    call setup(s, n, x * dble(k))
    do i = 1, 3
      e = e + s%scale * s%b(i)%m * sum(s%b(i)%x ** 2) + s%b(i)%w(1) * s%b(i)%x(1)
    end do
    e = e + dot_product(s%anchor%x, x) + s%anchor%m * s%b(2)%id
  end do
  allocate(spare(2))
  spare(1)%x = x ** 2
  spare(2)%x = sin(x)
  call move_alloc(spare, moved)
  e = e + sum(moved(1)%x) * moved(2)%m + product(moved(2)%x(1:2))
  deallocate(moved)
end subroutine
