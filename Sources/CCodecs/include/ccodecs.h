/* CCodecs: the only hand-written C in PoiKit.
 * Owns: setjmp-guarded calls into libjpeg-turbo and libpng, so a longjmp never crosses a Swift frame.
 * Must not: know about files, MongoDB or Swift types. */
#ifndef CCODECS_H
#define CCODECS_H
const char *ccodecs_libjpeg_turbo_version(void);
const char *ccodecs_libpng_version(void);
#endif
