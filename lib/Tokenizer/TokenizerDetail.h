//===- TokenizerDetail.h - Shared by loader and encoders --------*- C++ -*-===//
#ifndef QTENSOR_LIB_TOKENIZER_TOKENIZERDETAIL_H
#define QTENSOR_LIB_TOKENIZER_TOKENIZERDETAIL_H

#include <cstdint>

namespace qtensor::tokenizer_detail {

/// llama.cpp's llama_token_attr bits that the tokenizers look at.
enum TokenAttr : uint8_t {
  AttrUndefined = 0,
  AttrUnknown = 1 << 0,
  AttrUnused = 1 << 1,
  AttrNormal = 1 << 2,
  AttrControl = 1 << 3,
  AttrUserDefined = 1 << 4,
  AttrByte = 1 << 5,
};

} // namespace qtensor::tokenizer_detail

#endif // QTENSOR_LIB_TOKENIZER_TOKENIZERDETAIL_H
