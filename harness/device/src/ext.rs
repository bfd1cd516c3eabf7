//! What every device offers beyond the trait: typed uploads and downloads, and launches with a
//! kernel's argument struct ([`crate::args`]).

use crate::api::{Buffer, Device, DeviceResult, Kernel, Launch};
use crate::args::KernelArgs;

/// Typed helpers over the byte-level trait.
pub trait DeviceExt: Device {
    fn upload_slice<T: bytemuck::Pod>(&self, data: &[T]) -> DeviceResult<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut buf = self.alloc(bytes.len().max(1))?;
        self.upload(&mut buf, bytes)?;
        Ok(buf)
    }

    fn download_vec<T: bytemuck::Pod + Default>(&self, src: &Buffer, len: usize) -> DeviceResult<Vec<T>> {
        let mut out = vec![T::default(); len];
        self.download(src, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Enqueues a launch of `kernel` with its argument struct (a [`KernelArgs`] made by
    /// [`kernel_args!`](crate::kernel_args)), refused if the struct is another kernel's or its
    /// kinds differ from the signature. Nothing is allocated: allowed inside a timed body.
    fn launch_with<A: KernelArgs>(&self, kernel: &Kernel, launch: Launch, args: &A) -> DeviceResult<()> {
        kernel.takes::<A>()?;
        self.launch(kernel, launch, &args.args())
    }

    /// What `body` enqueues, recorded as one graph where the backend has graphs (CUDA), or
    /// `None` where it has none (the caller then enqueues the work call by call).
    fn record_if_graphs(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<Option<crate::api::Graph>> {
        match self.capture(body) {
            Ok(graph) => Ok(Some(graph)),
            Err(crate::api::DeviceError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl<D: Device + ?Sized> DeviceExt for D {}
