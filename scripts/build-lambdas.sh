#!/usr/bin/env bash
# build-lambdas.sh — build every Lambda function of functions/ (all but
# functions/local) as a `bootstrap` binary for the provided.al2023 runtime.
#
#   scripts/build-lambdas.sh [arm64|amd64]              every function into .aws-build/<name>/bootstrap
#   scripts/build-lambdas.sh --out DIR [arm64|amd64]    every function into DIR/<name>/bootstrap
#   scripts/build-lambdas.sh --function ID --out DIR    one function into DIR/bootstrap (for `sam build`;
#                                                       ID is the folder name or the template's LogicalId,
#                                                       e.g. sessions-list or SessionsList)
#
# The architecture defaults to $GOARCH_LAMBDA, else arm64 (the template's).
# Flags are reproducible: CGO_ENABLED=0, -trimpath, -buildvcs=false,
# -ldflags '-s -w -buildid=', -tags lambda.norpc. One `go build` builds all
# the functions, so packages compile once and binaries link in parallel.
set -euo pipefail

usage() {
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
}

arch="${GOARCH_LAMBDA:-arm64}"
out=""
only=""
while [ $# -gt 0 ]; do
	case "$1" in
	arm64 | amd64) arch="$1" ;;
	--arch)
		arch="${2:?--arch needs arm64 or amd64}"
		shift
		;;
	--out)
		out="${2:?--out needs a directory}"
		shift
		;;
	--function)
		only="${2:?--function needs a name}"
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "build-lambdas: unknown argument '$1'" >&2
		usage >&2
		exit 2
		;;
	esac
	shift
done
case "$arch" in
arm64 | amd64) ;;
*)
	echo "build-lambdas: architecture must be arm64 or amd64, got '$arch'" >&2
	exit 2
	;;
esac
command -v go >/dev/null || {
	echo "build-lambdas: go is not on PATH (Go 1.26 is required)" >&2
	exit 1
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# camel turns a folder name into its template LogicalId: sessions-list -> SessionsList.
camel() {
	awk -F- '{ for (i = 1; i <= NF; i++) printf "%s%s", toupper(substr($i, 1, 1)), substr($i, 2); print "" }' <<<"$1"
}

names=()
for dir in functions/*/; do
	name="$(basename "$dir")"
	[ "$name" = local ] && continue
	[ -f "$dir/main.go" ] || continue
	if [ -n "$only" ] && [ "$only" != "$name" ] && [ "$only" != "$(camel "$name")" ]; then
		continue
	fi
	names+=("$name")
done
if [ ${#names[@]} -eq 0 ]; then
	if [ -n "$only" ]; then
		echo "build-lambdas: no function '$only' in functions/ (give a folder name or its LogicalId)" >&2
	else
		echo "build-lambdas: no function in functions/" >&2
	fi
	exit 1
fi

if [ -z "$out" ]; then
	[ -n "$only" ] && {
		echo "build-lambdas: --function needs --out (sam passes \$ARTIFACTS_DIR)" >&2
		exit 2
	}
	out=".aws-build"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

pkgs=()
for name in "${names[@]}"; do pkgs+=("./functions/$name"); done

start=$(date +%s)
CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
	go build -trimpath -tags lambda.norpc -ldflags='-s -w -buildid=' -o "$tmp/" "${pkgs[@]}"

limit=$((26 * 1024 * 1024))
over=0
for name in "${names[@]}"; do
	if [ -n "$only" ]; then
		dest="$out/bootstrap"
	else
		mkdir -p "$out/$name"
		dest="$out/$name/bootstrap"
	fi
	mv -f "$tmp/$name" "$dest"
	size=$(wc -c <"$dest" | tr -d ' ')
	if [ "$size" -gt "$limit" ]; then
		over=1
		echo "build-lambdas: $name is $size bytes, over the 26 MB budget (internal/deploy MaxBootstrapBytes)" >&2
	fi
	printf '%-24s %6.2f MB  %s\n' "$name" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" "${dest#"$root"/}"
done

if [ "$out" = "$root/.aws-build" ]; then
	# Drop the binaries of functions that no longer exist.
	for dir in "$out"/*/; do
		name="$(basename "$dir")"
		[ -d "functions/$name" ] || rm -rf "$dir"
	done
fi
echo "built ${#names[@]} function(s) for linux/$arch in $(($(date +%s) - start))s"
exit $over
