// Threads in the differentiated function (std::thread::scope, two spawned sums): refused, with
// a message that says so. The first refusal is in the thread handle's bookkeeping
// (std::thread::current), whose own message names no thread; the note names the function that
// starts threads and what to use instead.
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[no_mangle]
pub extern "C" fn par_energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let (a, b) = xs.split_at(n / 2);
    let (sa, sb) = std::thread::scope(|s| {
        let ha = s.spawn(|| a.iter().map(|v| v.sin() * v).sum::<f64>());
        let hb = s.spawn(|| b.iter().map(|v| v.cos() * v * v).sum::<f64>());
        (ha.join().unwrap(), hb.join().unwrap())
    });
    sa + sb
}

fn main() {
    let x = [0.3, 1.2, -0.7, 2.0];
    let mut dx = [0.0; 4];
    unsafe {
        __enzyme_autodiff(par_energy as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, 4usize);
    }
    println!("{:?}", dx);
}
