/* libwebp (Debian libwebp-dev): thumbnails written as lossy WebP by CCodecs/webp_codec.c. The
 * decoder header is here for the tests, which check what the encoder wrote (WebPGetFeatures,
 * WebPDecodeRGBA); PoiKit itself never decodes WebP. */
#include <webp/decode.h>
#include <webp/encode.h>
