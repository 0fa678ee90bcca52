! Level-3 BLAS-style kernels with the Reference BLAS interface (column-major, every argument by
! reference), written for enzyme-cc's benchmarks and tests: the routines a blocked Cholesky or LU
! spends its time in. Plain loops in the column order a Fortran compiler vectorizes.

! C := alpha op(A) op(B) + beta C
subroutine dgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
  implicit none
  character, intent(in) :: transa, transb
  integer, intent(in) :: m, n, k, lda, ldb, ldc
  double precision, intent(in) :: alpha, beta, a(lda, *), b(ldb, *)
  double precision, intent(inout) :: c(ldc, *)
  logical :: ta, tb
  integer :: i, j, l
  double precision :: s
  ta = transa /= 'N' .and. transa /= 'n'
  tb = transb /= 'N' .and. transb /= 'n'
  do j = 1, n
    if (beta == 0d0) then
      c(1:m, j) = 0d0
    else if (beta /= 1d0) then
      c(1:m, j) = beta * c(1:m, j)
    end if
    if (.not. ta) then
      do l = 1, k
        if (tb) then
          s = alpha * b(j, l)
        else
          s = alpha * b(l, j)
        end if
        do i = 1, m
          c(i, j) = c(i, j) + s * a(i, l)
        end do
      end do
    else
      do i = 1, m
        s = 0d0
        if (tb) then
          do l = 1, k
            s = s + a(l, i) * b(j, l)
          end do
        else
          do l = 1, k
            s = s + a(l, i) * b(l, j)
          end do
        end if
        c(i, j) = c(i, j) + alpha * s
      end do
    end if
  end do
end subroutine

! C := alpha op(A) op(A)^T + beta C on the uplo triangle of C (n x n); op(A) is n x k
subroutine dsyrk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
  implicit none
  character, intent(in) :: uplo, trans
  integer, intent(in) :: n, k, lda, ldc
  double precision, intent(in) :: alpha, beta, a(lda, *)
  double precision, intent(inout) :: c(ldc, *)
  logical :: lower, tr
  integer :: i, j, l, lo, hi
  double precision :: s
  lower = uplo == 'L' .or. uplo == 'l'
  tr = trans /= 'N' .and. trans /= 'n'
  do j = 1, n
    if (lower) then
      lo = j
      hi = n
    else
      lo = 1
      hi = j
    end if
    do i = lo, hi
      c(i, j) = beta * c(i, j)
    end do
    if (.not. tr) then
      do l = 1, k
        s = alpha * a(j, l)
        do i = lo, hi
          c(i, j) = c(i, j) + s * a(i, l)
        end do
      end do
    else
      do i = lo, hi
        s = 0d0
        do l = 1, k
          s = s + a(l, i) * a(l, j)
        end do
        c(i, j) = c(i, j) + alpha * s
      end do
    end if
  end do
end subroutine

! B := alpha op(A)^-1 B (side L) or alpha B op(A)^-1 (side R); A triangular (uplo), unit
! diagonal when diag = 'U'; B is m x n
subroutine dtrsm(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)
  implicit none
  character, intent(in) :: side, uplo, transa, diag
  integer, intent(in) :: m, n, lda, ldb
  double precision, intent(in) :: alpha, a(lda, *)
  double precision, intent(inout) :: b(ldb, *)
  logical :: left, lower, tr, unit, low
  integer :: i, j, l, s
  double precision :: v
  left = side == 'L' .or. side == 'l'
  lower = uplo == 'L' .or. uplo == 'l'
  tr = transa /= 'N' .and. transa /= 'n'
  unit = diag == 'U' .or. diag == 'u'
  low = lower .neqv. tr                  ! op(A) is lower triangular
  if (alpha /= 1d0) b(1:m, 1:n) = alpha * b(1:m, 1:n)
  if (left) then
    do j = 1, n
      if (.not. tr) then
        do s = 1, m
          if (low) then
            l = s
          else
            l = m + 1 - s
          end if
          if (.not. unit) b(l, j) = b(l, j) / a(l, l)
          v = b(l, j)
          if (low) then
            do i = l + 1, m
              b(i, j) = b(i, j) - v * a(i, l)
            end do
          else
            do i = 1, l - 1
              b(i, j) = b(i, j) - v * a(i, l)
            end do
          end if
        end do
      else
        do s = 1, m
          if (low) then
            i = s
          else
            i = m + 1 - s
          end if
          v = b(i, j)
          if (low) then
            do l = 1, i - 1
              v = v - a(l, i) * b(l, j)
            end do
          else
            do l = i + 1, m
              v = v - a(l, i) * b(l, j)
            end do
          end if
          if (.not. unit) v = v / a(i, i)
          b(i, j) = v
        end do
      end if
    end do
  else
    do s = 1, n
      if (low) then
        j = n + 1 - s
      else
        j = s
      end if
      do l = 1, n
        if ((low .and. l > j) .or. (.not. low .and. l < j)) then
          if (tr) then
            v = a(j, l)
          else
            v = a(l, j)
          end if
          do i = 1, m
            b(i, j) = b(i, j) - v * b(i, l)
          end do
        end if
      end do
      if (.not. unit) b(1:m, j) = b(1:m, j) / a(j, j)
    end do
  end if
end subroutine
