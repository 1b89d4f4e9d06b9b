//! k-means seeding on the device (`kernels/seed.cu`), both GPU backends' `seed_dev`:
//! the picks of [`ndgpu_core::init_centroids`] to the bit, with the data read on the
//! device. k-means++ queues all its draws without reading anything back; k-means‖ reads
//! one total and one flag per point each round; both read back one status at the end.

use crate::push_args;
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use ndarray::Array2;
use ndgpu_core::init::{nonfinite_total, recluster, sample_distinct, TREE_LEAVES};
use ndgpu_core::{check, Init, KMeansConfig, Result, SplitMix64};

use crate::kernels::KernelFile;
use crate::kmeans::cfg;
use crate::launch::go;
use crate::launch::{blocks, dim_i32};
use crate::{driver, CudaElement, DeviceMatrix, Gpu};

/// The starting centroids of `config` for `x` (N×D): given, random, k-means++ or
/// k-means‖, equal to the host reference's.
///
/// # Errors
/// As [`ndgpu_core::init_centroids`]; out of memory; driver errors.
pub fn seed<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    config: &KMeansConfig,
) -> Result<DeviceMatrix<T>> {
    let (n, d) = x.dim();
    check::kmeans_config(n, d, config)?;
    let k = config.k;
    let mut rng = SplitMix64::new(config.seed);
    match &config.init {
        Init::Given(c) => upload(gpu, &c.mapv(T::from_f64)),
        Init::Random => {
            let rows = sample_distinct(&mut rng, n, k)?;
            gather(gpu, x, &to_i32(&rows)?)
        }
        Init::KMeansPlusPlus => {
            let mut s = Seeder::new(gpu, x, k)?;
            s.start(rng.below(n))?;
            s.plus_plus(&mut rng, k)?;
            let rows = s.centres.clone();
            gather(gpu, x, &rows)
        }
        Init::KMeansParallel {
            oversampling,
            rounds,
        } => {
            let mut s = Seeder::new(gpu, x, k)?;
            s.start(rng.below(n))?;
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
                push_args!(b; &s.closest, &ni, &config.seed, &r, &ell, &phi, &mut flags);
                // SAFETY: (closest, n, seed, round, ell, phi, flags): closest and flags
                // hold n each; one thread per point, guarded by n.
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
            let mut counts = gpu
                .stream()
                .alloc_zeros::<i32>(m)
                .map_err(|e| driver("kmeans: allocating counts", e))?;
            let f = s.function("seed_owner_counts")?;
            let mut b = gpu.stream().launch_builder(&f);
            push_args!(b; &s.owner, &ni, &mut counts);
            // SAFETY: (owner, n, counts): owner holds n positions below m (written by
            // seed_nearest), counts m; one thread per point, guarded by n.
            unsafe { go(b, "seed_owner_counts", cfg((blocks(n, 256), 1, 1), 0))? };
            let weights: Vec<f64> = gpu
                .download_slice(&counts, m)?
                .into_iter()
                .map(f64::from)
                .collect();
            let rows = s.centres.clone();
            let cand = gather(gpu, x, &rows)?;
            let cand = gpu.download_slice(&cand.data, m * d)?;
            let cand = Array2::from_shape_fn((m, d), |(r, c)| cand[r * d + c].as_f64());
            let c = recluster(cand.view(), &weights, k, &mut rng);
            upload(gpu, &c.mapv(T::from_f64))
        }
    }
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
    let name = format!("seed_gather_{}", T::SUFFIX);
    let f = gpu.function(KernelFile::SEED, &name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, &di, &idx, &ki, &mut c.data);
    // SAFETY: (x, d, rows, k, c): rows holds k row indices of x (below N), c k×d; one
    // thread per element of c, guarded by k·d.
    unsafe { go(b, &name, cfg((blocks(k * d, 256), 1, 1), 0))? };
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
}

impl<'a, T: CudaElement> Seeder<'a, T> {
    fn new(gpu: &'a Gpu, x: &'a DeviceMatrix<T>, k: usize) -> Result<Self> {
        let n = x.rows;
        let mut lens = vec![n];
        while lens.len() < 2 || *lens.last().expect("a level") > 1 {
            lens.push(lens.last().expect("a level").div_ceil(TREE_LEAVES).max(1));
        }
        let upper = lens[1..]
            .iter()
            .map(|&l| gpu.alloc::<f64>("kmeans", l))
            .collect::<Result<Vec<_>>>()?;
        let status = gpu
            .stream()
            .alloc_zeros::<i32>(1)
            .map_err(|e| driver("kmeans: allocating the seeding status", e))?;
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
        })
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
        let name = format!("seed_nearest_{}", T::SUFFIX);
        let f = self.function(&name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &self.x.data, &ni, &di, &self.dev_centres, &fi, &ti, &fr, &mut self.closest,
            &mut self.owner, &mut self.upper[0]);
        // SAFETY: (x, n, d, centres, from, to, fresh, closest, owner, roots): x n×d,
        // centres[from..to) rows of x (written before this launch), closest and owner n,
        // roots ⌈n / 2048⌉ (one per block); 256 threads per block of 2048 points.
        unsafe { go(b, &name, cfg((self.lens[1] as u32, 1, 1), 0))? };
        let f = self.function("seed_tree_roots")?;
        for l in 2..self.lens.len() {
            let (below, above) = self.upper.split_at_mut(l - 1);
            let len = self.lens[l - 1] as i64;
            let mut b = self.gpu.stream().launch_builder(&f);
            push_args!(b; &below[l - 2], &len, &mut above[0]);
            // SAFETY: (in, len, roots): in holds len values, roots ⌈len / 2048⌉, one per
            // block.
            unsafe { go(b, "seed_tree_roots", cfg((self.lens[l] as u32, 1, 1), 0))? };
        }
        Ok(())
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
            let f = self.function("seed_pick")?;
            let ni = dim_i32("kmeans", n)?;
            let count = self.lens.len() as i32;
            for j in from..k {
                let ji = j as i32;
                let lv = |l: usize| {
                    if l == 0 {
                        &self.closest
                    } else {
                        &self.upper[l - 1]
                    }
                };
                let len = |l: usize| *self.lens.get(l).unwrap_or(&0) as i64;
                let level = |l: usize| lv(l.min(self.lens.len() - 1));
                let (l0, l1, l2, l3) = (len(0), len(1), len(2), len(3));
                let mut b = self.gpu.stream().launch_builder(&f);
                push_args!(b; level(0), &l0, level(1), &l1, level(2), &l2, level(3), &l3, &count,
                    &u, &ji, &ni, &mut self.dev_centres, &mut self.status);
                // SAFETY: (v0, len0, .., v3, len3, count, u, j, n, centres, status): the
                // first `count` levels hold their lengths' values (levels past count are
                // never read), u holds k, centres k (j < k), status 1; one block.
                unsafe { go(b, "seed_pick", cfg((1, 1, 1), 0))? };
                self.nearest(j, j + 1, false)?;
            }
            let picked = self.gpu.download_slice(&self.dev_centres, k)?;
            self.centres = picked;
        }
        self.total().map(|_| ())
    }
}
