//===- CEnum.h - enum fields as C callers fill them -------------*- C++ -*-===//
//
// A C caller may store any int in an enum field of tk.h's structs. Reading
// an out-of-range value through the C++ enum type is undefined behaviour
// (UBSan's -fsanitize=enum reports it), so the runtime reads such fields as
// the integers they are and checks them before trusting them.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_CENUM_H_
#define TK_RUNTIME_CENUM_H_

#include <cstring>
#include <type_traits>

namespace tk::runtime {

/// The integer a C caller stored in `field`, whatever it is.
template <typename Enum> long long rawEnumValue(const Enum &field) {
  static_assert(std::is_enum_v<Enum>);
  std::underlying_type_t<Enum> value;
  std::memcpy(&value, &field, sizeof(value));
  return static_cast<long long>(value);
}

} // namespace tk::runtime

#endif // TK_RUNTIME_CENUM_H_
