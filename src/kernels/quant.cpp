#include "kernels/quant.h"
