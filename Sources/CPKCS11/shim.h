#ifndef CPKCS11_SHIM_H
#define CPKCS11_SHIM_H
/* PKCS#11 v2.40 types and constants from p11-kit (Debian libp11-kit-dev); the module itself is
   dlopen'ed at run time, so nothing here is linked. */
#include <p11-kit/pkcs11.h>
#endif
