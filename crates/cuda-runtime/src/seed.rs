//! k-means seeding on the device (`kernels/seed.cu`), both GPU backends' `seed_dev`:
//! the picks of [`ndgpu_core::init_centroids`] to the bit, with the data read on the
//! device. k-means++ queues all its draws without reading anything back; k-means‖ reads
//! one total and one flag per point each round; both read back one status at the end.

use crate::push_args;
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use ndarray::Array2;
use ndgpu_core::init::{
    candidate_weights, first_centre, nonfinite_total, random_rows, recluster, SampleTree,
    TREE_LEAVES,
};
use ndgpu_core::kmeans::sample_weights;
use ndgpu_core::{check, Error, Init, KMeansConfig, Result, SplitMix64};

use crate::kernels::KernelFile;
use crate::kmeans::cfg;
use crate::launch::go;
use crate::launch::{blocks, dim_i32};
use crate::{driver, CudaElement, DeviceMatrix, Gpu};

/// The starting centroids of `config` for `x` (N×D): given, random, k-means++ or
/// k-means‖, equal to the host reference's ([`ndgpu_core::init::init_centroids_weighted`]).
/// `w`: the sample weights (N×1) of `config.sample_weight` in `T`, resident; the host
/// converts the config's too (the same values), for the first centre, a random start
/// and the k-means‖ candidates' weights.
///
/// # Errors
/// As [`ndgpu_core::init_centroids`]; `InvalidArgument` when `w` and the config's
/// weights are not both there or both absent; out of memory; driver errors.
pub fn seed<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    w: Option<&DeviceMatrix<T>>,
    config: &KMeansConfig,
) -> Result<DeviceMatrix<T>> {
    let (n, d) = x.dim();
    check::kmeans_config(n, d, config)?;
    let hw: Option<Vec<f64>> =
        sample_weights::<T>(config)?.map(|w| w.iter().map(|v| v.as_f64()).collect());
    if let Some(w) = w {
        check::weights_dim(n, w.dim())?;
    }
    if w.is_some() != hw.is_some() {
        return Err(Error::invalid(
            "kmeans",
            "resident sample weights without config.sample_weight, or the other way round",
        ));
    }
    let hw = hw.as_deref();
    let dw = w.map(|w| &w.data);
    let k = config.k;
    let mut rng = SplitMix64::new(config.seed);
    let first = |rng: &mut SplitMix64| {
        let tree = hw.map(SampleTree::new);
        first_centre(rng, n, hw.zip(tree.as_ref()))
    };
    match &config.init {
        Init::Given(c) => upload(gpu, &c.mapv(T::from_f64)),
        Init::Random => {
            let rows = random_rows(&mut rng, n, k, hw)?;
            gather(gpu, x, &to_i32(&rows)?)
        }
        Init::KMeansPlusPlus => {
            let mut s = Seeder::new(gpu, x, dw, k)?;
            s.start(first(&mut rng))?;
            s.plus_plus(&mut rng, k)?;
            let rows = s.centres.clone();
            gather(gpu, x, &rows)
        }
        Init::KMeansParallel {
            oversampling,
            rounds,
        } => {
            let mut s = Seeder::new(gpu, x, dw, k)?;
            s.start(first(&mut rng))?;
            let ell = oversampling * k as f64;
            let (ni, select) = (dim_i32("kmeans", n)?, s.function("seed_select")?);
            let mut flags = gpu.alloc::<u8>("kmeans", n)?;
            for round in 0..*rounds {
                let phi = s.total()?;
                if phi == 0.0 {
                    break;
                }
                let r = round as i32;
                let mut b = gpu.stream().launch_builder(&select);
                push_args!(b; s.leaves(), &ni, &config.seed, &r, &ell, &phi, &mut flags);
                // SAFETY: (leaves, n, seed, round, ell, phi, flags): the tree's leaves
                // (D² or D²·w) and flags hold n each; one thread per point, guarded by n.
                unsafe { go(b, "seed_select", cfg((blocks(n, 256), 1, 1), 0))? };
                let picked = gpu.download_slice(&flags, n)?;
                let new: Vec<i32> = (0..n as i32).filter(|&i| picked[i as usize] != 0).collect();
                s.add(&new)?;
            }
            if s.centres.len() <= k {
                s.plus_plus(&mut rng, k)?;
                let rows = s.centres.clone();
                return gather(gpu, x, &rows);
            }
            s.total()?;
            let m = s.centres.len();
            let weights = match hw {
                Some(hw) => {
                    let owner = gpu.download_slice(&s.owner, n)?;
                    candidate_weights(owner.iter().map(|&o| o as usize), m, Some(hw))
                }
                None => owner_counts(gpu, &s, m)?,
            };
            let rows = s.centres.clone();
            let cand = gather(gpu, x, &rows)?;
            let cand = gpu.download_slice(&cand.data, m * d)?;
            let cand = Array2::from_shape_fn((m, d), |(r, c)| cand[r * d + c].as_f64());
            let c = recluster(cand.view(), &weights, k, &mut rng);
            upload(gpu, &c.mapv(T::from_f64))
        }
    }
}

/// The number of points whose nearest centre each of the `m` centres is (integer
/// atomics: exact in any order), as f64.
fn owner_counts<T: CudaElement>(gpu: &Gpu, s: &Seeder<'_, T>, m: usize) -> Result<Vec<f64>> {
    let ni = dim_i32("kmeans", s.x.rows)?;
    let mut counts = gpu.alloc_zeroed::<i32>("kmeans", m)?;
    let f = s.function("seed_owner_counts")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &s.owner, &ni, &mut counts);
    // SAFETY: (owner, n, counts): owner holds n positions below m (written by
    // seed_nearest), counts m; one thread per point, guarded by n.
    unsafe {
        go(
            b,
            "seed_owner_counts",
            cfg((blocks(s.x.rows, 256), 1, 1), 0),
        )?
    };
    Ok(gpu
        .download_slice(&counts, m)?
        .into_iter()
        .map(f64::from)
        .collect())
}

/// Row indices as the kernels' ints.
fn to_i32(rows: &[usize]) -> Result<Vec<i32>> {
    rows.iter().map(|&r| dim_i32("kmeans", r)).collect()
}

/// A host matrix on the device.
fn upload<T: CudaElement>(gpu: &Gpu, c: &Array2<T>) -> Result<DeviceMatrix<T>> {
    let (k, d) = c.dim();
    let mut m = gpu.alloc_matrix("kmeans", k, d)?;
    let host: Vec<T> = c.iter().copied().collect();
    if !host.is_empty() {
        gpu.stream()
            .memcpy_htod(&host, &mut m.data.slice_mut(0..host.len()))
            .map_err(|e| driver("kmeans: copying centroids to the device", e))?;
    }
    Ok(m)
}

/// The rows `rows` of `x` as a new matrix.
fn gather<T: CudaElement>(gpu: &Gpu, x: &DeviceMatrix<T>, rows: &[i32]) -> Result<DeviceMatrix<T>> {
    let (k, d) = (rows.len(), x.cols);
    let mut c = gpu.alloc_matrix("kmeans", k, d)?;
    if k * d == 0 {
        return Ok(c);
    }
    let idx = gpu.upload_slice("kmeans", rows)?;
    let (di, ki) = (dim_i32("kmeans", d)?, dim_i32("kmeans", k)?);
    let name = crate::kernel!("seed_gather").of::<T>();
    let f = gpu.function(KernelFile::SEED, name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, &di, &idx, &ki, &mut c.data);
    // SAFETY: (x, d, rows, k, c): rows holds k row indices of x (below N), c k×d; one
    // thread per element of c, guarded by k·d.
    unsafe { go(b, name, cfg((blocks(k * d, 256), 1, 1), 0))? };
    Ok(c)
}

/// The device state of one seeding: D² weights, nearest centres, the sample tree's
/// levels and the centres chosen so far.
struct Seeder<'a, T> {
    gpu: &'a Gpu,
    x: &'a DeviceMatrix<T>,
    /// D² weight of each point: tree level 0.
    closest: CudaSlice<f64>,
    /// Position (in `centres`) of each point's nearest centre.
    owner: CudaSlice<i32>,
    /// Tree levels 1.. (the last a single total) and every level's length.
    upper: Vec<CudaSlice<f64>>,
    lens: Vec<usize>,
    /// Centres (rows of x) so far, and their device copy (capacity `cap`).
    centres: Vec<i32>,
    dev_centres: CudaSlice<i32>,
    cap: usize,
    /// Set by a draw that met a total that is not finite.
    status: CudaSlice<i32>,
    /// With sample weights: theirs, the leaves D²·w, and their own tree (all levels).
    weighted: Option<Weighted<'a, T>>,
}

/// The sample weights of a seeding and what they add to the device state.
struct Weighted<'a, T> {
    w: &'a CudaSlice<T>,
    /// D²·w of each point: level 0 of the D² tree.
    prod: CudaSlice<f64>,
    /// The tree of the weights, levels 0.. (a draw's fallback when Σ D²·w is 0).
    tree: Vec<CudaSlice<f64>>,
}

/// Fills the levels 1.. of a tree (`upper`, lengths `lens[1..]`) from level 1 up.
fn roots_up(gpu: &Gpu, upper: &mut [CudaSlice<f64>], lens: &[usize]) -> Result<()> {
    let f = gpu.function(KernelFile::SEED, "seed_tree_roots")?;
    for l in 2..lens.len() {
        let (below, above) = upper.split_at_mut(l - 1);
        let len = lens[l - 1] as i64;
        let mut b = gpu.stream().launch_builder(&f);
        push_args!(b; &below[l - 2], &len, &mut above[0]);
        // SAFETY: (in, len, roots): in holds len values, roots ⌈len / 2048⌉, one per
        // block.
        unsafe { go(b, "seed_tree_roots", cfg((lens[l] as u32, 1, 1), 0))? };
    }
    Ok(())
}

impl<'a, T: CudaElement> Weighted<'a, T> {
    /// The weights' tree built on the device (levels of lengths `lens`).
    fn new(gpu: &Gpu, w: &'a CudaSlice<T>, lens: &[usize]) -> Result<Self> {
        let n = lens[0];
        let mut tree = lens
            .iter()
            .map(|&l| gpu.alloc::<f64>("kmeans", l))
            .collect::<Result<Vec<_>>>()?;
        let name = crate::kernel!("seed_weight_leaves").of::<T>();
        let f = gpu.function(KernelFile::SEED, name)?;
        let (leaves, upper) = tree.split_at_mut(1);
        let len = n as i64;
        let mut b = gpu.stream().launch_builder(&f);
        push_args!(b; w, &len, &mut leaves[0], &mut upper[0]);
        // SAFETY: (w, n, leaves, roots): w and leaves hold n, roots ⌈n / 2048⌉, one per
        // block.
        unsafe { go(b, name, cfg((lens[1] as u32, 1, 1), 0))? };
        roots_up(gpu, upper, lens)?;
        Ok(Weighted {
            w,
            prod: gpu.alloc("kmeans", n)?,
            tree,
        })
    }
}

impl<'a, T: CudaElement> Seeder<'a, T> {
    fn new(
        gpu: &'a Gpu,
        x: &'a DeviceMatrix<T>,
        w: Option<&'a CudaSlice<T>>,
        k: usize,
    ) -> Result<Self> {
        let n = x.rows;
        let mut lens = vec![n];
        while lens.len() < 2 || *lens.last().expect("a level") > 1 {
            lens.push(lens.last().expect("a level").div_ceil(TREE_LEAVES).max(1));
        }
        let upper = lens[1..]
            .iter()
            .map(|&l| gpu.alloc::<f64>("kmeans", l))
            .collect::<Result<Vec<_>>>()?;
        let status = gpu.alloc_zeroed::<i32>("kmeans", 1)?;
        let weighted = w.map(|w| Weighted::new(gpu, w, &lens)).transpose()?;
        Ok(Seeder {
            gpu,
            x,
            closest: gpu.alloc("kmeans", n)?,
            owner: gpu.alloc("kmeans", n)?,
            upper,
            lens,
            centres: Vec::new(),
            dev_centres: gpu.alloc("kmeans", k)?,
            cap: k,
            status,
            weighted,
        })
    }

    /// Level 0 of the D² tree: the D² weights, or D²·w with sample weights.
    fn leaves(&self) -> &CudaSlice<f64> {
        match &self.weighted {
            None => &self.closest,
            Some(wd) => &wd.prod,
        }
    }

    fn function(&self, name: &str) -> Result<CudaFunction> {
        self.gpu.function(KernelFile::SEED, name)
    }

    /// The first centre: every weight becomes its distance to it.
    fn start(&mut self, first: usize) -> Result<()> {
        self.centres.push(dim_i32("kmeans", first)?);
        self.upload_centres()?;
        self.nearest(0, 1, true)
    }

    /// Appends `new` centres and takes them into the weights.
    fn add(&mut self, new: &[i32]) -> Result<()> {
        if new.is_empty() {
            return Ok(());
        }
        let from = self.centres.len();
        self.centres.extend_from_slice(new);
        if self.centres.len() > self.cap {
            self.cap = self.centres.len().next_power_of_two();
            self.dev_centres = self.gpu.alloc("kmeans", self.cap)?;
        }
        self.upload_centres()?;
        self.nearest(from, self.centres.len(), false)
    }

    fn upload_centres(&mut self) -> Result<()> {
        self.gpu
            .stream()
            .memcpy_htod(
                &self.centres,
                &mut self.dev_centres.slice_mut(0..self.centres.len()),
            )
            .map_err(|e| driver("kmeans: copying centres to the device", e))
    }

    /// Weights against centres `from..to` (positions in `dev_centres`), then the tree.
    fn nearest(&mut self, from: usize, to: usize, fresh: bool) -> Result<()> {
        let (n, d) = self.x.dim();
        let (ni, di) = (dim_i32("kmeans", n)?, dim_i32("kmeans", d)?);
        let (fi, ti, fr) = (
            dim_i32("kmeans", from)?,
            dim_i32("kmeans", to)?,
            i32::from(fresh),
        );
        let which = if self.weighted.is_some() {
            "_weighted"
        } else {
            ""
        };
        let name = format!("seed_nearest{which}_{}", T::SUFFIX);
        let f = self.function(&name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &self.x.data, &ni, &di, &self.dev_centres, &fi, &ti, &fr);
        match &mut self.weighted {
            None => push_args!(b; &mut self.closest, &mut self.owner, &mut self.upper[0]),
            Some(wd) => push_args!(b; wd.w, &mut self.closest, &mut self.owner, &mut wd.prod,
                &mut self.upper[0]),
        }
        // SAFETY: (x, n, d, centres, from, to, fresh, [w,] closest, owner, [prod,] roots):
        // x n×d, centres[from..to) rows of x (written before this launch), w, closest,
        // owner and prod n, roots ⌈n / 2048⌉ (one per block); 256 threads per block of
        // 2048 points.
        unsafe { go(b, &name, cfg((self.lens[1] as u32, 1, 1), 0))? };
        roots_up(self.gpu, &mut self.upper, &self.lens)
    }

    /// The tree's total, read back; an error if it is not finite.
    fn total(&self) -> Result<f64> {
        let top = self.upper.last().expect("a top level");
        let total = self.gpu.download_slice(top, 1)?[0];
        let status = self.gpu.download_slice(&self.status, 1)?[0];
        if !total.is_finite() || status != 0 {
            let (n, d) = self.x.dim();
            let xh = self.gpu.download_slice(&self.x.data, n * d)?;
            let xh = Array2::from_shape_vec((n, d), xh).expect("n×d elements");
            return Err(nonfinite_total(xh.view(), total));
        }
        Ok(total)
    }

    /// D² draws until there are k centres, queued without reading back; then the
    /// total and status are checked once.
    fn plus_plus(&mut self, rng: &mut SplitMix64, k: usize) -> Result<()> {
        let from = self.centres.len();
        if from < k {
            let n = self.x.rows;
            let mut u = vec![0.0f64; k];
            for v in &mut u[from..] {
                *v = rng.next_f64();
            }
            let u = self.gpu.upload_slice("kmeans", &u)?;
            if self.cap < k {
                self.cap = k;
                self.dev_centres = self.gpu.alloc("kmeans", k)?;
                self.upload_centres()?;
            }
            let which = if self.weighted.is_some() {
                "seed_pick_weighted"
            } else {
                "seed_pick"
            };
            let f = self.function(which)?;
            let ni = dim_i32("kmeans", n)?;
            let count = self.lens.len() as i32;
            let top = self.lens.len() - 1;
            for j in from..k {
                let ji = j as i32;
                let leaves = match &self.weighted {
                    None => &self.closest,
                    Some(wd) => &wd.prod,
                };
                let lv = |l: usize| {
                    if l == 0 {
                        leaves
                    } else {
                        &self.upper[l - 1]
                    }
                };
                let len = |l: usize| *self.lens.get(l).unwrap_or(&0) as i64;
                let level = |l: usize| lv(l.min(top));
                let (l0, l1, l2, l3) = (len(0), len(1), len(2), len(3));
                let mut b = self.gpu.stream().launch_builder(&f);
                push_args!(b; level(0), &l0, level(1), &l1, level(2), &l2, level(3), &l3, &count);
                if let Some(wd) = &self.weighted {
                    let fb = |l: usize| &wd.tree[l.min(top)];
                    push_args!(b; fb(0), fb(1), fb(2), fb(3));
                }
                push_args!(b; &u, &ji, &ni, &mut self.dev_centres, &mut self.status);
                // SAFETY: (v0, len0, .., v3, len3, count, [f0, .., f3,] u, j, n, centres,
                // status): the first `count` levels (of both trees, which have the same
                // lengths) hold their lengths' values (levels past count are never
                // read), u holds k, centres k (j < k), status 1; one block.
                unsafe { go(b, which, cfg((1, 1, 1), 0))? };
                self.nearest(j, j + 1, false)?;
            }
            let picked = self.gpu.download_slice(&self.dev_centres, k)?;
            self.centres = picked;
        }
        self.total().map(|_| ())
    }
}
