// Length-delimited protobuf encoding, the framing of the messages in an ET file.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <string>

namespace stg_test {

// Appends `v` as a base-128 varint.
inline void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Appends `m` serialized, preceded by its length as a varint.
inline void append_delimited(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string bytes = m.SerializeAsString();
  append_varint(out, bytes.size());
  out += bytes;
}

}  // namespace stg_test
