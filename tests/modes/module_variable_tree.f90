! A module variable that is an allocatable array of a derived type whose components hold
! allocatable arrays of their own, two levels down (CloverLeaf's `chunks(:)`, TeaLeaf's
! `chunk%tiles(:)`): allocated by the main program, written and read in the differentiated
! function. Its shadow was refused ("memory that has no shadow"; before that, its inner
! descriptors stayed null and the derivative crashed). Now each derivative's entry gives it a
! tree of buffers of the same shapes (rules/fortran_shadow.c), freed by the next entry.
! Per chunk c and tile t: a_i = e_i s_t + c t (s_t = t / 2, stored through an integer index
! component), b_i = sin(e_i) w_c; f = sum_ct sum_i a_i^2 + b_i a_i, so
! df/de_i = sum_ct 2 a_i s_t + cos(e_i) w_c a_i + b_i s_t. Three gradients, the third after
! the second chunk's tiles were reallocated with another count. Each line: name, got | expected.
module defs
  implicit none
  type field_type
    real(8), allocatable :: a(:), b(:, :)
    integer, allocatable :: idx(:)
    real(8) :: scale
  end type
  type tile_type
    type(field_type) :: field
    integer :: n
  end type
  type chunk_type
    type(tile_type), allocatable :: tiles(:)
    real(8) :: w(2)
  end type
  type(chunk_type), allocatable :: chunks(:)
end module

module objective
  use iso_c_binding
  use defs
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function obj(e, n) bind(c, name="obj") result(f)
    integer(c_int), value :: n
    real(c_double), intent(in) :: e(n)
    real(c_double) :: f
    integer :: c, t, i
    f = 0
    do c = 1, size(chunks)
      do t = 1, size(chunks(c)%tiles)
        associate (fl => chunks(c)%tiles(t)%field)
          do i = 1, n
            fl%a(fl%idx(i)) = e(i) * fl%scale + c * t
            fl%b(i, 2) = sin(e(i)) * chunks(c)%w(1)
          end do
          f = f + sum(fl%a(1:n) ** 2) + sum(fl%b(1:n, 2) * fl%a(1:n))
        end associate
      end do
    end do
  end function

  subroutine make_tiles(c, count)
    integer, intent(in) :: c, count
    integer :: t, i
    if (allocated(chunks(c)%tiles)) deallocate(chunks(c)%tiles)
    allocate(chunks(c)%tiles(count))
    do t = 1, count
      allocate(chunks(c)%tiles(t)%field%a(5), chunks(c)%tiles(t)%field%b(4, 3))
      allocate(chunks(c)%tiles(t)%field%idx(4))
      chunks(c)%tiles(t)%field%idx = [(i, i = 1, 4)]
      chunks(c)%tiles(t)%field%scale = 0.5d0 * t
      chunks(c)%tiles(t)%n = 4
    end do
  end subroutine
end module

program p
  use objective
  implicit none
  interface
    subroutine grad(fp, d1, e, de, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c, n
      real(c_double) :: e(*), de(*)
    end subroutine
  end interface
  real(c_double) :: e(4) = [1d0, 2d0, 3d0, 4d0], de(4), want(4), a, b
  integer :: c, t, i, round
  allocate(chunks(2))
  do c = 1, 2
    chunks(c)%w = [1.5d0 * c, 2d0]
    call make_tiles(c, c + 1)
  end do
  do round = 1, 3
    if (round == 3) call make_tiles(2, 1)
    de = 0
    call grad(c_funloc(obj), enzyme_dup, e, de, enzyme_const, 4)
    want = 0
    do c = 1, 2
      do t = 1, size(chunks(c)%tiles)
        do i = 1, 4
          a = e(i) * 0.5d0 * t + c * t
          b = sin(e(i)) * chunks(c)%w(1)
          want(i) = want(i) + 2 * a * 0.5d0 * t + cos(e(i)) * chunks(c)%w(1) * a + b * 0.5d0 * t
        end do
      end do
    end do
    do i = 1, 4
      print '(a, i0, a, i0, g24.15, a, g24.15)', 'round', round, ' de', i, de(i), ' | ', want(i)
    end do
  end do
end program
