/* fembench portability header.
 *
 * Every kernel in this folder is written once, in the common subset of CUDA C++ and OpenCL C,
 * against the macros below. The host (harness/device/src/kernels.rs) prepends `#define FB_CUDA 1` or
 * `#define FB_OPENCL 1`, then this header, then the kernel file, and passes precision and tuning
 * choices as -D options (FB_REAL_IS_DOUBLE, BLOCK, ...), so one compile function serves NVRTC and
 * every OpenCL driver, PoCL included.
 */
/* The harness compiles one module per kernel it launches and defines FB_SELECT=1 and
 * FB_ONLY_<kernel name>=1; a kernel file may then skip its other, expensive kernels
 * (#if !FB_SELECT || defined(FB_ONLY_name)). Without FB_SELECT every kernel is compiled. */
#ifndef FB_SELECT
#define FB_SELECT 0
#endif

#ifndef FB_REAL_IS_DOUBLE
#define FB_REAL_IS_DOUBLE 0
#endif

#if defined(FB_CUDA)

#define KERNEL extern "C" __global__
/* A kernel that asks the compiler to fit `blocks` blocks of `threads` per multiprocessor
 * (registers); blocks = 0: no request. OpenCL has no such attribute. */
#define KERNEL_BOUNDS(threads, blocks) extern "C" __global__ __launch_bounds__(threads, blocks)
#define DEVICE_FN __device__ static inline
#define GLOBAL
#define LOCAL __shared__
/* The address space of a pointer into shared memory (CUDA pointers are generic). */
#define LOCAL_PTR
#define RESTRICT __restrict__
#define LOCAL_ID() ((int)threadIdx.x)
#define GROUP_ID() ((int)blockIdx.x)
#define LOCAL_SIZE() ((int)blockDim.x)
#define NUM_GROUPS() ((int)gridDim.x)
#define BARRIER() __syncthreads()
typedef long long idx_t;
typedef unsigned int uint;
typedef unsigned short ushort;
/* Native float and double atomics (sm_60 and later), in global and in shared memory. */
#define ATOMIC_ADD_REAL(p, v) atomicAdd((p), (v))
#define ATOMIC_ADD_LOCAL_REAL(p, v) atomicAdd((p), (v))

#elif defined(FB_OPENCL)

#if FB_REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#define KERNEL __kernel
#define KERNEL_BOUNDS(threads, blocks) __kernel
#define DEVICE_FN static inline
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_PTR __local
#define RESTRICT restrict
#define LOCAL_ID() ((int)get_local_id(0))
#define GROUP_ID() ((int)get_group_id(0))
#define LOCAL_SIZE() ((int)get_local_size(0))
#define NUM_GROUPS() ((int)get_num_groups(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
typedef long idx_t;

#else
#error "define FB_CUDA or FB_OPENCL before including fembench.h"
#endif

#if FB_REAL_IS_DOUBLE
typedef double real;
#else
typedef float real;
#endif

#if defined(FB_OPENCL)
/* OpenCL 1.2 has no floating-point atomic add: a compare-and-swap loop on the bit pattern, one
 * function per address space (global and local). */
#if FB_REAL_IS_DOUBLE
typedef ulong fb_bits;
#define FB_CMPXCHG atom_cmpxchg
#else
typedef uint fb_bits;
#define FB_CMPXCHG atomic_cmpxchg
#endif
#define FB_DEFINE_ATOMIC_ADD(name, space)                                                         \
  DEVICE_FN void name(volatile space real *p, real v) {                                           \
    union { fb_bits u; real f; } expected, desired, seen;                                         \
    seen.f = *p;                                                                                  \
    do {                                                                                          \
      expected.u = seen.u;                                                                        \
      desired.f = expected.f + v;                                                                 \
      seen.u = FB_CMPXCHG((volatile space fb_bits *)p, expected.u, desired.u);                    \
    } while (seen.u != expected.u);                                                               \
  }
FB_DEFINE_ATOMIC_ADD(fb_atomic_add_real, GLOBAL)
FB_DEFINE_ATOMIC_ADD(fb_atomic_add_local_real, LOCAL)
#define ATOMIC_ADD_REAL(p, v) fb_atomic_add_real((p), (v))
#define ATOMIC_ADD_LOCAL_REAL(p, v) fb_atomic_add_local_real((p), (v))
#endif

/* Integer atomics on 32-bit ints in global memory: exchange (a linked-list push) and add. */
#if defined(FB_CUDA)
#define ATOMIC_XCHG_INT(p, v) atomicExch((p), (v))
#define ATOMIC_ADD_INT(p, v) atomicAdd((p), (v))
#else
#define ATOMIC_XCHG_INT(p, v) atomic_xchg((p), (v))
#define ATOMIC_ADD_INT(p, v) atomic_add((p), (v))
#endif

/* Records of four 32-bit words moved by one 16-byte vector load or store (a struct of two ints
 * and a double would be moved in two halves). FB_REAL_LO/HI: a real's bits as two ints (HI is 0
 * in f32); FB_REAL_FROM(lo, hi) puts them back. */
#if defined(FB_CUDA)
typedef int4 fb_int4;
#define FB_INT4(a, b, c, d) make_int4((a), (b), (c), (d))
#if FB_REAL_IS_DOUBLE
#define FB_REAL_LO(v) __double2loint(v)
#define FB_REAL_HI(v) __double2hiint(v)
#define FB_REAL_FROM(lo, hi) __hiloint2double((hi), (lo))
#else
#define FB_REAL_LO(v) __float_as_int(v)
#define FB_REAL_HI(v) 0
#define FB_REAL_FROM(lo, hi) __int_as_float(lo)
#endif
#else
typedef int4 fb_int4;
#define FB_INT4(a, b, c, d) ((int4)((a), (b), (c), (d)))
#if FB_REAL_IS_DOUBLE
#define FB_REAL_LO(v) (as_int2(v).x)
#define FB_REAL_HI(v) (as_int2(v).y)
#define FB_REAL_FROM(lo, hi) as_double((int2)((lo), (hi)))
#else
#define FB_REAL_LO(v) as_int(v)
#define FB_REAL_HI(v) 0
#define FB_REAL_FROM(lo, hi) as_float(lo)
#endif
#endif
