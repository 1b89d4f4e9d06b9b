// reduce.cu (being written)
#include "common.cuh"
