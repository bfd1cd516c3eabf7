//! The CUDA GPUs of one node driven from one process, for work split across them (Pogo's
//! explicit stepping with a halo exchange): a [`CudaDevice`] each, a second stream each for the
//! exchange, and one NCCL communicator over them (`ncclCommInitAll`). Point-to-point sends and
//! receives of one exchange go in one NCCL group, so that a single host thread drives every rank
//! without deadlock.
//!
//! A step with an exchange is forked and joined: [`NodeGpus::fork`] makes each exchange stream
//! wait for its GPU's own stream; the rows that are sent are stepped on the exchange stream
//! ([`NodeGpus::launch_beside`]), then exchanged ([`NodeGpus::exchange`]), while the rest of the
//! step runs on the GPU's own stream; [`NodeGpus::join`] makes the own stream wait for the halo.
//! The exchange stream has the device's highest priority, so that its small kernels (the sent
//! rows, the packing, NCCL's) are scheduled ahead of the large one beside them instead of after it.
//!
//! NVLink multicast (NVLS) is never used: point-to-point transfers do not touch it, and the
//! environment's `NCCL_NVLS_ENABLE=0` keeps it off for NCCL as a whole.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use cudarc::nccl::{result as nccl, sys as nccl_sys};

use crate::cuda::CudaDevice;
use crate::{Backend, Buffer, Device, DeviceError, DeviceResult, Kernel, Launch, Precision};

/// One transfer of an exchange: `count` values of the exchange's precision at byte `offset` of
/// `buf`, to or from rank `peer`.
pub struct Transfer<'a> {
    pub peer: usize,
    pub buf: &'a Buffer,
    pub offset: usize,
    pub count: usize,
}

/// Why NCCL cannot be used here (its library is not found), or None where it can.
pub fn nccl_missing() -> Option<String> {
    // SAFETY: only tries to open the shared library.
    let present = unsafe { nccl_sys::is_culib_present() };
    (!present).then(|| {
        "NCCL's library (libnccl.so) is not on the loader's path (scripts/gpu-env.sh links the one of pip's nvidia-nccl package)".into()
    })
}

/// Each rank's exchange stream and the events that order it against the rank's own stream.
struct Rank {
    exchange: Arc<CudaStream>,
    /// Recorded on the rank's stream at a fork; the exchange stream waits on it.
    ready: CudaEvent,
    /// Recorded on the exchange stream at a join, when what it receives has landed.
    landed: CudaEvent,
    /// Timing events on the rank's own stream.
    start: CudaEvent,
    stop: CudaEvent,
}

pub struct NodeGpus {
    devices: Vec<CudaDevice>,
    ranks: Vec<Rank>,
    comms: Vec<nccl_sys::ncclComm_t>,
}

fn driver(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> DeviceError {
    move |e| DeviceError::Api { backend: Backend::Cuda, call, detail: e.to_string() }
}

fn nccl_err(call: &'static str) -> impl Fn(nccl::NcclError) -> DeviceError {
    move |e| DeviceError::Api { backend: Backend::Cuda, call, detail: format!("{e:?}") }
}

impl NodeGpus {
    /// Devices 0..count, with an NCCL communicator over them where count > 1.
    pub fn open(count: usize) -> DeviceResult<NodeGpus> {
        let devices: Vec<CudaDevice> = (0..count).map(CudaDevice::open).collect::<DeviceResult<_>>()?;
        let ranks = devices.iter().map(Self::rank).collect::<DeviceResult<Vec<Rank>>>()?;
        let mut comms = Vec::new();
        if count > 1 {
            if let Some(why) = nccl_missing() {
                return Err(DeviceError::Unsupported(why));
            }
            comms = vec![std::ptr::null_mut(); count];
            let ordinals: Vec<i32> = (0..count as i32).collect();
            // SAFETY: `comms` has room for `count` communicators; the ordinals are this
            // process's devices.
            unsafe { nccl::comm_init_all(comms.as_mut_ptr(), count as i32, ordinals.as_ptr()) }.map_err(nccl_err("ncclCommInitAll"))?;
        }
        Ok(NodeGpus { devices, ranks, comms })
    }

    fn rank(dev: &CudaDevice) -> DeviceResult<Rank> {
        let ctx = dev.context();
        let plain = Some(CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
        ctx.bind_to_thread().map_err(driver("cuCtxSetCurrent"))?;
        // Lower numbers are higher priorities: the range's second end is the highest.
        let (_, highest) = cudarc::driver::result::stream::get_priority_range().map_err(driver("cuCtxGetStreamPriorityRange"))?;
        Ok(Rank {
            exchange: ctx.new_stream_with_priority(highest).map_err(driver("cuStreamCreateWithPriority"))?,
            ready: ctx.new_event(plain).map_err(driver("cuEventCreate"))?,
            landed: ctx.new_event(plain).map_err(driver("cuEventCreate"))?,
            start: ctx.new_event(timed).map_err(driver("cuEventCreate"))?,
            stop: ctx.new_event(timed).map_err(driver("cuEventCreate"))?,
        })
    }

    pub fn len(&self) -> usize {
        self.devices.len()
    }
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
    pub fn device(&self, rank: usize) -> &dyn Device {
        &self.devices[rank]
    }

    /// NCCL's version (e.g. 22703 for 2.27.3), where a communicator exists.
    pub fn nccl_version(&self) -> Option<i32> {
        if self.comms.is_empty() {
            return None;
        }
        let mut v = 0;
        // SAFETY: writes one int.
        unsafe { nccl_sys::ncclGetVersion(&mut v) };
        Some(v)
    }

    /// Each rank's exchange stream waits for the work queued so far on the rank's own stream.
    pub fn fork(&self) -> DeviceResult<()> {
        for (dev, r) in self.devices.iter().zip(&self.ranks) {
            r.ready.record(dev.stream()).map_err(driver("cuEventRecord"))?;
            r.exchange.wait(&r.ready).map_err(driver("cuStreamWaitEvent"))?;
        }
        Ok(())
    }

    /// A launch on rank `rank`'s exchange stream, beside its own stream (after a fork: the rows
    /// that the exchange then sends).
    pub fn launch_beside<A: crate::KernelArgs>(&self, rank: usize, kernel: &Kernel, launch: Launch, args: &A) -> DeviceResult<()> {
        kernel.takes::<A>()?;
        self.devices[rank].launch_on(&self.ranks[rank].exchange, kernel, launch, &args.args())
    }

    /// Queues one exchange on the exchange streams, after what they hold: every rank's sends and
    /// receives (`sends[r]`, `recvs[r]`) in one NCCL group. The ranks' own streams go on
    /// meanwhile; [`NodeGpus::join`] makes them wait for it.
    pub fn exchange(&self, precision: Precision, sends: &[Vec<Transfer>], recvs: &[Vec<Transfer>]) -> DeviceResult<()> {
        let kind = match precision {
            Precision::F32 => nccl_sys::ncclDataType_t::ncclFloat32,
            Precision::F64 => nccl_sys::ncclDataType_t::ncclFloat64,
        };
        nccl::group_start().map_err(nccl_err("ncclGroupStart"))?;
        let queued = self.queue_transfers(kind, precision.bytes(), sends, recvs);
        let ended = nccl::group_end().map_err(nccl_err("ncclGroupEnd"));
        queued?;
        ended?;
        Ok(())
    }

    fn queue_transfers(
        &self,
        kind: nccl_sys::ncclDataType_t,
        size: usize,
        sends: &[Vec<Transfer>],
        recvs: &[Vec<Transfer>],
    ) -> DeviceResult<()> {
        for (rank, (dev, r)) in self.devices.iter().zip(&self.ranks).enumerate() {
            let stream = r.exchange.cu_stream() as nccl_sys::cudaStream_t;
            for t in sends.get(rank).into_iter().flatten() {
                t.buf.check_range(t.offset, t.count * size)?;
                let ptr = dev.raw_ptr(t.buf)? + t.offset as u64;
                // SAFETY: the range lies inside the buffer (checked), which outlives the exchange
                // (the caller finishes it before the buffers go).
                unsafe { nccl::send(ptr as *const _, t.count, kind, t.peer as i32, self.comms[rank], stream) }
                    .map_err(nccl_err("ncclSend"))?;
            }
            for t in recvs.get(rank).into_iter().flatten() {
                t.buf.check_range(t.offset, t.count * size)?;
                let ptr = dev.raw_ptr(t.buf)? + t.offset as u64;
                // SAFETY: as above; nothing else writes the range until the exchange is finished.
                unsafe { nccl::recv(ptr as *mut _, t.count, kind, t.peer as i32, self.comms[rank], stream) }
                    .map_err(nccl_err("ncclRecv"))?;
            }
        }
        Ok(())
    }

    /// Every rank's own stream waits for what its exchange stream holds (the sent rows and the
    /// halo that has landed).
    pub fn join(&self) -> DeviceResult<()> {
        for (dev, r) in self.devices.iter().zip(&self.ranks) {
            r.landed.record(&r.exchange).map_err(driver("cuEventRecord"))?;
            dev.stream().wait(&r.landed).map_err(driver("cuStreamWaitEvent"))?;
        }
        Ok(())
    }

    /// Runs `body` (which only enqueues work) between timing events on every rank's stream and
    /// returns the slowest rank's device seconds. The gate is open: the host enqueues while the
    /// devices run, as a real run does (an open region).
    pub fn time(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        for (dev, r) in self.devices.iter().zip(&self.ranks) {
            r.start.record(dev.stream()).map_err(driver("cuEventRecord"))?;
        }
        body()?;
        let mut slowest = 0.0f64;
        for (dev, r) in self.devices.iter().zip(&self.ranks) {
            r.stop.record(dev.stream()).map_err(driver("cuEventRecord"))?;
        }
        for r in &self.ranks {
            r.stop.synchronize().map_err(driver("cuEventSynchronize"))?;
            slowest = slowest.max(r.start.elapsed_ms(&r.stop).map_err(driver("cuEventElapsedTime"))? as f64 / 1e3);
        }
        Ok(slowest)
    }

    pub fn synchronize(&self) -> DeviceResult<()> {
        for (dev, r) in self.devices.iter().zip(&self.ranks) {
            r.exchange.synchronize().map_err(driver("cuStreamSynchronize"))?;
            dev.synchronize()?;
        }
        Ok(())
    }
}

impl Drop for NodeGpus {
    fn drop(&mut self) {
        let _ = self.synchronize();
        for &c in &self.comms {
            // SAFETY: each communicator was made by ncclCommInitAll and is destroyed once.
            let _ = unsafe { nccl::comm_destroy(c) };
        }
    }
}
