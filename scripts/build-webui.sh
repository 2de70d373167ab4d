#!/usr/bin/env bash
# Builds the web chat page (webui/, Preact + Vite) and writes the C++ source that embeds it.
# Called by CMake at build time: build-webui.sh OUT_DIR -> OUT_DIR/dist, OUT_DIR/webui_assets.cpp.
# npm installs exactly the lockfile's packages, once per lockfile change, with its download
# cache under ${HEARTH_TEST_CACHE_DIR:-<repo>/.cache}/npm-cache.
set -euo pipefail

out_dir=$1
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_dir="${HEARTH_TEST_CACHE_DIR:-${repo_root}/.cache}"
cd "${repo_root}/webui"

stamp=node_modules/.hearth-lockfile-sha256
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -f "${stamp}" || "$(cat "${stamp}")" != "${lock_sum}" ]]; then
  echo "build-webui: installing the front end's packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error --cache "${cache_dir}/npm-cache"
  echo "${lock_sum}" > "${stamp}"
fi

mkdir -p "${out_dir}"
npx --no-install vite build --outDir "${out_dir}/dist" --emptyOutDir --logLevel warn
python3 "${repo_root}/scripts/embed-webui.py" "${out_dir}/dist" "${out_dir}/webui_assets.cpp"
