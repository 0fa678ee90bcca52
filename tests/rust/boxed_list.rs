// A recursive enum whose variant holds a float beside a Box, built and walked by functions kept
// as calls: rustc returns `Cons(f64, Box<List>)` as a `{ ptr, double }` pair in registers.
use std::ffi::c_void;
extern "C" { fn __enzyme_autodiff(f: *const c_void, ...) -> f64; static enzyme_dup: i32; static enzyme_const: i32; }
enum List { Cons(f64, Box<List>), Nil }
#[inline(never)]
fn build(xs: &[f64]) -> List {
    match xs.split_first() {
        None => List::Nil,
        Some((&x, rest)) => List::Cons(x * x, Box::new(build(rest))),
    }
}
#[inline(never)]
fn head_and_rest(l: List) -> (f64, Box<List>) {
    match l { List::Cons(v, rest) => (v, rest), List::Nil => (0.0, Box::new(List::Nil)) }
}
#[inline(never)]
fn weigh(l: &List, w: f64) -> f64 {
    match l { List::Cons(v, rest) => v * w + weigh(rest, w * 0.5), List::Nil => 0.0 }
}
#[no_mangle]
pub extern "C" fn f(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let (h, rest) = head_and_rest(build(xs));
    h * xs[1] + weigh(&rest, xs[0])
}
fn main() {
    let x = [0.5, -1.0, 2.0, 1.5];
    let n = x.len();
    let mut dx = vec![0.0f64; n];
    unsafe { __enzyme_autodiff(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, n); }
    let mut bad = 0;
    for i in 0..n {
        let (mut p, mut m) = (x.to_vec(), x.to_vec()); p[i] += 1e-6; m[i] -= 1e-6;
        let fd = (f(p.as_ptr(), n) - f(m.as_ptr(), n)) / 2e-6;
        let ok = (dx[i] - fd).abs() <= 1e-6 * (1.0 + fd.abs());
        if !ok { bad += 1; }
        println!("CHECK f[{}] {} {}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
    }
    println!("bad {}", bad);
}
