//===- GGUFJson.h - GGUF metadata values as JSON ----------------*- C++ -*-===//
//
// A metadata value as JSON, for inspection and reports: strings, booleans
// and numbers as themselves, arrays element by element, an array longer
// than `arrayPreview` summarized as {"array_of": TYPE, "length": N} (a
// vocabulary of 150k strings is not printed).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFJSON_H
#define QTENSOR_FORMATS_GGUFJSON_H

#include "qtensor/Formats/GGUF.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace qtensor {

nlohmann::json ggufValueToJson(const GGUFValue &value,
                               uint64_t arrayPreview = 16);

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFJSON_H
