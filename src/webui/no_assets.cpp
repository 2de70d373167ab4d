// Built without the web UI (-DHEARTH_WEBUI=OFF): nothing is embedded.
#include "webui/embedded_assets.h"

namespace hearth::webui {

std::span<const Asset> embedded_assets() {
  return {};
}

}  // namespace hearth::webui
