! Blocked Cholesky and LU factorizations and their solves, in the style of LAPACK's dpotrf /
! dgetrf / dpotrs / dgetrs (written for enzyme-cc's benchmarks and tests): the diagonal block or
! panel is factored by plain loops, the rest of the matrix updated by the level-3 kernels of
! blas3.f90. Column-major; C calls them as bchol_(...) etc. with every argument by reference.

! A = L L^T, L in A's lower triangle (the upper one is not referenced); info > 0: not positive
! definite at that column
subroutine bchol(n, a, lda, nb, info)
  implicit none
  integer, intent(in) :: n, lda, nb
  double precision, intent(inout) :: a(lda, *)
  integer, intent(out) :: info
  integer :: j, jb
  info = 0
  do j = 1, n, nb
    jb = min(nb, n - j + 1)
    call dsyrk('L', 'N', jb, j - 1, -1d0, a(j, 1), lda, 1d0, a(j, j), lda)
    call chol2(jb, a(j, j), lda, info)
    if (info /= 0) then
      info = info + j - 1
      return
    end if
    if (j + jb <= n) then
      call dgemm('N', 'T', n - j - jb + 1, jb, j - 1, -1d0, a(j + jb, 1), lda, a(j, 1), lda, &
                 1d0, a(j + jb, j), lda)
      call dtrsm('R', 'L', 'T', 'N', n - j - jb + 1, jb, 1d0, a(j, j), lda, a(j + jb, j), lda)
    end if
  end do
end subroutine

! the unblocked Cholesky of a diagonal block
subroutine chol2(n, a, lda, info)
  implicit none
  integer, intent(in) :: n, lda
  double precision, intent(inout) :: a(lda, *)
  integer, intent(out) :: info
  integer :: i, j, l
  double precision :: s
  do j = 1, n
    s = a(j, j)
    do l = 1, j - 1
      s = s - a(j, l) * a(j, l)
    end do
    if (s <= 0d0) then
      info = j
      return
    end if
    a(j, j) = sqrt(s)
    do i = j + 1, n
      s = a(i, j)
      do l = 1, j - 1
        s = s - a(i, l) * a(j, l)
      end do
      a(i, j) = s / a(j, j)
    end do
  end do
end subroutine

! B := A^-1 B with A's Cholesky factor from bchol
subroutine bchol_solve(n, nrhs, a, lda, b, ldb)
  implicit none
  integer, intent(in) :: n, nrhs, lda, ldb
  double precision, intent(in) :: a(lda, *)
  double precision, intent(inout) :: b(ldb, *)
  call dtrsm('L', 'L', 'N', 'N', n, nrhs, 1d0, a, lda, b, ldb)
  call dtrsm('L', 'L', 'T', 'N', n, nrhs, 1d0, a, lda, b, ldb)
end subroutine

! P A = L U with partial pivoting (unit L below the diagonal, U on and above it); ipiv(i): the
! row swapped with row i; info > 0: U(info, info) is zero
subroutine blu(n, a, lda, ipiv, nb, info)
  implicit none
  integer, intent(in) :: n, lda, nb
  double precision, intent(inout) :: a(lda, *)
  integer, intent(out) :: ipiv(*), info
  integer :: j, jb, jj, i, p, c
  double precision :: big, t
  info = 0
  do j = 1, n, nb
    jb = min(nb, n - j + 1)
    do jj = j, j + jb - 1
      p = jj
      big = abs(a(jj, jj))
      do i = jj + 1, n
        if (abs(a(i, jj)) > big) then
          big = abs(a(i, jj))
          p = i
        end if
      end do
      ipiv(jj) = p
      if (p /= jj) then
        do c = 1, n
          t = a(jj, c)
          a(jj, c) = a(p, c)
          a(p, c) = t
        end do
      end if
      if (a(jj, jj) == 0d0) then
        if (info == 0) info = jj
        cycle
      end if
      do i = jj + 1, n
        a(i, jj) = a(i, jj) / a(jj, jj)
      end do
      do c = jj + 1, j + jb - 1
        do i = jj + 1, n
          a(i, c) = a(i, c) - a(i, jj) * a(jj, c)
        end do
      end do
    end do
    if (j + jb <= n) then
      call dtrsm('L', 'L', 'N', 'U', jb, n - j - jb + 1, 1d0, a(j, j), lda, a(j, j + jb), lda)
      call dgemm('N', 'N', n - j - jb + 1, n - j - jb + 1, jb, -1d0, a(j + jb, j), lda, &
                 a(j, j + jb), lda, 1d0, a(j + jb, j + jb), lda)
    end if
  end do
end subroutine

! B := A^-1 B with A's factors from blu
subroutine blu_solve(n, nrhs, a, lda, ipiv, b, ldb)
  implicit none
  integer, intent(in) :: n, nrhs, lda, ldb, ipiv(*)
  double precision, intent(in) :: a(lda, *)
  double precision, intent(inout) :: b(ldb, *)
  integer :: i, c
  double precision :: t
  do i = 1, n
    if (ipiv(i) /= i) then
      do c = 1, nrhs
        t = b(i, c)
        b(i, c) = b(ipiv(i), c)
        b(ipiv(i), c) = t
      end do
    end if
  end do
  call dtrsm('L', 'L', 'N', 'U', n, nrhs, 1d0, a, lda, b, ldb)
  call dtrsm('L', 'U', 'N', 'N', n, nrhs, 1d0, a, lda, b, ldb)
end subroutine
