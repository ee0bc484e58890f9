// hipr-test-pki DIR: writes the test PKI (test_pki.h) into DIR, for e2e
// scenarios. Prints nothing on success.
#include <cstdio>

#include "tests/support/test_pki.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hipr-test-pki DIR\n");
    return 2;
  }
  hipr::test::TestPki pki;
  hipr::Status st = hipr::test::MakeTestPki(argv[1], &pki);
  if (!st.ok()) {
    std::fprintf(stderr, "hipr-test-pki: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
