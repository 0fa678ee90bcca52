// A Rust function calling a C function that has no bitcode: the link-time error names both
// by their Rust path (the symbol after it), not only by the mangled symbol.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, x: f64) -> f64;
    fn opaque_scale(x: f64) -> f64;
}
mod physics {
    #[inline(never)]
    pub fn energy(x: f64) -> f64 {
        unsafe { super::opaque_scale(x) * x }
    }
}
extern "C" fn entry(x: f64) -> f64 {
    physics::energy(x)
}
fn main() {
    let d = unsafe { __enzyme_autodiff(entry as *const c_void, 2.0) };
    println!("{}", d);
}
