/* The fuzz build's own copy of Debian's stb_image implementation (the same header libstb.so
   is built from), compiled with coverage and the sanitizers so that image_fuzz sees inside the
   decoder. Its symbols, defined in the executable, take precedence over libstb.so's. */
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
