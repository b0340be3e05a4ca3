//===- Event.cpp - a marker in a stream's work ----------------------------===//
//
// Event creation, recording, waiting and timing through the plugin, with
// the checks the plugin should not have to make: a plugin without events,
// events of two devices, timing an event that was never recorded.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Event.h"

#include <memory>

using namespace tk::runtime;

Status Event::create(Device &device, Event **out) {
  Plugin &plugin = device.getPlugin();
  if (!plugin.hasEvents())
    return Status(TK_ERROR_UNSUPPORTED,
                  "backend '" + plugin.getName() +
                      "' has no events (its plugin predates ABI 1.2)");
  void *native = nullptr;
  tk_status code = device.getApi().event_create(device.getIndex(), &native);
  if (code != TK_SUCCESS)
    return plugin.makeError(code, "event_create");
  *out = new Event(device, native);
  return Status::success();
}

Status Event::release(Event *event) {
  std::unique_ptr<HandleObject> object(event);
  Device &device = event->device;
  Status status;
  tk_status code =
      device.getApi().event_destroy(device.getIndex(), event->native);
  if (code != TK_SUCCESS)
    status = device.getPlugin().makeError(code, "event_destroy");
  event->native = nullptr;
  retire(std::move(object));
  return status;
}

Status Event::record(Stream *stream) {
  if (stream && &stream->getDevice() != &device)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "tk_event_record: the event and the stream belong to "
                  "different devices");
  tk_status code = device.getApi().event_record(
      device.getIndex(), native, stream ? stream->getNative() : nullptr);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "event_record");
  recorded = true;
  return Status::success();
}

Status Event::synchronize() {
  if (!recorded)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "tk_event_synchronize: the event was never recorded");
  tk_status code = device.getApi().event_synchronize(device.getIndex(), native);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "event_synchronize");
  return Status::success();
}

Status Event::elapsedMs(Event &start, Event &end, float &out) {
  if (&start.device != &end.device)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "tk_event_elapsed_ms: the events belong to different "
                  "devices");
  if (!start.recorded || !end.recorded)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  std::string("tk_event_elapsed_ms: the ") +
                      (start.recorded ? "end" : "start") +
                      " event was never recorded");
  Device &device = start.device;
  tk_status code = device.getApi().event_elapsed_ms(
      device.getIndex(), start.native, end.native, &out);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "event_elapsed_ms");
  return Status::success();
}
