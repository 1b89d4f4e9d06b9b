//! Memory, products, transpose and Cholesky over the ranks.

use ndarray::{ArrayView2, ArrayViewMut2, Axis};
use ndgpu_core::backend;
use ndgpu_core::{
    check, CholeskyFactor, Device, FactorizeKernels, Gemm, Indices, MatMulKernels, Matrix, Memory,
    Place, Result, Trans, Transpose, TransposeKernels,
};
use ndgpu_cuda_runtime::driver;

use crate::layout::{split, Layout};
use crate::{MultiBackend, MultiElement, Rank};

impl MultiBackend {
    /// Runs `f` for every rank with its item, each rank on a thread of its own (work
    /// that returns a value to the host would otherwise keep the next rank waiting);
    /// results in rank order, the first error if any.
    pub(crate) fn each_with<X: Send, R: Send>(
        &self,
        items: Vec<X>,
        f: impl Fn(usize, &Rank, X) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        if self.ranks.len() == 1 {
            let x = items.into_iter().next().expect("one item per rank");
            return Ok(vec![f(0, &self.ranks[0], x)?]);
        }
        std::thread::scope(|s| {
            let f = &f;
            let handles: Vec<_> = self
                .ranks
                .iter()
                .zip(items)
                .enumerate()
                .map(|(r, (rank, x))| s.spawn(move || f(r, rank, x)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    /// [`MultiBackend::each_with`] without items.
    pub(crate) fn each<R: Send>(
        &self,
        f: impl Fn(usize, &Rank) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        self.each_with(vec![(); self.ranks.len()], |r, rank, ()| f(r, rank))
    }
}

/// Splits `out` into the row blocks of `offsets`.
fn row_blocks<'a, T>(
    mut out: ArrayViewMut2<'a, T>,
    offsets: &[usize],
) -> Vec<ArrayViewMut2<'a, T>> {
    let mut blocks = Vec::with_capacity(offsets.len() - 1);
    for w in offsets.windows(2).rev() {
        let (rest, block) = out.split_at(Axis(0), w[0]);
        blocks.push(block);
        out = rest;
    }
    blocks.reverse();
    blocks
}

impl Device for MultiBackend {
    fn name(&self) -> &'static str {
        self.name
    }

    fn place(&self) -> Place {
        self.place
    }

    fn unlabeled(&self, n: usize) -> Result<Indices> {
        let offsets = split(n, self.ranks.len());
        let parts = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, rank)| rank.backend.unlabeled(Self::rows_of(&offsets, r).len()))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap_indices(offsets, parts))
    }

    fn download_indices(&self, i: &Indices) -> Result<ndarray::Array1<usize>> {
        let s = self.spread_indices("download", "the indices", i)?;
        let mut all = Vec::with_capacity(i.len());
        for (rank, part) in self.ranks.iter().zip(&s.parts) {
            all.extend(rank.backend.download_indices(part)?);
        }
        Ok(ndarray::Array1::from(all))
    }

    fn synchronize(&self) -> Result<()> {
        for r in &self.ranks {
            r.backend.synchronize()?;
        }
        Ok(())
    }

    /// Between two events of the first rank's stream, which waits for the other ranks'
    /// streams at the end (and they for it at the start).
    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.synchronize()?;
        let streams: Vec<_> = self.ranks.iter().map(|r| r.gpu.stream().clone()).collect();
        let join = |a: usize, b: usize| {
            streams[a]
                .join(&streams[b])
                .map_err(|e| driver("ordering the ranks' streams", e))
        };
        self.ranks[0].backend.time(&mut || {
            for q in 1..streams.len() {
                join(q, 0)?;
            }
            f()?;
            for q in 1..streams.len() {
                join(0, q)?;
            }
            Ok(())
        })
    }
}

impl<T: MultiElement> Memory<T> for MultiBackend {
    fn upload_into(&self, a: ArrayView2<T>, m: &mut Matrix<T>) -> Result<()> {
        check::transfer_shape("upload", a.dim(), m.dim())?;
        let s = self.spread_mut("upload", "the destination", m)?;
        let layout = s.layout.clone();
        let parts: Vec<&mut Matrix<T>> = s.parts.iter_mut().collect();
        self.each_with(parts, |r, rank, part| {
            let rows = match &layout {
                Layout::Rows(o) => Self::rows_of(o, r),
                Layout::Replicated => 0..a.nrows(),
            };
            rank.ops::<T>()
                .upload_into(a.slice(ndarray::s![rows, ..]), part)
        })
        .map(drop)
    }

    fn download_into(&self, m: &Matrix<T>, out: ArrayViewMut2<T>) -> Result<()> {
        check::transfer_shape("download", out.dim(), m.dim())?;
        let s = self.spread("download", "the matrix", m)?;
        match &s.layout {
            Layout::Replicated => self.ranks[0].ops::<T>().download_into(&s.parts[0], out),
            Layout::Rows(o) => self
                .each_with(row_blocks(out, o), |r, rank, block| {
                    rank.ops::<T>().download_into(&s.parts[r], block)
                })
                .map(drop),
        }
    }

    fn alloc(&self, rows: usize, cols: usize) -> Result<Matrix<T>> {
        self.alloc_rows("alloc", rows, cols)
    }

    fn zeros(&self, rows: usize, cols: usize) -> Result<Matrix<T>> {
        self.rows_matrix((rows, cols), |ops, n| ops.zeros(n, cols))
    }

    fn copy_into(&self, src: &Matrix<T>, dst: &mut Matrix<T>) -> Result<()> {
        check::copy_dims("copy", src.dim(), dst.dim())?;
        let layout = self.spread("copy", "the destination", dst)?.layout.clone();
        let from = match &layout {
            Layout::Rows(o) => self.rows_on("copy", src, o)?,
            Layout::Replicated => self.everywhere("copy", src)?,
        };
        let d = self.spread_mut("copy", "the destination", dst)?;
        for ((rank, f), part) in self.ranks.iter().zip(&from).zip(&mut d.parts) {
            rank.ops::<T>().copy_into(f.get(), part)?;
        }
        Ok(())
    }
}

impl<T: MultiElement> MatMulKernels<T> for MultiBackend {
    /// Rank r computes C's rows of its share with its rows of op(A) and the whole of
    /// op(B) (gathered). A replicated C gets the whole product on every rank.
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let m = c.rows();
        let layout = self.spread("gemm", "C", c)?.layout.clone();
        let bs = self.everywhere("gemm", b)?;
        let at;
        let (a_parts, ta) = match (&layout, g.ta) {
            (Layout::Replicated, _) => (self.everywhere("gemm", a)?, g.ta),
            (Layout::Rows(o), Trans::No) => (self.rows_on("gemm", a, o)?, Trans::No),
            (Layout::Rows(o), Trans::Yes) => {
                at = self.transpose_dev(a)?;
                (self.rows_on("gemm", &at, o)?, Trans::No)
            }
        };
        debug_assert!(
            matches!(&layout, Layout::Replicated)
                || layout == Layout::Rows(split(m, self.ranks.len()))
        );
        let cs = self.spread_mut("gemm", "C", c)?;
        for (r, part) in cs.parts.iter_mut().enumerate() {
            if part.is_empty() {
                continue;
            }
            self.ranks[r].ops::<T>().gemm_dev(
                Gemm { ta, ..g },
                a_parts[r].get(),
                bs[r].get(),
                part,
            )?;
        }
        Ok(())
    }

    /// Row blocks: rank r computes its rows of M·Mᵀ, M_r·Mᵀ, against the whole of M
    /// (gathered), its diagonal block with its own gram. The result is made exactly
    /// symmetric as one device's is: each block above the diagonal is replaced by the
    /// transpose of its mirror below, sent over by the rank that holds it.
    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let n = m.rows();
        let ranks = self.ranks.len();
        let offsets = split(n, ranks);
        let rows = self.rows_on("gram", m, &offsets)?;
        if ranks == 1 {
            let g = self.ranks[0].ops::<T>().gram_dev(rows[0].get())?;
            return Ok(self.wrap((n, n), Layout::Rows(offsets), vec![g]));
        }
        let mut out = self.alloc_rows::<T>("gram", n, n)?;
        let whole = self.everywhere("gram", m)?;
        let g = Gemm {
            tb: Trans::Yes,
            ..Gemm::new()
        };
        let os = self.spread_mut("gram", "the result", &mut out)?;
        for (r, part) in os.parts.iter_mut().enumerate() {
            let mine = Self::rows_of(&offsets, r);
            if mine.is_empty() {
                continue;
            }
            let ops = self.ranks[r].ops::<T>();
            ops.gemm_dev(g, rows[r].get(), whole[r].get(), part)?;
            let diag = ops.gram_dev(rows[r].get())?;
            self.ranks[r].gpu.copy_region(
                (self.dm(r, &diag)?, (0, 0)),
                (self.dm_mut(r, part)?, (0, mine.start)),
                (mine.len(), mine.len()),
            )?;
        }
        // Block (s, r) below the diagonal, transposed, becomes block (r, s) above it.
        for s in 1..ranks {
            let below = Self::rows_of(&offsets, s);
            for r in 0..s {
                let above = Self::rows_of(&offsets, r);
                if below.is_empty() || above.is_empty() {
                    continue;
                }
                let mut block = self.alloc_on::<T>(s, "gram", below.len(), above.len())?;
                self.ranks[s].gpu.copy_region(
                    (self.dm(s, &os.parts[s])?, (0, above.start)),
                    (self.dm_mut(s, &mut block)?, (0, 0)),
                    (below.len(), above.len()),
                )?;
                let t = self.ranks[s].ops::<T>().transpose_dev(&block)?;
                let mut moved = self.alloc_on::<T>(r, "gram", above.len(), below.len())?;
                {
                    let len = above.len() * below.len();
                    let src = self.dm(s, &t)?.data.slice(0..len);
                    let dst = self.dm_mut(r, &mut moved)?;
                    self.copy_view((s, &src), (r, &mut dst.data.slice_mut(0..len)))?;
                }
                self.ranks[r].gpu.copy_region(
                    (self.dm(r, &moved)?, (0, 0)),
                    (self.dm_mut(r, &mut os.parts[r])?, (0, below.start)),
                    (above.len(), below.len()),
                )?;
            }
        }
        Ok(out)
    }
}

impl<T: MultiElement> TransposeKernels<T> for MultiBackend {
    /// Every rank transposes the whole (gathered) and keeps its rows of the result.
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let (rows, cols) = a.dim();
        let offsets = split(cols, self.ranks.len());
        let whole = self.everywhere("transpose", a)?;
        let mut parts = Vec::with_capacity(self.ranks.len());
        for (r, rank) in self.ranks.iter().enumerate() {
            let t = rank.ops::<T>().transpose_dev(whole[r].get())?;
            let mine = Self::rows_of(&offsets, r);
            if mine.len() == cols {
                parts.push(t);
                continue;
            }
            let mut part = self.alloc_on::<T>(r, "transpose", mine.len(), rows)?;
            rank.gpu.copy_region(
                (self.dm(r, &t)?, (mine.start, 0)),
                (self.dm_mut(r, &mut part)?, (0, 0)),
                (mine.len(), rows),
            )?;
            parts.push(part);
        }
        Ok(self.wrap((cols, rows), Layout::Rows(offsets), parts))
    }
}

impl<T: MultiElement> FactorizeKernels<T> for MultiBackend {
    /// On the first rank: the matrix is gathered there, factored, and the factor
    /// written back over `a` in `a`'s layout.
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let whole = self.owned_on("cholesky", 0, &a)?;
        let l = self.ranks[0]
            .ops::<T>()
            .cholesky_in_place_dev(whole)?
            .into_l();
        self.scatter(0, &l, &mut a)?;
        Ok(backend::cholesky_factor(a))
    }

    /// On the first rank, as the factorization.
    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let lead = self.ranks[0].ops::<T>();
        let l0 = backend::cholesky_factor(self.owned_on("cholesky_solve", 0, l.l())?);
        let mut x = self.owned_on("cholesky_solve", 0, b)?;
        lead.cholesky_solve_in_place_dev(&l0, &mut x)?;
        self.scatter(0, &x, b)
    }
}
