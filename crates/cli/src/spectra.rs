//! The `run` operations of the spectra, generic over the element type: `eigh`, `svd`
//! and `pca`.

use std::path::Path;

use ndgpu::{Ops, Pca};

use crate::args::PcaArgs;
use crate::error::Result;
use crate::linalg::files_in;
use crate::npy::read_matrix;
use crate::ops::{timed, Ctx, Float};

/// `w, v` with `A = v·diag(w)·vᵀ`, into w.npy and v.npy; A given by its lower
/// triangle, or by its upper one when `upper` (that of Aᵀ, read as the lower).
pub fn eigh<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, a: &Path, upper: bool) -> Result<()> {
    let Ctx { b, rep, out: dir } = cx;
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    rep.field("uplo", if upper { "U" } else { "L" });
    let triangle = if upper { a.t() } else { a.view() };
    let [w_path, v_path] = files_in(dir, ["w.npy", "v.npy"])?;
    let (w, v) = timed(rep, || b.eigh(triangle))?;
    rep.deliver("w", &w, w_path.as_deref(), "--out-dir")?;
    rep.deliver("v", &v, v_path.as_deref(), "--out-dir")
}

/// `U, S, Vt` with `A = U·diag(S)·Vt`, into U.npy, S.npy and Vt.npy.
pub fn svd<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, (a, full): (&Path, bool)) -> Result<()> {
    let Ctx { b, rep, out: dir } = cx;
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    rep.field("full_matrices", full);
    let [u_path, s_path, vt_path] = files_in(dir, ["U.npy", "S.npy", "Vt.npy"])?;
    let (u, s, vt) = timed(rep, || b.svd(a.view(), full))?;
    rep.deliver("U", &u, u_path.as_deref(), "--out-dir")?;
    rep.deliver("S", &s, s_path.as_deref(), "--out-dir")?;
    rep.deliver("Vt", &vt, vt_path.as_deref(), "--out-dir")
}

/// A PCA fit (and the transformed data with --transform), one .npy file per attribute.
pub fn pca<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, args: &PcaArgs) -> Result<()> {
    let Ctx { b, rep, out: dir } = cx;
    let x = read_matrix::<T>(&args.x, false)?;
    rep.shape("x", x.shape());
    let names = [
        "components.npy",
        "explained_variance.npy",
        "explained_variance_ratio.npy",
        "singular_values.npy",
        "mean.npy",
        "transformed.npy",
    ];
    let [c, ev, ratio, sv, mean, t] = files_in(dir, names)?;
    let config = Pca {
        n_components: args.n_components,
    };
    let fit = timed(rep, || config.fit(b, x.view()))?;
    rep.field("solver", format!("{:?}", fit.solver));
    rep.deliver("components", &fit.components, c.as_deref(), "--out-dir")?;
    let ev_name = "explained_variance";
    rep.deliver(ev_name, &fit.explained_variance, ev.as_deref(), "--out-dir")?;
    let ratios = &fit.explained_variance_ratio;
    rep.deliver(
        "explained_variance_ratio",
        ratios,
        ratio.as_deref(),
        "--out-dir",
    )?;
    rep.deliver(
        "singular_values",
        &fit.singular_values,
        sv.as_deref(),
        "--out-dir",
    )?;
    rep.deliver("mean", &fit.mean, mean.as_deref(), "--out-dir")?;
    if args.transform {
        let y = fit.transform(b, x.view())?;
        rep.deliver("transformed", &y, t.as_deref(), "--out-dir")?;
    }
    Ok(())
}
