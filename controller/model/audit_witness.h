#pragma once
// An AuditWitness: a transparency-log witness (c2sp.org/tlog-witness), on another host,
// that cosigns the journal's checkpoints once it has checked that each extends the last
// one it cosigned. `gpufed audit witness` is one; any tlog-witness speaks the protocol.
#include <string>

#include "controller/model/audit_sink.h"
#include "controller/model/meta.h"

namespace gpufed::model {

struct AuditWitness {
  ObjectMeta metadata;
  std::string url;   // https://host:port[/prefix]; requests go to <url>/add-checkpoint
  std::string vkey;  // the witness's verifier key: NAME+KEYID+base64(0x04 || Ed25519 key)
  TlsFiles tls;      // caFile (the witness's CA), certFile/keyFile (this controller's client certificate)
};

}  // namespace gpufed::model
