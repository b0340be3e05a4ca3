//===- TritonMetadata.cpp - the options Triton compiled a kernel with -----===//

#include "tk/ttir/TritonMetadata.h"

#include "llvm/Support/JSON.h"

using llvm::FailureOr;

FailureOr<tk::ttir::TritonMetadata>
tk::ttir::parseTritonMetadata(llvm::StringRef json, std::string &error) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value) {
    error = "Triton's metadata is not JSON: " + toString(value.takeError());
    return llvm::failure();
  }
  const llvm::json::Object *object = value->getAsObject();
  if (!object) {
    error = "Triton's metadata is not a JSON object";
    return llvm::failure();
  }
  TritonMetadata metadata;
  for (auto [key, out] : {std::pair{"num_warps", &metadata.numWarps},
                          std::pair{"num_stages", &metadata.numStages}}) {
    const llvm::json::Value *field = object->get(key);
    if (!field)
      continue;
    std::optional<int64_t> count = field->getAsInteger();
    if (!count || *count < 1 || *count > 1024) {
      error = std::string("Triton's metadata has ") + key +
              " that is not a whole number from 1 to 1024";
      return llvm::failure();
    }
    *out = static_cast<int>(*count);
  }
  return metadata;
}
