! The module and its consumer of module_copy_in.f90, compiled as a file of its own (NPB LU's
! lu_data.f90 and rhs.f90): the consumer reads the module arrays as REAL(8) where the copy
! into them cannot see it.
module copy_in_data
  implicit none
  double precision, allocatable :: u(:, :), r(:, :)
end module

subroutine squares
  use copy_in_data
  implicit none
  integer :: i, m
  do i = 1, size(u, 2)
    do m = 1, size(u, 1)
      r(m, i) = u(m, i) ** 2
    end do
  end do
end subroutine
