! __enzyme_set_fixed_point called from Fortran through a bind(c) interface (what Enzyme's
! !$enzyme fixed_point directive lowers to) in a DO WHILE loop over module variables: the state
! u, the parameters p, and locals carried from one iteration to the next (the error, a tolerance
! it tightens and passes to the sweep, a count used after the loop). The gradient must equal the
! gradient through every iteration of the same loop unmarked and central differences; forward
! mode must match reverse mode (dot-product test).
module model
  use iso_c_binding
  implicit none
  integer, parameter :: m = 4
  real(c_double) :: u(m) = 0, p(m) = 0
  integer(c_int64_t) :: iters = 0
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  interface
    subroutine mark(reduction, max_iters, control, state, bytes) &
        bind(c, name="__enzyme_set_fixed_point")
      import :: c_double, c_int64_t, c_ptr, m
      real(c_double), value :: reduction
      integer(c_int64_t), value :: max_iters
      type(c_ptr), value :: control
      real(c_double), intent(in) :: state(m)
      integer(c_int64_t), value :: bytes
    end subroutine
  end interface
contains
  function sweep(tol) result(err)
    real(c_double), intent(in) :: tol
    real(c_double) :: err, t(m)
    integer :: k
    do k = 1, m
      t(k) = 0.3d0 * sin(u(k) + 0.5d0 * u(mod(k, m) + 1)) + p(k)**2
    end do
    err = 0
    do k = 1, m
      err = max(err, abs(t(k) - u(k)))
      u(k) = t(k)
    end do
    if (err <= tol) err = 0
  end function

  function loss() result(s)
    real(c_double) :: s
    integer :: k
    s = 0
    do k = 1, m
      s = s + k * u(k)**2
    end do
  end function

  function marked(x) bind(c, name="marked") result(s)
    real(c_double), intent(in) :: x(m)
    real(c_double) :: s, err, tol
    integer(c_int64_t) :: n
    integer :: k
    do k = 1, m
      p(k) = x(k)
      u(k) = 0
    end do
    err = 1
    tol = 1d-8
    n = 0
    do while (err > 0)
      call mark(1d-30, -1_c_int64_t, c_null_ptr, u, int(8 * m, c_int64_t))
      err = sweep(tol)
      tol = max(tol * 0.1d0, 1d-15)
      n = n + 1
    end do
    iters = n
    s = loss()
  end function

  function plain(x) bind(c, name="plain") result(s)
    real(c_double), intent(in) :: x(m)
    real(c_double) :: s, err, tol
    integer(c_int64_t) :: n
    integer :: k
    do k = 1, m
      p(k) = x(k)
      u(k) = 0
    end do
    err = 1
    tol = 1d-8
    n = 0
    do while (err > 0)
      err = sweep(tol)
      tol = max(tol * 0.1d0, 1d-15)
      n = n + 1
    end do
    iters = n
    s = loss()
  end function
end module

program main
  use model
  implicit none
  interface
    subroutine autodiff(fn, marker, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double, m
      type(c_funptr), value :: fn
      integer(c_int), value :: marker
      real(c_double) :: x(m), dx(m)
    end subroutine
    function fwddiff(fn, marker, x, dx) bind(c, name="__enzyme_fwddiff") result(d)
      import :: c_funptr, c_int, c_double, m
      type(c_funptr), value :: fn
      integer(c_int), value :: marker
      real(c_double) :: x(m), dx(m)
      real(c_double) :: d
    end function
  end interface
  real(c_double) :: x(m), d0(m), d(m), v(m), xs(m), h, up, dn
  integer(c_int64_t) :: n0
  integer :: k
  h = 1d-6
  do k = 1, m
    x(k) = 0.3d0 + 0.1d0 * k
    v(k) = 1 - 0.3d0 * k
  end do
  d0 = 0
  d = 0
  call autodiff(c_funloc(plain), enzyme_dup, x, d0)
  n0 = iters
  call autodiff(c_funloc(marked), enzyme_dup, x, d)
  print '(a, i4, a, i4)', 'iters ', iters, ' | ', n0
  do k = 1, m
    print '(a, i1, es25.16, a, es25.16)', 'taped ', k, d(k), ' | ', d0(k)
    xs = x
    xs(k) = x(k) + h
    up = marked(xs)
    xs(k) = x(k) - h
    dn = marked(xs)
    print '(a, i1, es25.16, a, es25.16)', 'fd ', k, d(k), ' | ', (up - dn) / (2 * h)
  end do
  print '(a, es25.16, a, es25.16)', 'dot ', fwddiff(c_funloc(marked), enzyme_dup, x, v), &
    ' | ', dot_product(v, d)
end program
