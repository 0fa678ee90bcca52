// A trait method returning `&'static str` called through `Box<dyn Trait>` beside the numeric
// method: by signature alone the call may reach every `fn(&self) -> &str` whose address is
// taken, the standard library's (`Error::description`, a panic payload's `as_str`) among them,
// which return pointers into `self`: the targets differed in whether they return a shadow
// pointer, and the call was refused. The vtable slot the call reads narrows them to the
// trait's implementations. Reverse mode against the analytic gradient.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

trait Potential {
    fn name(&self) -> &'static str;
    fn energy(&self, x: f64) -> f64;
}
struct Harmonic {
    k: f64,
}
struct Quartic {
    c: f64,
}
impl Potential for Harmonic {
    fn name(&self) -> &'static str {
        "harmonic"
    }
    fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }
}
impl Potential for Quartic {
    fn name(&self) -> &'static str {
        "quartic"
    }
    fn energy(&self, x: f64) -> f64 {
        self.c * x * x * x * x
    }
}

#[no_mangle]
pub extern "C" fn total(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let ps: Vec<Box<dyn Potential>> = vec![Box::new(Harmonic { k: 2.0 }), Box::new(Quartic { c: 0.5 })];
    let mut s = 0.0;
    for (i, v) in xs.iter().enumerate() {
        let p = &ps[i % 2];
        // the long name counts once, the short one twice
        s += if p.name().len() > 7 { p.energy(*v) } else { 2.0 * p.energy(*v) };
    }
    s
}

fn main() {
    let x: Vec<f64> = vec![0.5, 1.0, 1.5];
    let mut dx = vec![0.0f64; 3];
    unsafe {
        __enzyme_autodiff(total as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, 3usize);
    }
    // harmonic (k = 2): 2 x; quartic (c = 0.5), counted twice: 2 * 4 * 0.5 x^3
    let want: [f64; 3] = [2.0 * x[0], 4.0 * x[1].powi(3), 2.0 * x[2]];
    for i in 0..3 {
        let ok = (dx[i] - want[i]).abs() <= 1e-12;
        println!("CHECK dx[{}] {} {}{}", i, dx[i], want[i], if ok { "" } else { "  <-- FAILED" });
    }
}
