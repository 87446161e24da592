//===- Tokenize.h - `qtc tokenize` ------------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_TOKENIZE_H
#define QTENSOR_TOOLS_QTC_TOKENIZE_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc tokenize FILE.gguf --text TEXT [--add-special]
/// [--json]`: the token ids of TEXT under the file's tokenizer
/// (docs/tokenizer.md); returns the process exit status.
int runTokenize(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_TOKENIZE_H
