/* Little CMS 2 (Debian liblcms2-dev): colour conversion of decoded pixels, used by CCodecs only. */
#include <lcms2.h>
