// transpose.cu (being written)
#include "common.cuh"
