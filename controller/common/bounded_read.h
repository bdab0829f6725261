#pragma once
// Reading a whole file into memory with a limit on its size: every file gpufed reads
// whole (a repository's resources, the run config, a kubeconfig, a sim scenario) may be
// written by someone other than the operator, or be the wrong file (a device, a FIFO, a
// log that keeps growing), and must not make the controller read without end.
#include <cstddef>
#include <string>

#include "controller/common/status.h"

namespace gpufed {

// The contents of the file at `path`, at most `max_bytes` of them: NotFound when it cannot
// be opened, InvalidArgument when it is not a regular file (a folder, a FIFO, a device),
// ResourceExhausted when it holds more than `max_bytes` (read no further than one byte past
// the limit, so a file that grows while it is read is refused too). The messages do not
// name the file: every caller does, as its diagnostics do ("cannot read: No such file or
// directory", "not a regular file", "file is N bytes, above the limit of M").
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

}  // namespace gpufed
