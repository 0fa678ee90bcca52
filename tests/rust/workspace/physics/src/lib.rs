//! A library crate whose function the binary crate differentiates: a chain of springs built as
//! a Vec of structs from an iterator (rustc keeps the Vec's address as an integer, with a
//! dangling constant for the empty case), freed before the function returns.
pub struct Spring {
    pub k: f64,
    pub rest: f64,
}

impl Spring {
    pub fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * (x - self.rest).powi(2)
    }
}

/// The chain's energy; its gradient in a doc-test (`cargo test` links it through rustdoc, which
/// takes the `rustdocflags` of enzyme-cc's cargo config):
///
/// ```
/// use std::ffi::c_void;
/// extern "C" {
///     fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
///     static enzyme_dup: i32;
///     static enzyme_const: i32;
/// }
/// let x = [0.0f64, 1.0];
/// let mut dx = [0.0f64; 2];
/// unsafe {
///     __enzyme_autodiff(physics::chain_energy as *const c_void, enzyme_dup, x.as_ptr(),
///                       dx.as_mut_ptr(), enzyme_const, 2usize);
/// }
/// // 0.5 (x1 - x0 - 0.5)^2 + sin x0 + sin x1
/// assert!((dx[0] - 0.5).abs() < 1e-12 && (dx[1] - (0.5 + 1f64.cos())).abs() < 1e-12);
/// ```
#[no_mangle]
pub extern "C" fn chain_energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let springs: Vec<Spring> = (0..n).map(|i| Spring { k: 1.0 + i as f64, rest: 0.5 }).collect();
    xs.windows(2).zip(springs.iter()).map(|(w, s)| s.energy(w[1] - w[0])).sum::<f64>()
        + xs.iter().map(|v| v.sin()).sum::<f64>()
}

#[cfg(test)]
mod tests {
    //! `cargo test`: the gradient inside the test harness's binary, against central differences.
    use super::chain_energy;
    use std::ffi::c_void;
    extern "C" {
        fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
        static enzyme_dup: i32;
        static enzyme_const: i32;
    }

    #[test]
    fn gradient_matches_central_differences() {
        let x = [0.2, 0.9, 1.3, 2.4, 2.6];
        let mut dx = [0.0; 5];
        unsafe {
            __enzyme_autodiff(chain_energy as *const c_void, enzyme_dup, x.as_ptr(),
                              dx.as_mut_ptr(), enzyme_const, x.len());
        }
        for i in 0..x.len() {
            let (mut a, mut b) = (x, x);
            a[i] += 1e-6;
            b[i] -= 1e-6;
            let fd = (chain_energy(a.as_ptr(), 5) - chain_energy(b.as_ptr(), 5)) / 2e-6;
            assert!((fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs()), "dx[{}] = {} but fd {}", i,
                    dx[i], fd);
        }
    }
}
