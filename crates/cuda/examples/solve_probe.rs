use ndarray::Array2;
use ndgpu_core::Backend;
fn med(mut ts: Vec<f64>) -> f64 {
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ts[ts.len() / 2] * 1e3
}
fn main() {
    let b: Box<dyn Backend> = Box::new(ndgpu_cuda::CudaBackend::new(0).unwrap());
    let n = 4096;
    let m = Array2::from_shape_fn((n, n), |(i, j)| {
        if i == j {
            130.0f32
        } else {
            (((i * 7 + j * 13) % 17) as f32 - 8.0) / 8.0
        }
    });
    let rhs = Array2::from_shape_fn((n, n), |(i, j)| (((i * 3 + j * 5) % 11) as f32 - 5.0) / 5.0);
    let dm = b.upload(m.view()).unwrap();
    let g = b.gram_dev(&dm).unwrap();
    let l = b.cholesky_dev(&g).unwrap();
    let db = b.upload(rhs.view()).unwrap();
    for skip in [
        "",
        "leaf",
        "gemm",
        "leaf,gemm",
        "potrf",
        "trsm",
        "syrk",
        "potrf,trsm,syrk",
    ] {
        std::env::set_var("NDGPU_PROBE_SKIP", skip);
        let mut x = b.copy(&db).unwrap();
        b.cholesky_solve_in_place_dev(&l, &mut x).unwrap();
        let mut ts = vec![];
        let mut cs = vec![];
        for _ in 0..7 {
            let mut x = b.copy(&db).unwrap();
            b.synchronize().unwrap();
            ts.push(
                b.time(&mut || b.cholesky_solve_in_place_dev(&l, &mut x))
                    .unwrap(),
            );
            let g2 = b.copy(&g).unwrap();
            b.synchronize().unwrap();
            let mut g2 = Some(g2);
            cs.push(
                b.time(&mut || {
                    b.cholesky_in_place_dev(g2.take().unwrap())
                        .map(|_| ())
                        .or(Ok(()))
                })
                .unwrap(),
            );
        }
        println!(
            "skip [{skip}]: solve {:.3} ms, cholesky {:.3} ms",
            med(ts),
            med(cs)
        );
    }
}
