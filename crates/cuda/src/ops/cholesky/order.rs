//! The dataflow Cholesky's ticket order: which tile each ticket of the persistent
//! kernel takes, per panel, uploaded once per order and kept with the runtime.

use cudarc::driver::CudaSlice;
use ndgpu_core::{DType, Error, Result};
use ndgpu_cuda_runtime::{dim_i32, driver, CudaElement, Gpu};

use super::launch::{self, NB};

/// The dataflow kernel's tile orders for nt tiles a side, panels of `width` tile columns
/// and the kernel of `dtype`, with the blocks it can keep resident (asked of the driver
/// once per order, not per call), uploaded once per order.
pub(super) struct Order {
    pub(super) nt: usize,
    pub(super) dtype: DType,
    pub(super) width: usize,
    pub(super) blocks: usize,
    pub(super) panels: Vec<(launch::DataflowPanel, CudaSlice<u32>)>,
}
pub(super) const ORDER: &str = "cholesky dataflow order";

impl Order {
    pub(super) fn new<T: CudaElement>(gpu: &Gpu, nt: usize, width: usize) -> Result<Self> {
        let blocks = launch::dataflow_blocks::<T>(gpu)?;
        let mut panels = Vec::new();
        for j0 in (0..nt).step_by(width.max(1)) {
            let (rest, nc) = (nt - j0, width.min(nt - j0));
            let table = ticket_order(rest, nc, blocks)?;
            let panel = launch::DataflowPanel {
                c0: dim_i32("cholesky", j0 * NB)?,
                nc: nc as i32,
                tiles: table.len(),
            };
            let table = gpu
                .stream()
                .clone_htod(&table)
                .map_err(|e| driver("cholesky: uploading the tile order", e))?;
            panels.push((panel, table));
        }
        Ok(Order {
            nt,
            dtype: T::DTYPE,
            width,
            blocks,
            panels,
        })
    }
}

/// The tile of each ticket of the dataflow kernel (row | column << 16), for the first nc
/// tile columns of nt tiles a side and `blocks` resident blocks. Tile (i, j), i > j,
/// comes at j·W + (i − j); the diagonal tile (j, j), j > 0, whose block sums every column
/// but the last, just before (j, j − 1), whose block solves and then finishes it; (0, 0)
/// first. W = blocks/8 (at least 2): the tiles of the diagonal chain start about eight
/// columns ahead of the bulk of the updates. Every tile comes after the tiles it waits on
/// (its row's and its diagonal's earlier columns: W ≥ 2 makes j·W + (i − j) grow along
/// both), so the kernel cannot deadlock.
pub(super) fn ticket_order(nt: usize, nc: usize, blocks: usize) -> Result<Vec<u32>> {
    if nt > 1 << 16 {
        return Err(Error::invalid(
            "cholesky",
            format!("{nt} tiles a side: more than the dataflow kernel numbers"),
        ));
    }
    let w = (blocks / 8).max(2) as i64;
    let mut keyed: Vec<(i64, usize, usize)> = Vec::with_capacity(nt * (nt + 1) / 2);
    for j in 0..nc.min(nt) {
        for i in j..nt {
            let (ii, jj) = (i as i64, j as i64);
            let key = if i > j {
                2 * (jj * w + (ii - jj))
            } else if j > 0 {
                2 * ((jj - 1) * w) + 1
            } else {
                -1
            };
            keyed.push((key, j, i));
        }
    }
    keyed.sort_unstable();
    Ok(keyed
        .into_iter()
        .map(|(_, j, i)| i as u32 | (j as u32) << 16)
        .collect())
}
