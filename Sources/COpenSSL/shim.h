// OpenSSL's libcrypto: SHA-256 and SHA-1 for PoiDigest. The one-context digest calls
// (SHA256_Init/Update/Final) are deprecated in OpenSSL 3 in favour of EVP, but kept and fast: the
// context lives on the caller's stack, where EVP allocates one and looks the algorithm up per
// digest, and PoiKit hashes once per imported record (PoiDigest/README.md).
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
