// cholesky.cu (being written)
#include "common.cuh"
