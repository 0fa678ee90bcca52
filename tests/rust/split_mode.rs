// Split mode from Rust: __enzyme_augmentfwd declared returning a #[repr(C)] {tape, primal}
// struct (rustc returns it as {i64, double}: the tape pointer classified as an integer; the
// link stopped with an internal error before), and the tape held as a usize.
// f(x) = sum x_i^2 sin x_i: df/dx_i = 2 x_i sin x_i + x_i^2 cos x_i.
use std::ffi::c_void;
#[repr(C)]
struct Aug { tape: *mut c_void, primal: f64 }
#[repr(C)]
struct AugU { tape: usize, primal: f64 }
extern "C" {
    fn __enzyme_augmentfwd(f: *const c_void, ...) -> Aug;
    #[link_name = "__enzyme_augmentfwd"]
    fn augmentfwd_usize(f: *const c_void, ...) -> AugU;
    fn __enzyme_reverse(f: *const c_void, ...);
    static enzyme_dup: i32; static enzyme_const: i32;
}
#[no_mangle]
pub extern "C" fn f(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    xs.iter().map(|a| a * a * a.sin()).sum()
}

fn check(name: &str, got: f64, want: f64) {
    let ok = (got - want).abs() <= 1e-12 * (1.0 + want.abs());
    println!("CHECK {} {} {}{}", name, got, want, if ok { "" } else { "  <-- FAILED" });
}

fn main() {
    let x = [0.5f64, 1.0, 2.0];
    let (mut dx, mut du) = ([0.0f64; 3], [0.0f64; 3]);
    let want: f64 = x.iter().map(|a| a * a * a.sin()).sum();
    unsafe {
        let a = __enzyme_augmentfwd(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                                    enzyme_const, x.len());
        check("primal", a.primal, want);
        __enzyme_reverse(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                         enzyme_const, x.len(), 2.0f64, a.tape);
        let b = augmentfwd_usize(f as *const c_void, enzyme_dup, x.as_ptr(), du.as_mut_ptr(),
                                 enzyme_const, x.len());
        check("primal_usize", b.primal, want);
        __enzyme_reverse(f as *const c_void, enzyme_dup, x.as_ptr(), du.as_mut_ptr(),
                         enzyme_const, x.len(), 1.0f64, b.tape);
    }
    for i in 0..3 {
        let g = 2.0 * x[i] * x[i].sin() + x[i] * x[i] * x[i].cos();
        check(&format!("dx{}", i), dx[i], 2.0 * g);
        check(&format!("du{}", i), du[i], g);
    }
}
