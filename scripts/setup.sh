#!/usr/bin/env bash
# Installs the Debian packages Hearth builds and tests with. Idempotent: does nothing
# when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  clang clang-format libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libspdlog-dev nlohmann-json3-dev libpcre2-dev libicu-dev libcli11-dev libhwy-dev libboost-dev
  libcurl4-openssl-dev libssl-dev
  # Images: stb_image decodes PNG/JPEG/GIF/BMP as the reference does (issue 35); zlib measures
  # a PNG's inflated size before stb_image allocates it.
  libstb-dev zlib1g-dev
  # Audio: MP3 through libmpg123 and FLAC through libFLAC (the reference vendors miniaudio's
  # dr_mp3 and dr_flac; WAV is parsed here).
  libmpg123-dev libflac-dev
  python3 python3-jsonschema python3-jinja2
  # The download tests draw the progress bar in tmux; the web UI tests drive Chromium.
  tmux chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm builds the web UI and fetches test data; the machine's own Node.js is fine if present.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
