/* jpeglib.h needs FILE and size_t declared before it is included. */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
