! A module's derived type built element by element (ps(i)%x = [...]: an array temporary
! assigned through descriptors by the runtime's assignment, whose base address was reloaded
! from the allocatable's descriptor: refused at -O0 before), an elemental and a pure module
! function, WHERE/ELSEWHERE, FORALL, RESHAPE, MATMUL, strided and reversed sections.
! Driven by fortran_reductions_main.c with n = 6.
module fd_phys
  implicit none
  type :: particle
    real(8) :: x(3), m
    integer :: id
  end type
contains
  elemental real(8) function soft(r) result(v)
    real(8), intent(in) :: r
    v = r / sqrt(1d0 + r * r)
  end function
  pure function kin(p) result(e)
    type(particle), intent(in) :: p
    real(8) :: e
    e = 0.5d0 * p%m * sum(p%x ** 2)
  end function
end module fd_phys

subroutine module_kernel(n, x, e) bind(c, name='module_kernel')
  use fd_phys
  implicit none
  integer, value :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: e
  type(particle), allocatable :: ps(:)
  real(8) :: a(n), b(n), m(2, 2), v(2)
  integer :: i
  allocate(ps(n))
  do i = 1, n
    ps(i)%x = [x(i), 2 * x(i), x(i) ** 2]
    ps(i)%m = 1 + 0.1d0 * i
    ps(i)%id = i
  end do
  e = sum([(kin(ps(i)), i = 1, n)])
  a = soft(x)
  where (x > 0.45d0)
    b = a * x
  elsewhere
    b = -a
  end where
  forall (i = 1:n) b(i) = b(i) + 0.1d0 * x(n - i + 1)
  m = reshape([x(1), x(2), x(3), x(4)], [2, 2])
  v = matmul(m, x(1:2))
  e = e + sum(b) + dot_product(v, v) + maxval(abs(x)) + norm2(x(2:n:2)) + product(x(1:3))
  e = e + sum(x(n:1:-1) * [(dble(i), i = 1, n)])
end subroutine
