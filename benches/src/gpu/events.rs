//! CUDA events around the timed region, on the device's one stream.

use cudarc::driver::{sys::CUevent_flags, CudaEvent, DriverError};
use ndgpu_core::{Error, Result};
use ndgpu_cuda::Gpu;

/// A pair of timing events, to time the work queued between [`EventTimer::start`] and
/// [`EventTimer::stop`].
pub struct EventTimer<'g> {
    gpu: &'g Gpu,
    start: CudaEvent,
    end: CudaEvent,
}

fn event_error(what: &str, e: DriverError) -> Error {
    Error::backend("cuda", what.to_string(), format!("{e:?}"))
}

impl<'g> EventTimer<'g> {
    /// Two timing events on `gpu`'s context.
    ///
    /// # Errors
    /// Driver errors.
    pub fn new(gpu: &'g Gpu) -> Result<Self> {
        let make = || {
            gpu.context()
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| event_error("creating a timing event", e))
        };
        Ok(EventTimer {
            gpu,
            start: make()?,
            end: make()?,
        })
    }

    /// Records the start event on the stream (after everything queued so far).
    ///
    /// # Errors
    /// Driver errors.
    pub fn start(&self) -> Result<()> {
        self.start
            .record(self.gpu.stream())
            .map_err(|e| event_error("recording the start event", e))
    }

    /// Records the end event, waits for it, and returns the seconds between the two.
    ///
    /// # Errors
    /// Driver errors, including those of the kernels timed.
    pub fn stop(&self) -> Result<f64> {
        self.end
            .record(self.gpu.stream())
            .map_err(|e| event_error("recording the end event", e))?;
        // elapsed_ms waits for both events; the synchronize reports kernel faults.
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(|e| event_error("reading the elapsed time", e))?;
        self.gpu.synchronize()?;
        Ok(f64::from(ms) * 1e-3)
    }
}
