//===- Handle.cpp - the quarantine of released handles --------------------===//
//
// Released handle objects wait in a FIFO before they are freed, so that the
// common use-after-release is detected rather than undefined.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Handle.h"

#include <deque>
#include <mutex>

using namespace tk::runtime;

HandleObject::~HandleObject() = default;

namespace {
/// A bounded FIFO of released objects. Only release takes its lock; lookups
/// read the magic and never touch the quarantine.
struct Quarantine {
  std::mutex mutex;
  std::deque<std::unique_ptr<HandleObject>> objects;
};
} // namespace

static Quarantine &getQuarantine() {
  // Leaked on purpose: handles released from static destructors of other
  // libraries must still find it alive.
  static Quarantine *quarantine = new Quarantine();
  return *quarantine;
}

void HandleObject::retire(std::unique_ptr<HandleObject> object) {
  object->magic.store(0, std::memory_order_relaxed);
  std::unique_ptr<HandleObject> evicted;
  {
    Quarantine &quarantine = getQuarantine();
    std::lock_guard<std::mutex> lock(quarantine.mutex);
    quarantine.objects.push_back(std::move(object));
    if (quarantine.objects.size() > kQuarantineSize) {
      evicted = std::move(quarantine.objects.front());
      quarantine.objects.pop_front();
    }
  }
  // Freed outside the lock: a destructor may be slow.
}
