// -lm / --load-mode and the deprecated --mlock, --mmap/--no-mmap and -dio/-ndio, which the
// reference keeps as aliases that set the same load mode (each logs a deprecation warning).
// Whichever is given last wins; giving -lm and an alias on the command line logs one more
// warning, as the reference does.
#include <string>

#include "base/load_mode.h"
#include "server/options/option_handlers.h"

namespace hearth::server::options {
namespace {

// Records where the mode came from and warns once about a mix on the command line (the
// reference looks at the command line only, not the environment).
void note_source(const OptionInput& in, ParseState& st, bool alias) {
  if (in.from_env) return;
  const bool mixed_before = st.load_mode_given && st.load_alias_given;
  (alias ? st.load_alias_given : st.load_mode_given) = true;
  if (!mixed_before && st.load_mode_given && st.load_alias_given) {
    st.warnings.push_back(
        "DEPRECATED: `--load-mode` and `--mlock`/`--mmap`/`--direct-io` should not be combined; "
        "only the last flag on the command line will take effect");
  }
}

Status set_alias(const OptionInput& in, ParseState& st, LoadMode mode, std::string warning) {
  st.warnings.push_back(std::move(warning));
  st.args.load_mode = mode;
  note_source(in, st, /*alias=*/true);
  return Status::ok();
}

}  // namespace

Status handle_load_mode(const OptionInput& in, ParseState& st) {
  const std::optional<LoadMode> mode = load_mode_from_name(in.value);
  if (!mode) {
    return invalid_value("unknown load mode '" + std::string(in.value) +
                         "' (expected auto, none, mmap, mlock, mmap+mlock or dio)");
  }
  st.args.load_mode = *mode;
  note_source(in, st, /*alias=*/false);
  return Status::ok();
}

Status handle_mlock(const OptionInput& in, ParseState& st) {
  return set_alias(in, st, LoadMode::kMlock,
                   "DEPRECATED: --mlock is deprecated. use --load-mode mlock instead");
}

Status handle_mmap(const OptionInput& in, ParseState& st) {
  return set_alias(in, st, in.enabled ? LoadMode::kMmap : LoadMode::kNone,
                   "DEPRECATED: --mmap and --no-mmap are deprecated. use --load-mode mmap instead");
}

Status handle_direct_io(const OptionInput& in, ParseState& st) {
  return set_alias(in, st, in.enabled ? LoadMode::kDirectIo : LoadMode::kNone,
                   "DEPRECATED: --direct-io and --no-direct-io are deprecated. use --load-mode "
                   "dio instead");
}

std::string show_load_mode(const ServerArgs& args) {
  return std::string(load_mode_name(args.load_mode));
}

}  // namespace hearth::server::options
