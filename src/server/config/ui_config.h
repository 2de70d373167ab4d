// The web UI's configuration: --ui and --path as given (the option rows name these members;
// the initializers are the options' defaults) and the embedded page.
#pragma once

#include <span>
#include <string>

namespace hearth::webui {
struct Asset;
}

namespace hearth::server {

struct UiConfig {
  bool enabled = true;      // --ui / --no-ui
  std::string static_path;  // --path: serve this directory instead
  // Not an option: the embedded page (empty: built without it).
  std::span<const webui::Asset> assets;

  // Whether anything is served at / (what /props reports as `ui`).
  bool serving() const { return enabled && (!static_path.empty() || !assets.empty()); }

  bool operator==(const UiConfig& o) const {
    return enabled == o.enabled && static_path == o.static_path &&
           assets.data() == o.assets.data() && assets.size() == o.assets.size();
  }
};

}  // namespace hearth::server
