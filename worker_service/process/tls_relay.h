// TlsRelay: how a session resumed over TLS reaches its session process.
//
// A TLS connection's keys live in the process that did its handshake, and
// cannot move to another. So a resuming hello over TLS does not hand its
// socket to the session it resumes (resume_door.h) as plain tcp does: the
// process that took it knocks with one end of a socket pair and stays,
// carrying bytes between the client's TLS connection and the other end
// until either side ends. The session's link (protocol/resumable_link.h)
// runs over the socket pair as over any connection; the byte counts that
// make every frame arrive once are the session's and the client's, so what
// the relay had in hand when a side dropped is simply sent again after the
// next resume.
//
// While it lives a relay holds a session slot of its own (--max-sessions),
// in the ledger's phase kRelay.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/status.h"
#include "protocol/tls/tls_connection.h"

namespace hipr::worker {

// Carries bytes both ways between `tls` and the stream socket `fd` until
// either side closes or fails, then shuts both down and returns what ended
// it (for the log). Blocks; uses one more thread.
Status RelayTls(tls::TlsConnection& tls, int fd);

}  // namespace hipr::worker
