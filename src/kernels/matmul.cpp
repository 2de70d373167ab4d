#include "kernels/matmul.h"
