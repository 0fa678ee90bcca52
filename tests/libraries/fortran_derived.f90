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

! POINTER allocation, ALLOCATE with SOURCE=, and intrinsic assignment of derived types (a deep
! copy: the copy's allocatable components are its own)
subroutine copies_kernel(n, x, e) bind(c, name='copies_kernel')
  use fd_types
  implicit none
  integer, value :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: e
  real(8), pointer :: p(:)
  real(8), allocatable :: q(:)
  type(body) :: c1, c2
  type(body), allocatable :: group(:), twin(:)
  integer :: i
  allocate(p(n))
  p = x * x
  allocate(q, source=p(1:3))
  c1%x = x
  c1%m = x(2)
  c2 = c1                       ! deep copy
  c1%x = 2.0d0                  ! does not change c2
  allocate(group(2))
  group(1) = c2
  group(2)%x = sin(x)
  group(2)%m = x(1)
  twin = group                  ! allocation on assignment of a derived-type array
  deallocate(group)
  e = sum(p) * sum(q) + c2%m * sum(c2%x ** 3) + sum(c1%x)
  do i = 1, 2
    e = e + twin(i)%m * sum(twin(i)%x)
  end do
  deallocate(p)
end subroutine
