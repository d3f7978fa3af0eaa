#!/usr/bin/env bash
# release.sh: build warden's release archives and npm packages.
#
#   scripts/release.sh [--platforms "linux/amd64 darwin/arm64 ..."] [--out DIR] VERSION
#
# For each platform (default: linux and darwin, amd64 and arm64) it builds
# warden, warden-hook and warden-sandbox with the version and the commit
# embedded, and writes into DIR (default dist/):
#   warden_VERSION_OS_ARCH.tar.gz   the three binaries, LICENSE and README.md
#   SHA256SUMS                      the archives' and the npm tarballs' sums
#   npm/warden-run-warden-OS-CPU-VERSION.tgz   one npm package per platform
#   npm/warden-run-warden-VERSION.tgz          the package users install: its
#                                   bin runs the platform package's binary
# VERSION is a semantic version (1.2.3 or v1.2.3; npm gets it without the v).
# The build is reproducible: -trimpath, no cgo, the commit time as mtime.
set -euo pipefail
cd "$(dirname "$0")/.."

platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --platforms) platforms="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "release.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 1 ]; then echo "release.sh: give one VERSION, for example 0.3.0 (see --help)" >&2; exit 2; fi
version="${1#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: VERSION $1 is not a semantic version such as 1.2.3 or 1.2.3-rc.1" >&2; exit 2
fi
for p in $platforms; do
  case "$p" in linux/amd64|linux/arm64|darwin/amd64|darwin/arm64) ;; *)
    echo "release.sh: platform $p is not one of linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" >&2; exit 2 ;;
  esac
done

commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
mkdir -p "$out/npm"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ldflags="-s -w -X github.com/warden-run/warden/internal/cli.Version=v$version -X github.com/warden-run/warden/internal/cli.Commit=$commit"

npmcpu() { case "$1" in amd64) echo x64 ;; *) echo "$1" ;; esac; }

for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  stage="$work/warden_${version}_${os}_${arch}"
  mkdir -p "$stage"
  for cmd in warden warden-hook warden-sandbox; do
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/$cmd" "./cmd/$cmd"
  done
  cp LICENSE README.md "$stage/"
  touch -d "@$mtime" "$stage"/*
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    -czf "$out/warden_${version}_${os}_${arch}.tar.gz" "$(basename "$stage")"
  echo "release.sh: $out/warden_${version}_${os}_${arch}.tar.gz"

  # The platform's npm package: the binaries and a package.json whose os
  # and cpu fields make npm install it only on its platform.
  cpu=$(npmcpu "$arch")
  pkg="$work/npm-$os-$cpu"
  mkdir -p "$pkg/bin"
  cp "$stage/warden" "$stage/warden-hook" "$stage/warden-sandbox" "$pkg/bin/"
  sed -e "s/@VERSION@/$version/g" -e "s/@OS@/$os/g" -e "s/@CPU@/$cpu/g" npm/platform/package.json > "$pkg/package.json"
  cp npm/platform/README.md "$pkg/README.md"
  (cd "$pkg" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
done

# The package users install: a launcher and the platform packages as
# optional dependencies (npm installs the one that matches os and cpu).
main="$work/npm-main"
mkdir -p "$main/bin"
cp npm/warden/bin/*.js "$main/bin/"
cp npm/warden/README.md "$main/README.md"
cp LICENSE "$main/LICENSE"
sed -e "s/@VERSION@/$version/g" npm/warden/package.json > "$main/package.json"
(cd "$main" && npm pack --silent --pack-destination "$out/npm" >/dev/null)

(cd "$out" && sha256sum ./*.tar.gz npm/*.tgz | sed 's# \./# #' > SHA256SUMS)
echo "release.sh: $out/SHA256SUMS"
