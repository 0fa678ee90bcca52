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
! row swapped with row i; info > 0: U(info, info) is zero. Right-looking over block columns of
! nb, each panel factored recursively (as LAPACK's dgetrf over dgetrf2)
subroutine blu(n, a, lda, ipiv, nb, info)
  implicit none
  integer, intent(in) :: n, lda, nb
  double precision, intent(inout) :: a(lda, *)
  integer, intent(out) :: ipiv(*), info
  integer :: j, jb, i
  info = 0
  do j = 1, n, nb
    jb = min(nb, n - j + 1)
    call lu_panel(n - j + 1, jb, a(j, j), lda, ipiv(j), info)
    do i = j, j + jb - 1
      ipiv(i) = ipiv(i) + j - 1
    end do
    call swap_rows(j - 1, a, lda, j, j + jb - 1, ipiv)                 ! left of the panel
    if (j + jb <= n) then
      call swap_rows(n - j - jb + 1, a(1, j + jb), lda, j, j + jb - 1, ipiv)   ! right of it
      call dtrsm('L', 'L', 'N', 'U', jb, n - j - jb + 1, 1d0, a(j, j), lda, a(j, j + jb), lda)
      call dgemm('N', 'N', n - j - jb + 1, n - j - jb + 1, jb, -1d0, a(j + jb, j), lda, &
                 a(j, j + jb), lda, 1d0, a(j + jb, j + jb), lda)
    end if
  end do
end subroutine

! the LU factorization with partial pivoting of an m x n panel (m >= n), recursively: the left
! half, then the right half updated by a triangular solve and a product, then factored
recursive subroutine lu_panel(m, n, a, lda, ipiv, info)
  implicit none
  integer, intent(in) :: m, n, lda
  double precision, intent(inout) :: a(lda, *)
  integer, intent(inout) :: ipiv(*), info
  integer :: i, p, n1, n2
  double precision :: big, t
  if (n == 1) then
    p = 1
    big = abs(a(1, 1))
    do i = 2, m
      if (abs(a(i, 1)) > big) then
        big = abs(a(i, 1))
        p = i
      end if
    end do
    ipiv(1) = p
    if (a(p, 1) == 0d0) then
      if (info == 0) info = 1
      return
    end if
    if (p /= 1) then
      t = a(1, 1)
      a(1, 1) = a(p, 1)
      a(p, 1) = t
    end if
    do i = 2, m
      a(i, 1) = a(i, 1) / a(1, 1)
    end do
    return
  end if
  n1 = n / 2
  n2 = n - n1
  call lu_panel(m, n1, a, lda, ipiv, info)
  call swap_rows(n2, a(1, n1 + 1), lda, 1, n1, ipiv)
  call dtrsm('L', 'L', 'N', 'U', n1, n2, 1d0, a, lda, a(1, n1 + 1), lda)
  call dgemm('N', 'N', m - n1, n2, n1, -1d0, a(n1 + 1, 1), lda, a(1, n1 + 1), lda, 1d0, &
             a(n1 + 1, n1 + 1), lda)
  call lu_panel(m - n1, n2, a(n1 + 1, n1 + 1), lda, ipiv(n1 + 1), info)
  do i = n1 + 1, n
    ipiv(i) = ipiv(i) + n1
  end do
  call swap_rows(n1, a, lda, n1 + 1, n, ipiv)
end subroutine

! rows k1..k2 of the ncols columns of A swapped in turn with rows ipiv(k1..k2), as LAPACK's dlaswp
subroutine swap_rows(ncols, a, lda, k1, k2, ipiv)
  implicit none
  integer, intent(in) :: ncols, lda, k1, k2, ipiv(*)
  double precision, intent(inout) :: a(lda, *)
  integer :: c, i
  double precision :: t
  do c = 1, ncols
    do i = k1, k2
      if (ipiv(i) /= i) then
        t = a(i, c)
        a(i, c) = a(ipiv(i), c)
        a(ipiv(i), c) = t
      end if
    end do
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
