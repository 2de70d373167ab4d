// The web UI routes (other-native-routes.md section 19): the embedded page at <prefix>/,
// <prefix>/index.html and <prefix>/<asset>, or the files of --path instead. The embedded
// page and --path's index are public (no API key) and answer while the model loads.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "server/config/ui_config.h"
#include "server/http/http.h"
#include "webui/embedded_assets.h"

namespace hearth::server {

// Which UI paths a call serves. Before the API key and loading checks (kPublic): the
// embedded page's files, and --path's index at / and /index.html, as the reference exempts
// them. After those checks (kChecked): --path's other files.
enum class UiAccess { kPublic, kChecked };

// The response for a UI path (`path` is after the API prefix), or nullopt when the request
// is not for the UI at this stage and goes on.
std::optional<http::Response> serve_ui(const UiConfig& ui, const http::Request& request,
                                       const std::string& path, UiAccess access);

}  // namespace hearth::server
