// common.cuh: helpers shared by every kernel file. Handed to NVRTC as an in-memory
// header; no system headers are available (NVRTC has no C++ standard library).
#pragma once

typedef long long i64;
typedef unsigned int u32;

// Largest finite values, for min/max identities.
#define NDGPU_F32_MAX 3.402823466e+38f
#define NDGPU_F64_MAX 1.7976931348623157e+308

// An extern "C" entry point: its name, launch bounds, parameter list and the call of
// the device function that does the work (the last two parenthesised, so that their
// commas pass through the macros that build entry points per technique and type).
#define NDGPU_ENTRY(name, bounds, params, call) \
    extern "C" __global__ void bounds name params { call; }
// The f32 and f64 entry points of technique `tech` through ENTRY(tech, sfx, T, bounds),
// with launch bounds b32 and b64.
#define NDGPU_F32_F64(ENTRY, tech, b32, b64) \
    ENTRY(tech, f32, float, b32) ENTRY(tech, f64, double, b64)

template <typename T> struct Lim;
template <> struct Lim<float> {
    __device__ static float inf() { return __int_as_float(0x7f800000); }
    __device__ static float nan() { return __int_as_float(0x7fffffff); }
};
template <> struct Lim<double> {
    __device__ static double inf() { return __longlong_as_double(0x7ff0000000000000LL); }
    __device__ static double nan() { return __longlong_as_double(0x7fffffffffffffffLL); }
};

__device__ __forceinline__ bool is_nan(float x) { return x != x; }
__device__ __forceinline__ bool is_nan(double x) { return x != x; }

// 16-byte vector access (used by the register-blocked GEMM and gram kernels).
template <typename T> struct V16;  // elements per 16-byte vector
template <> struct V16<float> { static const int N = 4; };
template <> struct V16<double> { static const int N = 2; };

__device__ __forceinline__ bool aligned16(const void* p) {
    return ((unsigned long long)p & 15ull) == 0;
}
// Four consecutive elements at a 16-byte aligned address (one or two 128-bit accesses).
__device__ __forceinline__ void ld4(const float* p, float r[4]) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
}
__device__ __forceinline__ void ld4(const double* p, double r[4]) {
    const double2 u = *reinterpret_cast<const double2*>(p);
    const double2 v = *reinterpret_cast<const double2*>(p + 2);
    r[0] = u.x; r[1] = u.y; r[2] = v.x; r[3] = v.y;
}
__device__ __forceinline__ void st4(float* p, const float r[4]) {
    *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
}
__device__ __forceinline__ void st4(double* p, const double r[4]) {
    *reinterpret_cast<double2*>(p) = make_double2(r[0], r[1]);
    *reinterpret_cast<double2*>(p + 2) = make_double2(r[2], r[3]);
}
// One 16-byte vector.
__device__ __forceinline__ void ldv(const float* p, float r[4]) { ld4(p, r); }
__device__ __forceinline__ void ldv(const double* p, double r[2]) {
    const double2 u = *reinterpret_cast<const double2*>(p);
    r[0] = u.x; r[1] = u.y;
}
__device__ __forceinline__ void stv(float* p, const float r[4]) { st4(p, r); }
__device__ __forceinline__ void stv(double* p, const double r[2]) {
    *reinterpret_cast<double2*>(p) = make_double2(r[0], r[1]);
}

// Instantiates `name##_f32` and `name##_f64` from a template kernel `name<T>`:
// NDGPU_INSTANTIATE(kernel, (params with T), (args)) is written per file where needed.

// cp.async groups (sm_80+): close the group of copies issued so far; wait until at most
// N groups are still in flight.
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Upper tile number id (column by column: (0,0), (0,1), (1,1), (0,2), ...) → (bi ≤ bj).
__device__ __forceinline__ void upper_tile(int id, int& bi, int& bj) {
    int j = (int)((sqrt(8.0 * (double)id + 1.0) - 1.0) * 0.5);
    while ((i64)j * (j + 1) / 2 > id) --j;  // guard against rounding of the root
    while ((i64)(j + 1) * (j + 2) / 2 <= id) ++j;
    bj = j;
    bi = id - (int)((i64)j * (j + 1) / 2);
}
