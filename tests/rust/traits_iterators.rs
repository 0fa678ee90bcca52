// Ordinary numerical Rust through the link step: slices, Vec, iterators and closures (map, zip,
// fold, sum), a trait with dynamic dispatch (Box<dyn Shape>: its vtables are packed-struct
// constants `<{ [24 x i8], ptr }>`), a generic function, a `&dyn Fn` closure, f64 methods
// (powi, exp, mul_add, ln, max). Reverse mode against central differences; prints CHECK lines.
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

trait Shape {
    fn area(&self, s: f64) -> f64;
}
struct Square {
    k: f64,
}
struct Circle {
    r: f64,
}
impl Shape for Square {
    fn area(&self, s: f64) -> f64 {
        self.k * s * s
    }
}
impl Shape for Circle {
    fn area(&self, s: f64) -> f64 {
        3.14159 * (s * self.r).powi(2) + s.exp()
    }
}

fn total<T: Into<f64> + Copy>(xs: &[T]) -> f64 {
    xs.iter().map(|&v| v.into()).sum()
}

#[no_mangle]
pub extern "C" fn energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let shapes: Vec<Box<dyn Shape>> = vec![Box::new(Square { k: 2.0 }), Box::new(Circle { r: 0.5 })];
    let mut s = 0.0;
    for (i, &v) in xs.iter().enumerate() {
        s += shapes[i % 2].area(v);
    }
    let f: &dyn Fn(f64) -> f64 = &|a| a.mul_add(a, 1.0).ln();
    let sq: Vec<f64> = xs.iter().map(|&a| a * a + 1.0).collect();
    let dot: f64 = sq.iter().zip(xs.iter()).map(|(a, b)| a * b.sin()).sum();
    s + total(xs) + xs.iter().map(|&a| f(a)).sum::<f64>() + dot
        + xs.iter().cloned().fold(f64::MIN, f64::max)
}

fn main() {
    let x = vec![0.3, -0.2, 0.5, 0.9];
    let mut dx = vec![0.0; 4];
    unsafe {
        __enzyme_autodiff(energy as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, 4usize);
    }
    let mut failed = 0;
    for i in 0..4 {
        let h = 1e-6;
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[i] += h;
        xm[i] -= h;
        let fd = (energy(xp.as_ptr(), 4) - energy(xm.as_ptr(), 4)) / (2.0 * h);
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
