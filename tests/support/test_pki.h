// A throw-away public key infrastructure for tests: two certificate
// authorities (the one the worker's certificate comes from, and another
// one a client may wrongly trust), a worker certificate for 127.0.0.1, ::1
// and localhost, and client certificates. Keys are ECDSA P-256; everything
// is written as PEM under one directory. Also the `hipr-test-pki DIR` tool
// that e2e scenarios run.
#pragma once

#include <string>

#include "protocol/status.h"

namespace hipr::test {

struct TestPki {
  std::string ca;             // The CA that signed server and client.
  std::string other_ca;       // A CA that signed nothing here.
  std::string server_cert, server_key;
  std::string client_cert, client_key;  // CN=tenant-a, from `ca`.
  std::string stranger_cert, stranger_key;  // CN=stranger, from `other_ca`.
  std::string long_client_cert, long_client_key;  // CN=kLongCommonName, from `ca`.
};

// A common name of 90 characters (X.509 says at most 64; CAs issue longer).
inline constexpr const char* kLongCommonName =
    "tenant-with-a-common-name-much-longer-than-x509-allows-0123456789-abcdefghijklmnopqrstuvwx";

// Writes a fresh PKI into `dir` (created if missing).
Status MakeTestPki(const std::string& dir, TestPki* out);

}  // namespace hipr::test
