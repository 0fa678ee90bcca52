// Reverse mode with three and four active f64 arguments returns their derivatives in a
// #[repr(C)] struct, which rustc returns through an sret pointer typed as bytes ([24 x i8]):
// the link stopped with "cannot pass a double argument as i8" (two are returned in registers).
// f = x y sin z: (y sin z, x sin z, x y cos z); g = x y + z w: (y, x, w, z).
use std::ffi::c_void;
#[repr(C)]
struct Three { a: f64, b: f64, c: f64 }
#[repr(C)]
struct Four { a: f64, b: f64, c: f64, d: f64 }
extern "C" {
    #[link_name = "__enzyme_autodiff"]
    fn autodiff3(f: *const c_void, ...) -> Three;
    #[link_name = "__enzyme_autodiff"]
    fn autodiff4(f: *const c_void, ...) -> Four;
}
#[no_mangle]
pub extern "C" fn f(x: f64, y: f64, z: f64) -> f64 { x * y * z.sin() }
#[no_mangle]
pub extern "C" fn g(x: f64, y: f64, z: f64, w: f64) -> f64 { x * y + z * w }

fn check(name: &str, got: f64, want: f64) {
    let ok = (got - want).abs() <= 1e-12 * (1.0 + want.abs());
    println!("CHECK {} {} {}{}", name, got, want, if ok { "" } else { "  <-- FAILED" });
}

fn main() {
    let r = unsafe { autodiff3(f as *const c_void, 1.0f64, 2.0f64, 0.5f64) };
    check("f_x", r.a, 2.0 * 0.5f64.sin());
    check("f_y", r.b, 0.5f64.sin());
    check("f_z", r.c, 2.0 * 0.5f64.cos());
    let s = unsafe { autodiff4(g as *const c_void, 1.0f64, 2.0f64, 3.0f64, 4.0f64) };
    check("g_x", s.a, 2.0);
    check("g_y", s.b, 1.0);
    check("g_z", s.c, 4.0);
    check("g_w", s.d, 3.0);
}
