//! CPU side of the bandwidth kernels (rayon), measured with criterion: the host numbers the
//! device-bandwidth experiment reports for the `cpu` backend, with criterion's statistics.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fembench::bandwidth::{cpu_kernel, HostData, Problem, StreamKernel};

fn bench(c: &mut Criterion) {
    let p = Problem::default();
    let mut group = c.benchmark_group("cpu_bandwidth_f64");
    for mib in [4usize, 64] {
        let n = mib * (1 << 20) / 8;
        for kernel in StreamKernel::ALL {
            let d = HostData::<f64>::new(kernel, n, &p);
            let mut out = d.output();
            let scratch = d.scratch();
            group.throughput(Throughput::Bytes(kernel.bytes(n, 8, p.scatter_fan_in as usize) as u64));
            group.bench_with_input(BenchmarkId::new(kernel.as_str(), format!("{mib}MiB")), &d, |b, d| {
                b.iter(|| cpu_kernel(kernel, d, &mut out, p.scalar, &scratch))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
