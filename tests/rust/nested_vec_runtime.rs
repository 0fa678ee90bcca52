// `vec![vec![0.0; ni]; no]` with sizes known at run time only, in cargo's dev profile (256
// codegen units keep `vec::from_elem` a call): the row moved into it is a buffer whose address
// rustc keeps as an integer (beside the dangling address of an empty Vec), put into the
// element's header; its escape through the integer was not followed, so it had no shadow and
// the reverse sweep added into a null one (a crash). With main also calling the function
// directly, `from_elem`'s move of the row into the last element (a memcpy of the header from
// its argument) was not reported to the caller, and the row still had no shadow (a crash).
// The primal and reverse mode against the analytic gradient (2 x).
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[no_mangle]
pub extern "C" fn f(p: *const f64, ni: usize, no: usize) -> f64 {
    let p = unsafe { std::slice::from_raw_parts(p, ni * no) };
    let mut w = vec![vec![0.0; ni]; no];
    for r in 0..no { for c in 0..ni { w[r][c] = p[r * ni + c]; } }
    w.iter().map(|row| row.iter().map(|v| v * v).sum::<f64>()).sum()
}

fn main() {
    let (ni, no) = (2, 3);
    let x: Vec<f64> = (0..ni * no).map(|i| i as f64).collect();
    let mut dx = vec![0.0; ni * no];
    let y = f(x.as_ptr(), ni, no);
    println!("CHECK f {} 55{}", y, if y == 55.0 { "" } else { "  <-- FAILED" });
    unsafe {
        __enzyme_autodiff(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, ni, enzyme_const, no);
    }
    for i in 0..ni * no {
        let ok = dx[i] == 2.0 * x[i];
        println!("CHECK dx[{}] {} {}{}", i, dx[i], 2.0 * x[i], if ok { "" } else { "  <-- FAILED" });
    }
}
