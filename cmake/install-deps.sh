#!/bin/sh
# Installs the Debian packages listed in cmake/debian-packages.txt (or in the list given as
# the argument, e.g. cmake/debian-packages-hardening.txt) that are missing.
# Runs apt-get (and `apt-get update` first) only when something is missing; as root
# directly, otherwise through sudo when it is available.
set -eu

list="${1:-$(dirname "$0")/debian-packages.txt}"
packages=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: no dpkg-query (not Debian?); make sure these are installed:" $packages >&2
    exit 0
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all $(echo $packages | wc -w) packages of $list are installed"
    exit 0
fi

echo "install-deps: installing$missing"
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: not root and no sudo; as root run: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
# shellcheck disable=SC2086  # $missing is a list of words
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
