// Boxed closures capturing active values (`Vec<Box<dyn Fn(f64) -> f64>>`), differentiated
// through a marker whose function is chosen at run time: the loop picks one of two functions
// by name, and rustc -O merges the two marker calls into one on a `select` of the functions.
// The pre-AD scope saw no function on that marker call, left the differentiated function
// unoptimized and the standard library's allocator native, so the closure boxes came from an
// allocator shim whose result got no shadow: refused ("an active value is stored to memory
// that has no shadow") until the scope follows the functions the marker's holder names.
// Reverse and forward mode against central differences.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...);
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}
fn gauss(c: f64, w: f64) -> impl Fn(f64) -> f64 {
    move |x| (-(x - c) * (x - c) / (2.0 * w * w)).exp()
}
#[no_mangle]
pub extern "C" fn boxed(p: *const f64, n: usize) -> f64 {
    let ps = unsafe { std::slice::from_raw_parts(p, n) };
    let (a, b, c) = (ps[0], ps[1], ps[2]);
    let fs: Vec<Box<dyn Fn(f64) -> f64>> = vec![
        Box::new(move |x| a * x * x),
        Box::new(move |x| (b * x).sin()),
        Box::new(gauss(c, 0.7)),
        Box::new(move |x| a * b * x.exp() / (1.0 + c * c)),
    ];
    fs.iter().enumerate().map(|(k, f)| (k as f64 + 1.0) * f(0.3 + 0.1 * k as f64)).sum()
}
#[no_mangle]
pub extern "C" fn plain(p: *const f64, n: usize) -> f64 {
    let ps = unsafe { std::slice::from_raw_parts(p, n) };
    ps[0] * ps[1].cos() + ps[2] * ps[2]
}
fn main() {
    let p = [0.8, 1.7, 0.45];
    let mut bad = 0;
    for (name, f) in [("boxed", boxed as extern "C" fn(*const f64, usize) -> f64), ("plain", plain)] {
        let mut dp = [0.0; 3];
        unsafe {
            if name == "boxed" {
                __enzyme_autodiff(boxed as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr(), enzyme_const, 3usize);
            } else {
                __enzyme_autodiff(plain as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr(), enzyme_const, 3usize);
            }
        }
        for i in 0..3 {
            let (mut hi, mut lo) = (p, p);
            hi[i] += 1e-6;
            lo[i] -= 1e-6;
            let fd = (f(hi.as_ptr(), 3) - f(lo.as_ptr(), 3)) / 2e-6;
            let mut e = [0.0; 3];
            e[i] = 1.0;
            let t = unsafe {
                if name == "boxed" {
                    __enzyme_fwddiff(boxed as *const c_void, enzyme_dup, p.as_ptr(), e.as_ptr(), enzyme_const, 3usize)
                } else {
                    __enzyme_fwddiff(plain as *const c_void, enzyme_dup, p.as_ptr(), e.as_ptr(), enzyme_const, 3usize)
                }
            };
            for (what, got) in [("rev", dp[i]), ("fwd", t)] {
                let ok = (fd - got).abs() <= 1e-6 * (1.0 + fd.abs());
                println!("CHECK {}_{}[{}] {:.9} {:.9}{}", name, what, i, got, fd, if ok { "" } else { "  <-- FAILED" });
                bad += !ok as i32;
            }
        }
    }
    std::process::exit(bad);
}
