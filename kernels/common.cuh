// common.cuh: helpers shared by every kernel file. Handed to NVRTC as an in-memory
// header; no system headers are available (NVRTC has no C++ standard library).
#pragma once

typedef long long i64;
typedef unsigned int u32;

// Largest finite values, for min/max identities.
#define NDGPU_F32_MAX 3.402823466e+38f
#define NDGPU_F64_MAX 1.7976931348623157e+308

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

// Instantiates `name##_f32` and `name##_f64` from a template kernel `name<T>`:
// NDGPU_INSTANTIATE(kernel, (params with T), (args)) is written per file where needed.
