// gram.cu (being written)
#include "common.cuh"
