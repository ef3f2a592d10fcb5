#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H
/* SHA2Hasher keeps its own SHA256_CTX/SHA512_CTX (copied to share a prefix, wiped when done), which
   only the low-level interface offers; OpenSSL 3 marks it deprecated but keeps it. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#endif
