// kmeans.cu (being written)
#include "common.cuh"
