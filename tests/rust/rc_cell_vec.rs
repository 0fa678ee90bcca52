// An `Rc<Cell<f64>>` holding an active value, beside a `Vec` that is pushed to: the Rc's block
// is {strong count, weak count, f64}, and its counts, stepped in place when the Rc is dropped,
// looked like the f64's bits ('integer arithmetic on data that holds a float'; found by a
// new-user check). Reverse mode against the analytic gradient.
use std::cell::Cell;
use std::ffi::c_void;
use std::rc::Rc;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[no_mangle]
pub extern "C" fn f(p: *const f64, n: usize) -> f64 {
    let p = unsafe { std::slice::from_raw_parts(p, n) };
    let best = Rc::new(Cell::new(0.0f64));
    let mut sq = Vec::new();
    for &a in p {
        best.set(best.get().max(a));
        sq.push(a * a);
    }
    sq.iter().sum::<f64>() + best.get()
}

fn main() {
    let p = [0.9f64, 1.3, -0.4];
    let mut dp = [0.0f64; 3];
    unsafe {
        __enzyme_autodiff(f as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr(),
                          enzyme_const, p.len());
    }
    // 2 p_i, and 1 more for the largest
    let want = [1.8f64, 2.6 + 1.0, -0.8];
    for i in 0..3 {
        let ok = (dp[i] - want[i]).abs() <= 1e-12;
        println!("CHECK dp[{}] {} {}{}", i, dp[i], want[i], if ok { "" } else { "  <-- FAILED" });
    }
}
