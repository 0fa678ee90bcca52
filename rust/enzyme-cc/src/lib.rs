//! Derivatives of Rust functions computed by enzyme-cc at link time.
//!
//! enzyme-cc differentiates the LLVM bitcode that rustc hands its link step. Build with the
//! `.cargo/config.toml` that `enzyme-cc --print-cargo-config` prints (the linker and
//! `rustflags = ["-Clinker-plugin-lto"]`); nothing else is needed, no build script.
//!
//! The function to differentiate is an `extern "C"` function taking floats, integers and raw
//! pointers. The macros lay out the marker call from activity annotations:
//!
//! - `Dup(x, dx)`: a slice `x` (`&[f64]`, `&mut [f64]`, ...) passed as a pointer, and its shadow
//!   `dx`: in reverse mode the gradient is added into `dx`; in forward mode `dx` holds the
//!   tangent direction (and receives the tangent where the function writes through `x`);
//! - `Const(v)`: an argument without a derivative (a size, a parameter held fixed): an
//!   integer of 32 or 64 bits, an `f64`, a raw pointer, or a `&Vec`, slice or array (passed as
//!   its pointer); an `f32` as `Const(x as f64)` (enzyme-cc narrows it to the parameter's type,
//!   as for C's promoted variadic arguments);
//! - `Active(v)`: an `f64` or `f32` by value (reverse mode returns its adjoint, as `f64`);
//! - `Dual(v, dv)`: an `f64` or `f32` by value and its tangent (forward mode).
//!
//! A function of `f32` is differentiated in `f32`; the adjoints and tangents the macros return
//! are widened to `f64` (cast them back with `as f32`).
//!
//! ```no_run
//! use enzyme_cc::{autodiff, fwddiff};
//!
//! #[no_mangle]
//! pub extern "C" fn energy(x: *const f64, n: usize) -> f64 {
//!     let xs = unsafe { std::slice::from_raw_parts(x, n) };
//!     xs.iter().map(|a| a.sin() * a).sum()
//! }
//!
//! let x = [0.3, -0.2, 0.5];
//! let mut dx = [0.0; 3];
//! autodiff!(energy; Dup(&x, &mut dx), Const(3usize));      // dx += d energy / dx
//! let v = [1.0, 0.0, 0.0];
//! let t = fwddiff!(energy; Dup(&x, &v), Const(3usize));     // <d energy / dx, v>
//! # let _ = t;
//! ```
//!
//! `fwddiff_void!(f; ...)` is forward mode of a function that returns nothing: the tangents of
//! what it writes through a `Dup` pointer go into that pointer's shadow.
//!
//! `autodiff!` returns the adjoint of the `Active` argument when there is exactly one (`f64`),
//! a tuple of the adjoints in argument order with two to four (`(f64, f64)`, ...), else `()`; `fwddiff!` returns the tangent of the function's `f64` result. The calls are
//! `unsafe` underneath: the pointers must be valid for what the function reads and writes, as
//! for the function itself.
//!
//! Vector forward mode, `fwddiff_n!(f, N; ...)` with N from 2 to 8, propagates N directions in
//! one call (Enzyme's `enzyme_width`): each `Dup` takes N shadows `[&v1, ..., &vN]`, each `Dual`
//! N tangents `[d1, ..., dN]`, and it returns the N tangents of the result as `[f64; N]`; for
//! example three columns of a Jacobian-vector block:
//!
//! ```no_run
//! # use enzyme_cc::fwddiff_n;
//! # #[no_mangle] pub extern "C" fn energy(x: *const f64, n: usize) -> f64 { 0.0 }
//! let x = [0.3, -0.2, 0.5];
//! let (e0, e1, e2) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
//! let g: [f64; 3] = fwddiff_n!(energy, 3; Dup(&x, [&e0, &e1, &e2]), Const(3usize));
//! ```

#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use core::ffi::c_void;

// (the markers are one symbol each, declared once per result type)
#[allow(clashing_extern_declarations)]
extern "C" {
    #[doc(hidden)]
    pub static enzyme_dup: i32;
    #[doc(hidden)]
    pub static enzyme_const: i32;
    #[doc(hidden)]
    #[link_name = "__enzyme_autodiff"]
    pub fn __enzyme_autodiff_f64(f: *const c_void, ...) -> f64;
    #[doc(hidden)]
    #[link_name = "__enzyme_autodiff"]
    pub fn __enzyme_autodiff_void(f: *const c_void, ...);
    #[doc(hidden)]
    #[link_name = "__enzyme_fwddiff"]
    pub fn __enzyme_fwddiff_f64(f: *const c_void, ...) -> f64;
    #[doc(hidden)]
    #[link_name = "__enzyme_fwddiff"]
    pub fn __enzyme_fwddiff_void(f: *const c_void, ...);
    #[doc(hidden)]
    pub static enzyme_width: i32;
}

/// The N tangents of a vector forward-mode call (C's `struct { double d[N]; }`).
#[doc(hidden)]
#[repr(C)]
pub struct Lanes<const N: usize>(pub [f64; N]);

// a marker declared once per number of lanes it returns
macro_rules! lane_markers {
    ($marker:literal: $($name:ident $n:literal),*) => {
        #[allow(clashing_extern_declarations)]
        extern "C" {
            $(
                #[doc(hidden)]
                #[link_name = $marker]
                pub fn $name(f: *const c_void, ...) -> Lanes<$n>;
            )*
        }
    };
}
lane_markers!("__enzyme_fwddiff": __enzyme_fwddiff_w2 2, __enzyme_fwddiff_w3 3,
              __enzyme_fwddiff_w4 4, __enzyme_fwddiff_w5 5, __enzyme_fwddiff_w6 6,
              __enzyme_fwddiff_w7 7, __enzyme_fwddiff_w8 8);
// reverse mode with several `Active` arguments: their adjoints in argument order, as C's
// `struct { double d[N]; }` (Enzyme returns a struct of the adjoints)
lane_markers!("__enzyme_autodiff": __enzyme_autodiff_a2 2, __enzyme_autodiff_a3 3,
              __enzyme_autodiff_a4 4);

/// Pointer of a slice, array or vector argument (`&[f64]`, `&mut [f64; N]`, `&Vec<f64>`).
#[doc(hidden)]
pub trait AsPtr {
    fn ptr(self) -> *const c_void;
}
impl<T> AsPtr for &[T] {
    fn ptr(self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
// (a shadow the derivative writes: its pointer from the mutable borrow, so that the compiler
// knows the memory may change through it)
impl<T> AsPtr for &mut [T] {
    fn ptr(self) -> *const c_void {
        self.as_mut_ptr() as *const c_void
    }
}
impl<T, const N: usize> AsPtr for &[T; N] {
    fn ptr(self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
impl<T, const N: usize> AsPtr for &mut [T; N] {
    fn ptr(self) -> *const c_void {
        self.as_mut_ptr() as *const c_void
    }
}
impl<T> AsPtr for &Vec<T> {
    fn ptr(self) -> *const c_void {
        self.as_ptr() as *const c_void
    }
}
impl<T> AsPtr for &mut Vec<T> {
    fn ptr(self) -> *const c_void {
        self.as_mut_ptr() as *const c_void
    }
}
impl<T> AsPtr for *const T {
    fn ptr(self) -> *const c_void {
        self as *const c_void
    }
}
impl<T> AsPtr for *mut T {
    fn ptr(self) -> *const c_void {
        self as *const c_void
    }
}

/// A `Const` argument as the variadic marker call takes it: vectors, slices and arrays as
/// their pointer, numbers and raw pointers as they are.
#[doc(hidden)]
pub trait ConstArg {
    type Passed;
    fn passed(self) -> Self::Passed;
}
/// Numbers a variadic call takes as they are: one blanket impl, so that a literal whose type
/// nothing has fixed yet still falls back to `i32` or `f64`, as a plain variadic argument does
/// (an `f32` is not among them: C would promote it, Rust asks for `x as f64`).
#[doc(hidden)]
pub trait AsIs {}
impl AsIs for i32 {}
impl AsIs for i64 {}
impl AsIs for isize {}
impl AsIs for u32 {}
impl AsIs for u64 {}
impl AsIs for usize {}
impl AsIs for f64 {}
impl<T: AsIs> ConstArg for T {
    type Passed = T;
    fn passed(self) -> T {
        self
    }
}
impl<T> ConstArg for *const T {
    type Passed = *const T;
    fn passed(self) -> *const T {
        self
    }
}
impl<T> ConstArg for *mut T {
    type Passed = *mut T;
    fn passed(self) -> *mut T {
        self
    }
}
impl<T> ConstArg for &[T] {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}
impl<T> ConstArg for &mut [T] {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}
impl<T> ConstArg for &Vec<T> {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}
impl<T> ConstArg for &mut Vec<T> {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}
impl<T, const N: usize> ConstArg for &[T; N] {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}
impl<T, const N: usize> ConstArg for &mut [T; N] {
    type Passed = *const c_void;
    fn passed(self) -> *const c_void {
        self.ptr()
    }
}

/// A `Const` argument, promoted for the variadic call (`$crate::konst(v)`).
#[doc(hidden)]
pub fn konst<A: ConstArg>(v: A) -> A::Passed {
    v.passed()
}

/// The pointer of a `Dup` argument (`$crate::ptr(&x)`).
#[doc(hidden)]
pub fn ptr<P: AsPtr>(p: P) -> *const c_void {
    p.ptr()
}

/// Reverse mode: `autodiff!(f; Dup(&x, &mut dx), Const(n), Active(a))`. Adds the gradient into
/// the shadows of `Dup` arguments; returns the adjoint of the one `Active` argument (`f64`) if
/// there is one, the tuple of the adjoints of two to four `Active` arguments (in argument
/// order), else `()`.
#[macro_export]
macro_rules! autodiff {
    ($f:expr; $($args:tt)*) => {
        $crate::__marker!(@scan [] [] $f; $($args)*)
    };
}

/// Forward mode: `fwddiff!(f; Dup(&x, &v), Const(n), Dual(a, da))`. Returns the tangent of
/// the function's `f64` result along the given directions.
#[macro_export]
macro_rules! fwddiff {
    ($f:expr; $($args:tt)*) => {
        $crate::__marker!(@fwd [] $f; $($args)*)
    };
}

/// Forward mode of a function that returns nothing (it writes its results through pointers):
/// `fwddiff_void!(f; Dup(&x, &v), Dup(&mut y, &mut dy), Const(n))` writes the tangents of
/// what `f` writes through `y` into `dy`.
#[macro_export]
macro_rules! fwddiff_void {
    ($f:expr; $($args:tt)*) => {
        $crate::__marker!(@fwdv [] $f; $($args)*)
    };
}

/// Vector forward mode: `fwddiff_n!(f, N; Dup(&x, [&v1, ..., &vN]), Const(n),
/// Dual(a, [d1, ..., dN]))` with N a literal from 2 to 8. Returns the N tangents of the
/// function's `f64` result, `[f64; N]`.
#[macro_export]
macro_rules! fwddiff_n {
    ($f:expr, $n:tt; $($args:tt)*) => {
        $crate::__marker!(@vfwd $n [$crate::enzyme_width, $n,] $f; $($args)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __marker {
    // reverse mode: [laid-out arguments] [one token per Active argument]
    (@scan [$($acc:tt)*] [$($act:tt)*] $f:expr;) => {
        $crate::__marker!(@call [$($acc)*] [$($act)*] $f)
    };
    (@scan [$($acc:tt)*] [$($act:tt)*] $f:expr; Dup($x:expr, $dx:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@scan [$($acc)* $crate::enzyme_dup, $crate::ptr($x), $crate::ptr($dx),]
                          [$($act)*] $f; $($($rest)*)?)
    };
    (@scan [$($acc:tt)*] [$($act:tt)*] $f:expr; Const($v:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@scan [$($acc)* $crate::enzyme_const, $crate::konst($v),] [$($act)*] $f;
                          $($($rest)*)?)
    };
    (@scan [$($acc:tt)*] [$($act:tt)*] $f:expr; Active($v:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@scan [$($acc)* ($v as f64),] [$($act)* a] $f; $($($rest)*)?)
    };
    (@call [$($acc:tt)*] [] $f:expr) => {
        unsafe { $crate::__enzyme_autodiff_void($f as *const core::ffi::c_void, $($acc)*) }
    };
    (@call [$($acc:tt)*] [a] $f:expr) => {
        unsafe { $crate::__enzyme_autodiff_f64($f as *const core::ffi::c_void, $($acc)*) }
    };
    (@call [$($acc:tt)*] [a a] $f:expr) => {{
        let d = unsafe { $crate::__enzyme_autodiff_a2($f as *const core::ffi::c_void, $($acc)*) };
        (d.0[0], d.0[1])
    }};
    (@call [$($acc:tt)*] [a a a] $f:expr) => {{
        let d = unsafe { $crate::__enzyme_autodiff_a3($f as *const core::ffi::c_void, $($acc)*) };
        (d.0[0], d.0[1], d.0[2])
    }};
    (@call [$($acc:tt)*] [a a a a] $f:expr) => {{
        let d = unsafe { $crate::__enzyme_autodiff_a4($f as *const core::ffi::c_void, $($acc)*) };
        (d.0[0], d.0[1], d.0[2], d.0[3])
    }};
    // forward mode
    (@fwd [$($acc:tt)*] $f:expr;) => {
        unsafe { $crate::__enzyme_fwddiff_f64($f as *const core::ffi::c_void, $($acc)*) }
    };
    (@fwd [$($acc:tt)*] $f:expr; Dup($x:expr, $dx:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwd [$($acc)* $crate::enzyme_dup, $crate::ptr($x), $crate::ptr($dx),]
                          $f; $($($rest)*)?)
    };
    (@fwd [$($acc:tt)*] $f:expr; Const($v:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwd [$($acc)* $crate::enzyme_const, $crate::konst($v),] $f; $($($rest)*)?)
    };
    (@fwd [$($acc:tt)*] $f:expr; Dual($v:expr, $dv:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwd [$($acc)* ($v as f64), ($dv as f64),] $f; $($($rest)*)?)
    };
    // forward mode of a function returning nothing: the same arguments, a void marker
    (@fwdv [$($acc:tt)*] $f:expr;) => {
        unsafe { $crate::__enzyme_fwddiff_void($f as *const core::ffi::c_void, $($acc)*) }
    };
    (@fwdv [$($acc:tt)*] $f:expr; Dup($x:expr, $dx:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwdv [$($acc)* $crate::enzyme_dup, $crate::ptr($x), $crate::ptr($dx),]
                          $f; $($($rest)*)?)
    };
    (@fwdv [$($acc:tt)*] $f:expr; Const($v:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwdv [$($acc)* $crate::enzyme_const, $crate::konst($v),] $f;
                          $($($rest)*)?)
    };
    (@fwdv [$($acc:tt)*] $f:expr; Dual($v:expr, $dv:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@fwdv [$($acc)* ($v as f64), ($dv as f64),] $f; $($($rest)*)?)
    };
    // vector forward mode (width $n): the value, then one shadow or tangent per lane
    (@vfwd $n:tt [$($acc:tt)*] $f:expr;) => {
        $crate::__marker!(@vcall $n [$($acc)*] $f)
    };
    (@vfwd $n:tt [$($acc:tt)*] $f:expr; Dup($x:expr, [$($dx:expr),+ $(,)?]) $(, $($rest:tt)*)?)
    => {
        $crate::__marker!(@vfwd $n [$($acc)* $crate::enzyme_dup, $crate::ptr($x),
                                    $($crate::ptr($dx),)+] $f; $($($rest)*)?)
    };
    (@vfwd $n:tt [$($acc:tt)*] $f:expr; Const($v:expr) $(, $($rest:tt)*)?) => {
        $crate::__marker!(@vfwd $n [$($acc)* $crate::enzyme_const, $crate::konst($v),] $f; $($($rest)*)?)
    };
    (@vfwd $n:tt [$($acc:tt)*] $f:expr; Dual($v:expr, [$($dv:expr),+ $(,)?])
     $(, $($rest:tt)*)?) => {
        $crate::__marker!(@vfwd $n [$($acc)* ($v as f64), $(($dv as f64),)+] $f;
                          $($($rest)*)?)
    };
    (@vcall 2 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w2($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 3 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w3($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 4 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w4($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 5 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w5($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 6 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w6($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 7 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w7($f as *const core::ffi::c_void, $($acc)*).0 }
    };
    (@vcall 8 [$($acc:tt)*] $f:expr) => {
        unsafe { $crate::__enzyme_fwddiff_w8($f as *const core::ffi::c_void, $($acc)*).0 }
    };
}
