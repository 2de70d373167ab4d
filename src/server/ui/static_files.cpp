#include "server/ui/static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace hearth::server {

namespace fs = std::filesystem;

namespace {

// Files the page revalidates on every load; other assets have hashed names and never change.
constexpr std::string_view kRevalidated[] = {"index.html", "sw.js", "manifest.webmanifest",
                                             "_app/version.json", "build.json"};

// The types scripts/embed-webui.py gives the embedded files, for --path's files.
std::string content_type_of(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html" || ext == ".htm") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "application/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json; charset=utf-8";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  if (ext == ".webmanifest") return "application/manifest+json";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".wasm") return "application/wasm";
  return "application/octet-stream";
}

http::Response text_response(int status, std::string text) {
  http::Response r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(text);
  return r;
}

bool accepts_gzip(const http::Request& request) {
  return request.header("Accept-Encoding").value_or("").find("gzip") != std::string::npos;
}

const webui::Asset* find_asset(std::span<const webui::Asset> assets, std::string_view name) {
  for (const webui::Asset& a : assets)
    if (a.name == name) return &a;
  return nullptr;
}

// An embedded asset, as the reference serves its bundle: gzip only (415 otherwise), an
// ETag answered with 304, cache headers by name, and cross-origin isolation for the index.
http::Response embedded_response(const webui::Asset& asset, const http::Request& request) {
  if (!accepts_gzip(request))
    return text_response(415, "Error: gzip is not supported by this browser");
  http::Response r;
  r.headers.emplace_back("Content-Encoding", "gzip");
  r.headers.emplace_back("ETag", std::string(asset.etag));
  const std::string inm = request.header("If-None-Match").value_or("");
  if (!inm.empty() && (inm == asset.etag || inm == "W/" + std::string(asset.etag))) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  const bool index = asset.name == "index.html";
  if (index) {
    r.headers.emplace_back("Cross-Origin-Embedder-Policy", "require-corp");
    r.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
  }
  bool revalidated = false;
  for (std::string_view name : kRevalidated) revalidated = revalidated || asset.name == name;
  r.headers.emplace_back("Cache-Control",
                         revalidated ? "no-cache" : "public, max-age=31536000, immutable");
  r.content_type = std::string(asset.content_type);
  r.body = std::string(asset.gzip_data);
  return r;
}

// A file under --path; nullopt when there is none (the API routes come next). Paths with
// ".." or other escapes never leave the directory.
std::optional<http::Response> static_file(const std::string& root, const std::string& path) {
  const fs::path relative = fs::path(path.substr(1)).lexically_normal();
  if (!relative.empty() && (*relative.begin() == ".." || relative.is_absolute()))
    return std::nullopt;
  fs::path file = fs::path(root) / relative;
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "index.html";
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  http::Response r;
  r.content_type = content_type_of(file);
  r.body = content.str();
  return r;
}

}  // namespace

std::optional<http::Response> serve_ui(const UiConfig& ui, const http::Request& request,
                                       const std::string& path, UiAccess access) {
  if (!ui.serving() || (request.method != "GET" && request.method != "HEAD")) return std::nullopt;
  if (path.empty() || path.front() != '/') return std::nullopt;
  if (!ui.static_path.empty()) {
    const bool index = path == "/" || path == "/index.html";
    if (index != (access == UiAccess::kPublic)) return std::nullopt;
    return static_file(ui.static_path, path);
  }
  if (access != UiAccess::kPublic) return std::nullopt;
  const std::string_view name =
      path == "/" ? std::string_view("index.html") : std::string_view(path).substr(1);
  const webui::Asset* asset = find_asset(ui.assets, name);
  if (asset == nullptr) return std::nullopt;
  return embedded_response(*asset, request);
}

}  // namespace hearth::server
