// The web chat page's files (built from webui/ with Vite at build time), embedded in the
// binary gzip-compressed. Built with -DHEARTH_WEBUI=OFF the list is empty and the server
// reports `ui: false` unless --path serves a directory.
#pragma once

#include <span>
#include <string_view>

namespace hearth::webui {

struct Asset {
  std::string_view name;          // path under the UI root: "index.html", "assets/index-x1.js"
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view gzip_data;     // the file, gzip-compressed
  std::string_view etag;          // a quoted hash of the file
};

std::span<const Asset> embedded_assets();

}  // namespace hearth::webui
