/* libdeflate (Debian libdeflate-dev): CCodecs/png_codec.c inflates a PNG's image data in one call
 * with it when the whole buffer fits the image's memory reservation. */
#include <libdeflate.h>
