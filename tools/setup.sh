#!/usr/bin/env bash
# Install the Debian packages listed in tools/packages.txt that are missing, and the
# pinned axe-core for the accessibility check. Does nothing when everything is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
missing=()
while read -r package; do
  [[ -z "$package" || "$package" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done < "$here/packages.txt"
if ((${#missing[@]} > 0)); then
  echo "Installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    else
      echo "error: these Debian packages are missing and this user cannot install them: ${missing[*]}" >&2
      echo "Run as root: apt-get install ${missing[*]}" >&2
      exit 1
    fi
  else
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi

# axe-core, the accessibility engine of the browser check (tools/browser/accessibility.py), from
# the npm registry, pinned to one version, into tools/node_modules (ignored by git). The
# check injects the file into each page itself: the book never loads it.
axe_version="4.10.2"
axe_package="$here/node_modules/axe-core/package.json"
if ! grep -q "\"version\": \"$axe_version\"" "$axe_package" 2>/dev/null; then
  if ! command -v npm >/dev/null; then
    echo "Installing the Debian package npm (for axe-core)"
    if [[ $(id -u) -ne 0 ]]; then sudo apt-get install -y -qq npm; else apt-get install -y -qq npm; fi
  fi
  echo "Installing axe-core $axe_version from the npm registry into tools/node_modules"
  npm install --prefix "$here" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "axe-core@$axe_version"
fi
