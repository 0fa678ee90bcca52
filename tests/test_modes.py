"""Forward, vector, split, higher-order modes, indirect calls and Enzyme's C++ interface.

Each program prints lines `got... | expected...`; the test compares the numbers on both sides
(and the dot-product test <J v, g> for forward against reverse)."""
import os
import shutil
import subprocess

import pytest

from conftest import run, floats, sampled

HERE = os.path.join(os.path.dirname(__file__), "modes")
PROGRAMS = ["forward.c", "libm_out_reverse_vector.c", "hvp.c", "hvp_repeat.c", "hvp_vector_reverse.c", "higher_order.c", "saddle.cpp", "particle.cpp", "split.c", "split_allocated.c", "nofree_heap.c", "nofree_local.c", "vector.c", "vector_calls.c", "vector_indirect.c", "indirect.c", "cxx_api.cpp", "cxx_api_refs.cpp", "reverse_struct_result.cpp", "width_dupnoneed.c", "registrations.c", "registrations_reached.c", "allocation_like.c", "global_shadow.c", "global_shadow.cpp", "global_shadow_mangled.cpp", "cxx_sret.cpp", "float_bits_argument.c", "float_bits_returned.c", "packed_records.cpp", "float_bits_indirect.c", "float_bits_records.c", "tagged_unions.c", "sret_forward_default.c", "global_work_freed.c", "float_exponent_field.c", "frexp_bits.c", "float_pairs_sse.c", "unrotated_loops.c", "bsearch_lookup.c", "records_with_pointers.c"]


def _pairs(out: str):
    for line in out.splitlines():
        if "|" in line:
            got, want = line.split("|", 1)
            yield line, floats(got)[-len(floats(want)):] if floats(want) else [], floats(want)
        elif "Jv" in line:                       # Jv <value>  <g,v> <value>
            a, b = floats(line)[-2:]
            yield line, [a], [b]
        elif line.startswith(("which", "norm")):
            vals = floats(line.split(":", 1)[1]) if ":" in line else floats(line)
            yield line, vals[0::2], vals[1::2]


def _mode_params():
    """Every program at -O0 and -O2; at -Og and -O3 a fixed quarter each (the rest in the slow
    tier: the same pipelines with another inline and unroll budget)."""
    for prog in PROGRAMS:
        for opt in ("-O0", "-Og", "-O2", "-O3"):
            slow = opt in ("-Og", "-O3") and not sampled(prog, 4, opt)
            yield pytest.param(prog, opt, marks=[pytest.mark.slow] if slow else [],
                               id=f"{prog}-{opt}")


@pytest.mark.parametrize("prog,opt", list(_mode_params()))
def test_mode_program(tmp_path, prog, opt):
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    driver = "enzyme-c++" if prog.endswith(".cpp") else "enzyme-cc"
    exe = tmp_path / "prog"
    extra = ["-std=c++17"] if prog.endswith(".cpp") else []
    run([driver, opt, *extra, str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    out = run([str(exe)], cwd=tmp_path).stdout
    checked = 0
    for line, got, want in _pairs(out):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), line
        checked += 1
    assert checked >= 1, out


@pytest.mark.parametrize("opt", ["-Os", "-Oz"])
@pytest.mark.parametrize("prog", ["unrotated_loops.c", "split.c", "forward.c", "frexp_bits.c",
                                  "bsearch_lookup.c"])
def test_mode_program_size_levels(tmp_path, prog, opt):
    """The size levels keep loops unrotated (an inner loop exits straight to the outer header)
    and give no inline bsearch (enzyme-cc links one)."""
    test_mode_program(tmp_path, prog, opt)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["cxx_api.cpp", "cxx_api_refs.cpp"])
def test_cxx_api_without_inlining(tmp_path, prog, opt):
    """<enzyme/enzyme> under -fno-inline: the header's lambdas that call the markers are
    always_inline, so the markers still reach them as the markers' addresses (refused before:
    "too many arguments to __enzyme_autodiff")."""
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    run(["enzyme-c++", opt, "-fno-inline", "-std=c++17", str(src), "-lm", "-o", "prog"],
        cwd=tmp_path)
    pairs = list(_pairs(run([str(tmp_path / "prog")], cwd=tmp_path).stdout))
    assert len(pairs) >= 3
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), line


@pytest.mark.parametrize("opt", [["-O0", "-fno-inline"], ["-O2", "-fno-inline"], ["-Oz"]])
@pytest.mark.parametrize("prog,pairs", [("vector_records_out_of_line.cpp", 8),
                                        ("const_capture_out_of_line.cpp", 1)])
def test_cxx_out_of_line(tmp_path, prog, pairs, opt):
    """C++ whose library calls stay calls: std::vector<record> grown inside the derivative
    (the records' type from the C++ signature of std::__relocate_a_1<Osc, Osc>(Osc*, ...)), and
    an enzyme_const object captured by reference beside an active pointer (no shadow built
    through its null one: std::vector<int>::operator[], unique_ptr::operator->, a virtual
    method that never reads its `this` shadow)."""
    shutil.copy(os.path.join(HERE, prog), tmp_path / prog)
    run(["enzyme-c++", *opt, prog, "-o", "prog"], cwd=tmp_path)
    found = list(_pairs(run([str(tmp_path / "prog")], cwd=tmp_path).stdout))
    assert len(found) == pairs
    for line, got, want in found:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), line


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["hvp_repeat.c", "global_shadow.c", "cxx_sret.cpp", "higher_order.c",
                                  "particle.cpp", "nofree_local.c"])
def test_mode_program_valgrind(tmp_path, prog, opt):
    """Repeated higher-order derivative calls (to 4th order: the shadows of blocks an inner
    derivative defers freeing go with them), contexts of global shadows (heap shadow blocks,
    swaps), objects returned through sret with their tangent objects: no invalid access, nothing
    definitely lost."""
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    exe = tmp_path / "prog"
    driver = ["enzyme-c++", "-std=c++17"] if prog.endswith(".cpp") else ["enzyme-cc"]
    run([*driver, opt, "-g", str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
         "--errors-for-leak-kinds=definite", str(exe)], cwd=tmp_path)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_global_shadow_fortran(tmp_path, opt):
    """Shadows of module variables asked for from Fortran through bind(c) interfaces."""
    shutil.copy(os.path.join(HERE, "global_shadow.f90"), tmp_path / "global_shadow.f90")
    run(["enzyme-fc", opt, "global_shadow.f90", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    pairs = list(_pairs(out))
    assert len(pairs) == 3, out
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-6), line


def _fortran_workspace(tmp_path, name, opt, lines):
    """Builds tests/modes/`name`, checks its `lines` pairs to 1e-12 and, where valgrind is
    installed, that nothing is definitely lost (each call's shadow buffer freed by the next)."""
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    run(["enzyme-fc", opt, name, "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    pairs = list(_pairs(out))
    assert len(pairs) == lines, out
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-12), line
    if shutil.which("valgrind"):
        run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
             "--errors-for-leak-kinds=definite", str(tmp_path / "prog")], cwd=tmp_path)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_common_block_integer_counters(tmp_path, opt):
    """A COMMON block of doubles then integer counters (ODEPACK's /DLS001/), one counter
    copied into another: was refused as 4 bytes of a double copied as an integer (every
    derivative through DLSODE and DLSODA stopped there)."""
    _fortran_workspace(tmp_path, "common_block_counters.f90", opt, 4)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_allocatable_allocated_outside(tmp_path, opt):
    """A module allocatable array allocated before the derivative and assigned inside it (a
    workspace reused across calls): the derivative wrote through its shadow's null base (a
    crash, found by a new-user check); three gradients, the last after a reallocation."""
    _fortran_workspace(tmp_path, "module_allocatable_outside.f90", opt, 9)


HOST_CALLBACK = """\
module quad
  use iso_c_binding
  implicit none
contains
  recursive function integrate(f, n) result(s)
    interface
      function f(x) result(y)
        import c_double
        real(c_double), intent(in) :: x
        real(c_double) :: y
      end function
    end interface
    integer, intent(in) :: n
    real(c_double) :: s
    integer :: i
    s = 0
    if (n > 100) then
      s = integrate(f, n / 2)
      return
    end if
    do i = 1, n
      s = s + f((i - 0.5d0) / n) / n
    end do
  end function
  function cost(p) bind(c, name="cost") result(s)
    real(c_double), intent(in) :: p(2)
    real(c_double) :: s
    s = integrate(model, 200)
  contains
    function model(x) result(y)
      real(c_double), intent(in) :: x
      real(c_double) :: y
      y = (p(1) * exp(-p(2) * x))**2
    end function
  end function
end module
program main
  use quad
  implicit none
  interface
    subroutine grad(fn, p, dp) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: fn
      real(c_double) :: p(*), dp(*)
    end subroutine
  end interface
  real(c_double) :: p(2) = [1.5d0, 0.7d0], g(2)
  g = 0
  call grad(c_funloc(cost), p, g)
  print *, g
end program
"""


def test_internal_procedure_callback_is_refused_with_its_workaround(tmp_path):
    """An internal procedure reading its host's variables, passed as an argument, is a
    trampoline: the error says so and what to do (it offered a rule file, __enzyme_inactivefn
    and rebuilding a library, none of which applies)."""
    (tmp_path / "cb.f90").write_text(HOST_CALLBACK)
    r = subprocess.run(["enzyme-fc", "-O2", "cb.f90", "-o", "cb"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "an internal procedure that uses its host's variables, passed as an argument" in \
        r.stderr and "move the procedure into a module" in r.stderr, r.stderr
    assert "__enzyme_inactivefn" not in r.stderr and "no object or static library" not in \
        r.stderr, r.stderr


# a C API over a Fortran solver: the C user data (type(c_ptr)) reaches the user's callback
# through an internal procedure's host, which flang keeps as an integer in the trampoline's
# tuple
C_PTR_HOST_F90 = """\
module solver
  implicit none
contains
  subroutine iterate(fcn, x)
    interface
      subroutine fcn(x, f)
        real(8), intent(in) :: x
        real(8), intent(out) :: f
      end subroutine
    end interface
    real(8), intent(inout) :: x
    real(8) :: f
    integer :: k
    do k = 1, 3
      call fcn(x, f)
      x = x - 0.5d0 * f
    end do
  end subroutine
end module
module capi
  use iso_c_binding
  use solver
  implicit none
contains
  subroutine c_iterate(fcn, x, udata) bind(c, name="c_iterate")
    interface
      subroutine fcn(x, f, udata) bind(c)
        import :: c_double, c_ptr
        real(c_double), intent(in) :: x
        real(c_double), intent(out) :: f
        type(c_ptr), value :: udata
      end subroutine
    end interface
    real(c_double), intent(inout) :: x
    type(c_ptr), value :: udata
    !dir$ noinline
    call iterate(wrap, x)
  contains
    subroutine wrap(x, f)
      real(8), intent(in) :: x
      real(8), intent(out) :: f
      call fcn(x, f, udata)
    end subroutine
  end subroutine
end module
"""
C_PTR_HOST_C = """\
#include <stdio.h>
extern int enzyme_dup;
extern void __enzyme_autodiff(void *, ...);
void c_iterate(void (*)(const double *, double *, void *), double *x, void *udata);
static void resid(const double *x, double *fx, void *ud) { *fx = *x - *(double *)ud; }
double obj(double *p) { double x = 0.0; c_iterate(resid, &x, p); return x; }
int main(void) {
  double p = 2.0, dp = 0.0;
  __enzyme_autodiff((void *)obj, enzyme_dup, &p, &dp);
  printf("%g (0.875)\\n", dp);
  return 0;
}
"""


def test_internal_procedure_host_c_pointer_is_refused(tmp_path):
    """C user data reaching the user's callback through an internal procedure's host (a
    type(c_ptr) kept as an integer in flang's trampoline tuple): the derivative was silently
    0 (found on MINPACK's C API); now the trampoline is refused with its workaround."""
    (tmp_path / "s.f90").write_text(C_PTR_HOST_F90)
    (tmp_path / "d.c").write_text(C_PTR_HOST_C)
    run(["enzyme-fc", "-O2", "-c", "s.f90", "-o", "s.o"], cwd=tmp_path)
    r = subprocess.run(["enzyme-fc", "-O2", "d.c", "s.o", "-o", "d"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "reads host data that carries a derivative" in r.stderr and \
        "call the library's Fortran routine directly" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_marker_calls_in_both_arms_of_an_if(tmp_path, opt):
    """Two marker calls differing in one activity marker, one per arm of an IF: sunk into one
    call with a select for a marker and refused until the markers became `nomerge` (found by a
    new-user check); reverse and forward mode against the analytic derivative."""
    _fortran_workspace(tmp_path, "marker_calls_in_branches.f90", opt, 4)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_function_given_as_c_funptr_by_reference(tmp_path, opt):
    """A helper whose `type(c_funptr), intent(in)` dummy (by reference, an integer address)
    each caller fills with c_funloc of a module function: refused until the marker's function
    was followed through the dummy's memory to the callers' stores (found by a new-user check)."""
    _fortran_workspace(tmp_path, "funptr_by_reference.f90", opt, 3)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_polymorphic_allocatable_component(tmp_path, opt):
    """A local of a type with a `class(base), allocatable` component (and an array of them):
    their destruction stopped the derivative as if a final procedure could run, flang marking the
    type so for any extension (found by a new-user check); checked against the analytic gradient,
    and nothing leaked."""
    _fortran_workspace(tmp_path, "polymorphic_component.f90", opt, 2)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_structure_constructors(tmp_path, opt):
    """`p = pt(x=x(1:2), m=2d0)` and a constructor with an allocatable component: flang's
    AssignTemporary (-O0) and DestroyWithoutFinalization of the temporary (both levels) had no
    derivative (found by a new-user check); the analytic gradient, nothing leaked."""
    _fortran_workspace(tmp_path, "structure_constructor.f90", opt, 1)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_allocatable_records(tmp_path, opt):
    """A module allocatable array of a derived type of reals, allocated before the derivative
    (a crash at -O0, a refusal at -O2; found by a new-user check): three gradients."""
    _fortran_workspace(tmp_path, "module_allocatable_records.f90", opt, 6)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_variable_tree(tmp_path, opt):
    """A module allocatable array of a derived type with allocatable components two levels
    down (CloverLeaf's chunks(:), TeaLeaf's chunk%tiles(:)), allocated before the derivative:
    refused before (a segfault before that); three gradients, the last after a reallocation,
    against the analytic derivative, nothing leaked."""
    _fortran_workspace(tmp_path, "module_variable_tree.f90", opt, 12)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_program_with_its_own_mpi_stubs(tmp_path, opt):
    """A serial Fortran build whose MPI routines are its own stubs (Nekbone's mpi_dummy.f):
    differentiated as its code (an internal error before); the analytic gradient."""
    _fortran_workspace(tmp_path, "own_mpi_stubs.f90", opt, 3)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_logical_flags_cleared_in_the_derivative(tmp_path, opt):
    """A module LOGICAL array cleared by a memset in differentiated code (SNAP's convergence
    flags): the reverse zeroed its null shadow (a crash at -O2); the analytic gradient."""
    _fortran_workspace(tmp_path, "logical_flags_cleared.f90", opt, 4)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_tiles_copy(tmp_path, opt):
    """Copy loops (memcpy after LLVM) over arrays reached through a module variable's
    allocatable array of derived type (CloverLeaf's reset_field): refused as untyped; the
    analytic gradient."""
    _fortran_workspace(tmp_path, "module_tiles_copy.f90", opt, 3)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_halo_copy_typed_by_type_description(tmp_path, opt):
    """A kernel that only copies the fields of a module variable's tiles it is handed
    (CloverLeaf's update_tile_halo): typed by the tile type's description, refused before;
    the analytic gradient."""
    _fortran_workspace(tmp_path, "module_halo_copy.f90", opt, 2)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_copy_in_typed_by_descriptor(tmp_path, opt):
    """A copy into a module allocatable whose readers are in another file (NPB LU's driver):
    typed by the module array's descriptor, refused before; the analytic gradient."""
    for name in ("module_copy_in_data.f90", "module_copy_in.f90"):
        shutil.copy(os.path.join(HERE, name), tmp_path / name)
        run(["enzyme-fc", opt, "-c", name, "-o", name[:-4] + ".o"], cwd=tmp_path)
    run(["enzyme-fc", opt, "module_copy_in.o", "module_copy_in_data.o", "-o", "prog"],
        cwd=tmp_path)
    pairs = list(_pairs(run([str(tmp_path / "prog")], cwd=tmp_path).stdout))
    assert len(pairs) == 6
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), line


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_const_array_copies(tmp_path, opt):
    """enzyme_const data copied in the differentiated procedure (a column section, a whole
    array, sections to a helper): refused at -O0, where the runtime's assignment copies them
    (found by a new-user check); reverse and forward mode against the analytic derivative and
    central differences."""
    shutil.copy(os.path.join(HERE, "const_array_copies.f90"), tmp_path / "c.f90")
    run(["enzyme-fc", opt, "c.f90", "-o", "prog"], cwd=tmp_path)
    pairs = list(_pairs(run([str(tmp_path / "prog")], cwd=tmp_path).stdout))
    assert len(pairs) == 4
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-8), line


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_norm2_in_loops(tmp_path, opt):
    """NORM2 of a moving section and of a rewritten local array in a loop (reverse mode read
    the arrays as they were at the end; found by a new-user check): both modes."""
    _fortran_workspace(tmp_path, "norm2_in_loops.f90", opt, 13)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_pointer_buffer(tmp_path, opt):
    """Module POINTER arrays that only ALLOCATE associates (a module variable, a saved local
    `=> null()`), allocated inside the first derivative or by the primal before it: the
    derivative wrote through a null shadow base (a crash at -O0, a refusal at -O2). Gradients
    in repeated calls."""
    _fortran_workspace(tmp_path, "module_pointer_buffer.f90", opt, 15)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_arrays_read(tmp_path, opt):
    """Module arrays the derivative reads (copied by assignment, deep-copied as a derived type's
    allocatable component, MATMUL's operand at -O0) or writes through a section: crashes and
    refusals before (new-user checks); twice each, the second reusing the shadow buffers."""
    _fortran_workspace(tmp_path, "module_arrays_read.f90", opt, 24)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_polymorphic_component(tmp_path, opt):
    """A type-bound procedure called through a polymorphic allocatable component of a module
    array: the derivative crashed (a new-user check)."""
    _fortran_workspace(tmp_path, "module_polymorphic.f90", opt, 2)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_pointer_associated_is_refused(tmp_path, opt):
    """A module POINTER associated with another array (`p => t`) and written in the derivative:
    its shadow is unknown, and the build stops naming it (it crashed at -O0)."""
    name = "module_pointer_associated.f90"
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    p = subprocess.run(["enzyme-fc", opt, name, "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert "in function 'cubes'" in p.stderr, p.stderr
    assert "Fortran module POINTER array" in p.stderr and \
        "that the program associates with other data" in p.stderr, p.stderr
    assert "make it ALLOCATABLE" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_module_pointer_component(tmp_path, opt):
    """A module variable's POINTER component written in the derivative: associated with other
    data it is refused naming the POINTER (a null shadow crashed at run time); only ALLOCATE'd
    it gets a shadow buffer, as allocatable components do, and the gradient is 3 x**2."""
    name = "module_pointer_component.f90"
    shutil.copy(os.path.join(HERE, name), tmp_path / "m.F90")
    p = subprocess.run(["enzyme-fc", opt, "m.F90", "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert "in function 'cubes'" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "a module variable's POINTER component" in p.stderr, p.stderr
    subprocess.run(["enzyme-fc", opt, "-DOWNED", "m.F90", "-o", "prog"], cwd=tmp_path,
                   check=True)
    out = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert [float(v) for v in out.stdout.split()] == [3.0, 12.0, 27.0], out.stdout


@pytest.mark.parametrize("name, want", [("polymorphic_source.f90", [4.0, 8.0, 12.0]),
                                        ("polymorphic_typed_allocate.f90", [12.0])])
def test_polymorphic_allocate(tmp_path, name, want):
    """ALLOCATE of a CLASS variable, with SOURCE= (flang's ApplyMold) or with a type whose
    component is allocatable (InitDerivedForAllocate), and its DEALLOCATE: the descriptor
    set-up repeated on the shadow descriptor (refused before, with hints that led to another
    refusal)."""
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    run(["enzyme-fc", "-O2", name, "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert floats(out)[:len(want)] == want, out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("form", ["-DTYPED", "-DSOURCE"])
def test_polymorphic_object_with_active_data(tmp_path, opt, form):
    """A material-model object (`class(base_t), allocatable`) allocated with a type, or from a
    structure constructor by SOURCE=, its component holding an active value, its deferred
    binding called: f = 3x * x^2, df/dx = 36 at x = 2 (found by a new-user check)."""
    shutil.copy(os.path.join(HERE, "polymorphic_active.F90"), tmp_path / "p.F90")
    run(["enzyme-fc", opt, form, "p.F90", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert floats(out) == [36.0], out


HIDDEN_LENGTH_MAIN = r"""
#include <stdio.h>
double f(const double *x, int n, const char *mode, ...);
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3, enzyme_const, "cube" LENGTH);
  printf("%g %g %g\n", dx[0], dx[1], dx[2]);
  return 0;
}
"""


def test_fortran_hidden_character_length_named(tmp_path):
    """A C marker call that leaves out flang's hidden CHARACTER length: the count error says
    what the missing parameter may be (it was "parameter 4 of 4 missing" for a routine with 3
    dummies); passed enzyme_const, the gradient is 2 * 2x."""
    shutil.copy(os.path.join(HERE, "hidden_character_length.f90"), tmp_path / "k.f90")
    run(["enzyme-fc", "-O2", "-c", "k.f90", "-o", "k.o"], cwd=tmp_path)
    for length in ("", ", enzyme_const, 4L"):
        (tmp_path / "m.c").write_text(HIDDEN_LENGTH_MAIN.replace("LENGTH", length))
        run(["enzyme-cc", "-O2", "-c", "m.c", "-o", "m.o"], cwd=tmp_path)
        p = subprocess.run(["enzyme-fc", "-O2", "m.o", "k.o", "-o", "prog"], cwd=tmp_path,
                           capture_output=True, text=True)
        if not length:
            assert p.returncode == 1 and "parameter 4 of 4 missing; if it is Fortran, the " \
                "missing ones may be flang's hidden lengths of its CHARACTER dummies" in p.stderr
            continue
        assert p.returncode == 0, p.stderr
        out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
        assert [float(v) for v in out.split()] == [4.0, 8.0, 12.0], out


def test_forall_temporary_hint(tmp_path):
    """A FORALL whose runtime temporary (_FortranAPushDescriptor ...) is refused: the hint is a
    DO loop (or DO CONCURRENT), where it also offered -O2, which does not help there."""
    name = "forall_component_temporary.f90"
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    p = subprocess.run(["enzyme-fc", "-O2", name, "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    hint = p.stderr.split("hint:")[1]
    assert "as a DO loop over the elements (DO CONCURRENT works too)" in hint, p.stderr
    assert "-O2" not in hint, p.stderr


def test_recursive_fortran_in_many_activity_signatures(tmp_path):
    """A recursive Fortran function whose reals come by reference, called in many activity
    signatures: its gradient against central differences (differentiating it took 190 s when
    every fixed-point round recomputed the other signatures' summaries)."""
    name = "recursive_quadrature.f90"
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    run(["enzyme-fc", "-O2", name, "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    pairs = list(_pairs(out))
    assert len(pairs) == 2, out
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9), line


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_final_procedure_stops_with_a_message(tmp_path, opt):
    """A derived type with a final procedure finalized inside the differentiated function: the
    primal runs, the derivative stops naming what it reached and what to do (it said "at ?:0")."""
    name = "final_procedure.f90"
    shutil.copy(os.path.join(HERE, name), tmp_path / name)
    run(["enzyme-fc", opt, name, "-o", "prog"], cwd=tmp_path)
    r = run([str(tmp_path / "prog")], cwd=tmp_path, check=False)
    assert r.returncode != 0
    assert "the derivative reached the finalization of an object of a derived type with final " \
           "procedures" in r.stderr and "hint: keep such objects out" in r.stderr, r.stderr
    assert "?:0" not in r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_set_fixed_point_fortran(tmp_path, opt):
    """__enzyme_set_fixed_point from Fortran (bind(c)) in a DO WHILE loop over module
    variables, carrying locals: against the taped gradient, central differences and forward
    mode (dot product)."""
    shutil.copy(os.path.join(HERE, "set_fixed_point.f90"), tmp_path / "set_fixed_point.f90")
    run(["enzyme-fc", opt, "set_fixed_point.f90", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    pairs = list(_pairs(out))
    assert len(pairs) == 10, out
    tol = {"iters": 0, "taped": 1e-9, "fd": 1e-6, "dot": 1e-9}
    for line, got, want in pairs:
        assert got == pytest.approx(want, rel=tol[line.split()[0]]), line


INTERNAL_PROCEDURE_F90 = """\
program host
  use iso_c_binding
  implicit none
  interface
    function autodiff(f, x) bind(c, name="__enzyme_autodiff") result(d)
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double), value :: x
      real(c_double) :: d
    end function
  end interface
  real(c_double) :: a
  a = 3d0
  print *, autodiff(c_funloc(g), 2d0)
contains
  function g(x) bind(c) result(y)
    real(c_double), value :: x
    real(c_double) :: y
    y = a * x * x
  end function
end program
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_internal_procedure_with_host_variables_refused(tmp_path, opt):
    """An internal procedure using its host's variables reaches the marker through flang's
    trampoline: the error says so and what to do (it said "a pointer chosen at run time" and
    told a Fortran user to pass `(void *)f`)."""
    (tmp_path / "host.f90").write_text(INTERNAL_PROCEDURE_F90)
    r = subprocess.run(["enzyme-fc", opt, "-g", "host.f90", "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "internal procedure that uses its host's variables" in r.stderr, r.stderr
    assert "host.f90:14" in r.stderr and "into a module" in r.stderr, r.stderr


# a derivative that keeps an inactive call to a function with debug info (bump): inlined into
# main with -g, that call needs a location (the marker's)
INACTIVE_CALL_G = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
int counter;
__attribute__((noinline)) void bump(int k) { counter += k; }
__attribute__((noinline)) double f(double x) { bump(1); return x * x; }
int main(void) {
  double d = __enzyme_autodiff((void *)f, 3.0);
  printf("got %f %d | 6.0 1\\n", d, counter);
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["inactive_call.c", "fixed_point_global_state.c",
                                  "set_fixed_point_registers.c"])
def test_debug_info_derivative_calls(tmp_path, prog, opt):
    """With -g, derivatives inlined into the marker's function that call primal functions with
    debug info (an inactive call, a fixed point's loop and step) build and give the same
    results."""
    src = tmp_path / prog
    if prog == "inactive_call.c":
        src.write_text(INACTIVE_CALL_G)
    else:
        shutil.copy(os.path.join(HERE, "..", "ad_programs", prog), src)
    run(["enzyme-cc", opt, "-g", str(src), "-lm", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert "FAILED" not in out, out
    for line, got, want in _pairs(out):
        assert got == pytest.approx(want, rel=1e-12), line


CONTEXT_WIDTH_AT_RUN_TIME = """\
extern void *__enzyme_context(int);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_context;
double g = 2.0;
double f(double x) { return g * x; }
int main(int argc, char **argv) {
  (void)argv;
  void *ctx = __enzyme_context(argc + 1);   /* width 2, not known at link time */
  return __enzyme_fwddiff((void *)f, enzyme_context, ctx, 3.0, 1.0) != 2.0;
}
"""


def test_context_width_checked_at_run_time(tmp_path):
    """A context whose width the link step cannot see is checked by the derivative call: a
    width-1 derivative given a width-2 context aborts with a message, never a wrong value."""
    (tmp_path / "w.c").write_text(CONTEXT_WIDTH_AT_RUN_TIME)
    run(["enzyme-cc", "-O2", "w.c", "-o", "prog"], cwd=tmp_path)
    r = run([str(tmp_path / "prog")], cwd=tmp_path, check=False)
    assert r.returncode != 0
    # (no derivative of width 2 exists in the program: making the context already refuses it)
    assert "enzyme-cc: __enzyme_context / __enzyme_shadow: no derivative of this width" in r.stderr
    src = CONTEXT_WIDTH_AT_RUN_TIME.replace("int main(int argc, char **argv) {", """\
double f2(double x) { return g * x * x; }
typedef struct { double a, b; } P2;
extern P2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
extern int enzyme_width;
int main(int argc, char **argv) {
  if (argc > 5) __enzyme_fwddiff2((void *)f2, enzyme_width, 2, 1.0, 1.0, 1.0);""")
    (tmp_path / "w2.c").write_text(src)
    run(["enzyme-cc", "-O2", "w2.c", "-o", "prog2"], cwd=tmp_path)
    r = run([str(tmp_path / "prog2")], cwd=tmp_path, check=False)
    assert r.returncode != 0
    assert "enzyme-cc: a derivative was called with enzyme_context and a context of another width" \
        in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_nofree_tape_spent(tmp_path, opt):
    """A second reverse of a tape that an enzyme_nofree reverse used, for a function whose
    reverse frees its own heap blocks: a clear error, never a read of freed memory."""
    run(["enzyme-cc", opt, os.path.join(HERE, "nofree_heap.c"), "-o", "p"], cwd=tmp_path)
    r = run(["./p", "again"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "second reverse ran" not in r.stdout
    assert "enzyme-cc: error: __enzyme_reverse on a tape that an enzyme_nofree reverse already " \
        "used" in r.stderr


_OUTER_OF_VECTOR_GRADIENT = """\
double __enzyme_autodiff(void *, ...);
double outer(double *u, double *d0, double *d1, double c, double *s0, double *s1) {
  D2 r = g(u, d0, d1, c, s0, s1);
  return r.c[0] + r.c[1];
}
int main2(void) {
  double u[2] = {0.5, 0.7}, du[2] = {0}, d0[2] = {0}, d1[2] = {0}, s0[2] = {1, 0}, s1[2] = {0, 1};
  double e0[2] = {0}, e1[2] = {0}, c = 0.3, a = u[0] * c, b = u[1] * c;
  double dc = __enzyme_autodiff((void *)outer, enzyme_dup, u, du, enzyme_dup, d0, e0, enzyme_dup,
                                d1, e1, c, enzyme_const, s0, enzyme_const, s1);
  /* outer = u0 u1 (cos a + cos b), the sum of the lanes' d out_k / dc */
  printf("rr %.12f %.12f %.12f | %.12f %.12f %.12f\\n", du[0], du[1], dc,
         u[1] * (cos(a) + cos(b)) - u[0] * u[1] * sin(a) * c,
         u[0] * (cos(a) + cos(b)) - u[0] * u[1] * sin(b) * c,
         -u[0] * u[1] * (sin(a) * u[0] + sin(b) * u[1]));
  return 0;
}
int main(void) {
  if (main2()) return 1;"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_reverse_over_reverse_vector(tmp_path, opt):
    """Reverse mode over reverse vector mode: the lanes' reverse sweeps run side by side in one
    run of the fused reverse (ad/api/lane_fusion.py), which the outer reverse differentiates like any
    code: the gradient of the sum of both lanes' adjoints of c against its analytic value."""
    src = tmp_path / "rr.c"
    src.write_text(open(os.path.join(HERE, "hvp_vector_reverse.c")).read().replace(
        "int main(void) {", _OUTER_OF_VECTOR_GRADIENT))
    run(["enzyme-cc", opt, str(src), "-lm", "-o", str(tmp_path / "rr")], cwd=tmp_path)
    out = run([str(tmp_path / "rr")], cwd=tmp_path).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("rr "))
    got, want = line[3:].split("|")
    for g, w in zip(got.split(), want.split()):
        assert abs(float(g) - float(w)) <= 1e-10 * (1 + abs(float(w))), line


def test_reverse_over_reverse_vector_in_turn_refused(tmp_path):
    """Where the lanes' reverse sweeps run one after another (lane fusion turned off with
    ENZYME_CC_LANE_FUSION=0, as it is where it is refused: a checkpointed loop's reverse), each
    lane's sweep restarts from the same tape top, which the outer reverse sweep's shadow tape
    cannot follow: an error naming it."""
    src = tmp_path / "rr.c"
    src.write_text(open(os.path.join(HERE, "hvp_vector_reverse.c")).read().replace(
        "int main(void) {", _OUTER_OF_VECTOR_GRADIENT))
    r = subprocess.run(["enzyme-cc", "-O2", str(src), "-lm", "-o", str(tmp_path / "rr")],
                       capture_output=True, text=True,
                       env=dict(os.environ, ENZYME_CC_LANE_FUSION="0", ENZYME_CC_CACHE="0"))
    assert r.returncode != 0
    assert "enzyme-cc: error:" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "reverse mode over reverse vector mode" in r.stderr and "hint:" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_libm_out_intrinsics(tmp_path, opt):
    """The corpus program of modf/sincos (tests/ad_programs/libm_out_params.c) built with
    -fno-math-errno: clang emits llvm.sincos (and llvm.modf) for them, which return the pair as
    a struct; every check of the program passes on that form too."""
    src = os.path.join(os.path.dirname(HERE), "ad_programs", "libm_out_params.c")
    exe = tmp_path / "prog"
    env = dict(os.environ, ENZYME_CC_DUMP_DIR=str(tmp_path / "dump"))
    run(["enzyme-cc", opt, "-fno-math-errno", src, "-lm", "-o", str(exe)], cwd=tmp_path, env=env)
    ir = (tmp_path / "dump" / "before-ad.ll").read_text()
    for intr in ("llvm.sincos.f64", "llvm.sincos.f32", "llvm.modf.f64", "llvm.modf.f32"):
        assert f"@{intr}(" in ir, intr
    r = run([str(exe)], cwd=tmp_path, check=False)
    checks = [line for line in r.stdout.splitlines() if line.startswith("CHECK ")]
    assert r.returncode == 0 and len(checks) > 50 and "FAILED" not in r.stdout, r.stdout


@pytest.mark.parametrize("prog", ["reverse_vector_fused.c", "reverse_vector_local.c"])
def test_reverse_vector_lanes_in_turn(tmp_path, prog):
    """The reverse sweep once per lane (ENZYME_CC_LANE_FUSION=0, the way taken where lane fusion
    is refused) on the corpus programs that fuse by default: every check of the program passes
    that way too (the locals' shadows have room for every lane; here lane 0's is reused)."""
    src = os.path.join(os.path.dirname(HERE), "ad_programs", prog)
    env = dict(os.environ, ENZYME_CC_LANE_FUSION="0", ENZYME_CC_CACHE="0",
               ENZYME_CC_DUMP_DIR=str(tmp_path / "dump"))
    run(["enzyme-cc", "-O2", src, "-lm", "-o", str(tmp_path / "p")], cwd=tmp_path, env=env)
    ir = (tmp_path / "dump" / "after-ad.ll").read_text()
    assert "__enzyme_cc_tape_settop" in ir and ".w3" not in ir    # lanes in turn, nothing fused
    out = run([str(tmp_path / "p")], cwd=tmp_path).stdout      # (exits non-zero on a failure)
    assert out.count("CHECK ") >= 20 and "FAILED" not in out, out


MEMBER_POINTER = r"""
#include <enzyme/enzyme>
#include <vector>
struct Model {
  double a;
  double energy(const std::vector<double> &x) const { return a * x[0] * x[0]; }
};
int main() {
  Model m{1.5};
  std::vector<double> x = {1, 2}, dx = {0, 0};
  enzyme::autodiff<enzyme::Reverse>(&Model::energy, enzyme::Const<const Model *>(&m),
                                    enzyme::Duplicated<const std::vector<double> &>(x, dx));
  return 0;
}
"""


def test_cxx_header_member_function_pointer_is_refused_clearly(tmp_path):
    """enzyme::autodiff given a pointer to a member function: the header's static_assert says
    what to differentiate instead (it failed deep inside the header)."""
    (tmp_path / "p.cpp").write_text(MEMBER_POINTER)
    r = run(["enzyme-c++", "-std=c++17", "-c", "p.cpp"], cwd=tmp_path, check=False)
    assert r.returncode != 0
    assert "a pointer to a member function is not a function: differentiate a lambda" in r.stderr
    assert r.stderr.count("error:") == 1, r.stderr


CHARCAT = """module m
  use iso_c_binding
  implicit none
contains
  function f(x, n) bind(c, name="f") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    character(len=:), allocatable :: s
    s = 'abc'
    s = s // 'de'
    e = len(s) * x(1)**2
  end function
end module
program p
  use m
  interface
    real(c_double) function grad(fn, x, dx, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fn
      real(c_double) :: x(*), dx(*)
      integer(c_int), value :: n
    end function
  end interface
  real(c_double) :: x(2) = [1d0, 2d0], dx(2) = 0, r
  r = grad(c_funloc(f), x, dx, 2)
  print *, dx
end program
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_fortran_deferred_length_character_in_the_derivative(tmp_path, level):
    """A deferred-length character assigned and concatenated in the differentiated procedure:
    our assignment's entry for intrinsic types (the character's type code is a constant at the
    call) takes it to flang's runtime, which writes only the target (it was refused as an
    untyped copy, through the derived-type path's deep copy). e = len(s) * x(1)**2, len 5."""
    (tmp_path / "c.f90").write_text(CHARCAT)
    run(["enzyme-fc", level, "c.f90", "-o", "prog"], cwd=tmp_path)
    got = [float(v) for v in run(["./prog"], cwd=tmp_path).stdout.split()]
    assert got == [10.0, 0.0]


def test_fortran_untyped_copy_hint_is_about_fortran():
    """The hint for an untyped copy in flang's code names Fortran's causes and what to do, not
    C's (double*, -O1)."""
    from enzyme_cc.ad.structure.diagnostics import untyped_copy_hint
    hint = untyped_copy_hint("_QMmPf")
    assert "deferred-length character" in hint and "-O1" not in hint and "double" not in hint

VALUE_CHAR_F90 = """module k
  use iso_c_binding
contains
  function scaled(x, mode) bind(c, name="scaled") result(y)
    real(c_double), value :: x
    character(kind=c_char), value :: mode
    real(c_double) :: y
    if (mode == 'D') then
      y = 2d0 * x * x
    else
      y = x * x
    end if
  end function
end module
"""
VALUE_CHAR_MAIN = r"""#include <stdio.h>
double scaled(double x, char mode);
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_const;
double wrap(double x, char mode) { return scaled(x, mode) + x; }
int main(void) {
  printf("%g %g %g %g\n", __enzyme_autodiff((void *)wrap, 3.0, 'D'),
         __enzyme_autodiff((void *)wrap, 3.0, 'S'),
         __enzyme_fwddiff((void *)wrap, 3.0, 1.0, enzyme_const, 'D'),
         __enzyme_autodiff((void *)scaled, 3.0, 'D'));
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_calls_fortran_with_a_character_by_value(tmp_path, opt):
    """flang makes a bind(c) `character(kind=c_char), value` dummy a `[1 x i8]` parameter, the
    C caller passes an i8: the derivative's call of the callee's derivative did not verify (an
    internal error); a marker call giving the flag directly passes it promoted to int (refused:
    "cannot pass a i32 argument as [1 x i8]"). d/dx of 2x^2 + x, x^2 + x and 2x^2 at 3."""
    (tmp_path / "k.f90").write_text(VALUE_CHAR_F90)
    (tmp_path / "m.c").write_text(VALUE_CHAR_MAIN)
    run(["enzyme-fc", opt, "-c", "k.f90", "-o", "k.o"], cwd=tmp_path)
    run(["enzyme-cc", opt, "-c", "m.c", "-o", "m.o"], cwd=tmp_path)
    run(["enzyme-fc", opt, "m.o", "k.o", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert [float(v) for v in out.split()] == [13.0, 7.0, 13.0, 12.0], out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_character_copied_into_a_local(tmp_path, opt):
    """A deferred-length CHARACTER copied into a fixed-length local padded with blanks: the
    local is character data (a blank fill of a byte array), not a copy of unknown type."""
    shutil.copy(os.path.join(HERE, "character_copy.f90"), tmp_path / "c.f90")
    run(["enzyme-fc", opt, "c.f90", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert floats(out) == [10.0, 6.0], out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_struct_by_value_changed_by_the_callee(tmp_path, opt):
    """An RK4 step taking its 48-byte state by value (`byval`) and updating it in place, called
    twice on the user's memory: the derivatives changed the caller's object (the user's input
    overwritten by the gradient call, the gradient wrong). Each such argument is now a copy of
    its own before AD (lto/byval_copies.py)."""
    shutil.copy(os.path.join(HERE, "byval_rk4_reverse.cpp"), tmp_path / "p.cpp")
    run(["enzyme-c++", opt, "p.cpp", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 7 and "FAILED" not in out, out


@pytest.mark.parametrize("opt", ["-Os", "-O2"])
def test_map_with_string_keys_at_os(tmp_path, opt):
    """An integer that sizes a deallocation (a string's capacity + 1, read from a map node
    beside its double) is a count, not a float's bits."""
    shutil.copy(os.path.join(HERE, "map_string_key.cpp"), tmp_path / "m.cpp")
    run(["enzyme-c++", opt, "m.cpp", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert floats(out) == [0.9, 1.2], out
