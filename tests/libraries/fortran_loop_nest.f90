! B := alpha B triu(A) column by column from the last (the shape of a right-side triangular
! multiply), with a flag from a LOGICAL function: compiled without optimization and optimized at
! the link, LLVM leaves this loop nest with one block that is the latch of both loops (the inner
! loop's exit is the outer loop's backedge). The derivative used to enter the inner loop's
! reverse without its iteration count (wrong gradient or a crash); fortran_loop_nest_main.c checks.
logical function same_letter(a, b)
  character, intent(in) :: a, b
  same_letter = a == b .or. ichar(a) == ichar(b) + 32
end function

subroutine right_upper_mult(diag, m, n, alpha, a, lda, b, ldb)
  implicit none
  character, intent(in) :: diag
  integer, intent(in) :: m, n, lda, ldb
  double precision, intent(in) :: alpha, a(lda, *)
  double precision, intent(inout) :: b(ldb, *)
  logical, external :: same_letter
  integer :: i, j, k
  double precision :: temp
  logical :: scaled
  scaled = same_letter(diag, 'N')
  if (m == 0 .or. n == 0) return
  do j = n, 1, -1
    temp = alpha
    if (scaled) temp = temp * a(j, j)
    do i = 1, m
      b(i, j) = temp * b(i, j)
    end do
    do k = 1, j - 1
      temp = alpha * a(k, j)
      do i = 1, m
        b(i, j) = b(i, j) + temp * b(i, k)
      end do
    end do
  end do
end subroutine
