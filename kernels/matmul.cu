// matmul.cu (being written)
#include "common.cuh"
